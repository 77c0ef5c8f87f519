import type { PipelineSettings, SettingsReader } from '../settings.js';
import { kLifecycleModes, type LifecycleMode } from './decompose.js';

/** @default 70: the score every quality dimension must reach for `--auto` to resume */
export const kDefaultQualityThreshold = 70;
/** @default 3 quality checks: the third resumes without asking */
export const kDefaultMaxQualityRounds = 3;

/** The lifecycle pipeline's settings, from init's flags or session.json. */
export interface LifecycleSettings extends PipelineSettings {
  /** `mode`: how much `init` laid out. @default full */
  mode: LifecycleMode;
  /** `quality_threshold`: 0 to 100. */
  qualityThreshold: number;
  /** `max_quality_rounds`: the check of this round resumes without asking (1: never asks). */
  maxQualityRounds: number;
}

export function lifecycleSettings(reader: SettingsReader): LifecycleSettings {
  return {
    topic: reader.topic(true),
    mode: reader.choice('mode', kLifecycleModes, 'full'),
    qualityThreshold: reader.number('qualityThreshold', 0, 100, kDefaultQualityThreshold),
    maxQualityRounds: reader.count('maxQualityRounds', kDefaultMaxQualityRounds, 1),
  };
}
