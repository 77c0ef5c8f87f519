import { WaveError } from '../errors.js';
import type { SessionConfig } from '../schema/session.js';

/**
 * A pipeline's own settings in session.json (`topic`, `mode`, `max_gc_rounds`), parsed by
 * that pipeline into a typed object once, instead of read as loose keys where they are used.
 * A value the pipeline does not know is refused naming its key, before the run starts.
 */
export interface PipelineSettings {
  /** What the session is about; '' when none is given. */
  topic: string;
}

/** The topic of every pipeline: session.json's `topic`, else none. */
export function topicSetting(config: SessionConfig): PipelineSettings {
  return { topic: config.topic ?? '' };
}

/** session.json's `mode`, one of the pipeline's modes, else its default. */
export function modeSetting<M extends string>(config: SessionConfig, pipeline: string, modes: readonly M[], fallback: M): M {
  if (config.mode === undefined) return fallback;
  if (!(modes as readonly string[]).includes(config.mode)) {
    throw new WaveError('INVALID_SESSION', `session.json: mode: expected one of ${modes.join(', ')} for the ${pipeline} pipeline, got "${config.mode}"`);
  }
  return config.mode as M;
}
