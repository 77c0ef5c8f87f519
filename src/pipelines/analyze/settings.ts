import type { SessionConfig } from '../../schema/session.js';
import { modeSetting, topicSetting, type PipelineSettings } from '../settings.js';
import { kAnalyzeModes, type AnalyzeMode } from './decompose.js';

/** The analyze pipeline's settings from session.json. */
export interface AnalyzeSettings extends PipelineSettings {
  /** `mode`: how many discussion rounds the gate allows (kAnalyzeModes). @default standard */
  mode: AnalyzeMode;
}

export function analyzeSettings(config: SessionConfig): AnalyzeSettings {
  return { ...topicSetting(config), mode: modeSetting(config, 'analyze', Object.keys(kAnalyzeModes) as AnalyzeMode[], 'standard') };
}
