import type { PipelineSettings, SettingsReader } from '../settings.js';
import { kAnalyzeModes, type AnalyzeMode } from './decompose.js';

/** The analyze pipeline's settings, from init's flags or session.json. */
export interface AnalyzeSettings extends PipelineSettings {
  /** `mode`: how many discussion rounds the gate allows (kAnalyzeModes). @default standard */
  mode: AnalyzeMode;
}

export function analyzeSettings(reader: SettingsReader): AnalyzeSettings {
  return { topic: reader.topic(true), mode: reader.choice('mode', Object.keys(kAnalyzeModes) as AnalyzeMode[], 'standard') };
}
