import type { SessionConfig } from '../../schema/session.js';
import { modeSetting, topicSetting, type PipelineSettings } from '../settings.js';
import { kBrainstormModes, type BrainstormMode } from './decompose.js';

/** @default 2 generator-critic rounds */
export const kDefaultMaxGcRounds = 2;

/** The brainstorm pipeline's settings from session.json. */
export interface BrainstormSettings extends PipelineSettings {
  /** `mode`: how much `init` laid out. @default full */
  mode: BrainstormMode;
  /** `max_gc_rounds`: generator-critic rounds before the GC controller stops revising. */
  maxGcRounds: number;
}

export function brainstormSettings(config: SessionConfig): BrainstormSettings {
  return {
    ...topicSetting(config),
    mode: modeSetting(config, 'brainstorm', kBrainstormModes, 'full'),
    maxGcRounds: config.max_gc_rounds ?? kDefaultMaxGcRounds,
  };
}
