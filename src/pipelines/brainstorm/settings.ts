import type { PipelineSettings, SettingsReader } from '../settings.js';
import { kBrainstormModes, type BrainstormMode } from './decompose.js';

/** @default 2 generator-critic rounds */
export const kDefaultMaxGcRounds = 2;

/** The brainstorm pipeline's settings, from init's flags or session.json. */
export interface BrainstormSettings extends PipelineSettings {
  /** `mode`: how much `init` laid out. @default full */
  mode: BrainstormMode;
  /** `max_gc_rounds`: generator-critic rounds before the GC controller stops revising. */
  maxGcRounds: number;
}

export function brainstormSettings(reader: SettingsReader): BrainstormSettings {
  return {
    topic: reader.topic(true),
    mode: reader.choice('mode', kBrainstormModes, 'full'),
    maxGcRounds: reader.count('maxGcRounds', kDefaultMaxGcRounds),
  };
}
