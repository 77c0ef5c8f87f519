import { WaveError, formatViolations } from '../errors.js';
import type { PipelineName, SessionConfig } from '../schema/session.js';
import { lineOfKey } from '../text/json-error-position.js';

/*
 * A pipeline's own settings (`topic`, `mode`, `max_gc_rounds`), parsed by that pipeline
 * into a typed object through one reader, whichever source gives them: init's flags, or
 * session.json. A bad value is refused named as its source spells it: ``Expected `--mode`
 * to be one of quick, deep, full for the brainstorm pipeline, got `nope` `` from a flag,
 * `session.json:3: mode: expected one of …, got "nope"` from session.json.
 */

/** The settings every pipeline has. */
export interface PipelineSettings {
  /** What the session is about; '' when none is given. */
  topic: string;
}

/** Each setting by its flag (init) and its session.json key. */
const kSettingNames = {
  topic: { flag: '--topic', key: 'topic' },
  mode: { flag: '--mode', key: 'mode' },
  maxGcRounds: { flag: '--max-gc-rounds', key: 'max_gc_rounds' },
  maxQualityRounds: { flag: '--max-quality-rounds', key: 'max_quality_rounds' },
  qualityThreshold: { flag: '--quality-threshold', key: 'quality_threshold' },
} as const satisfies Record<string, { flag: string; key: keyof SessionConfig }>;
type SettingName = keyof typeof kSettingNames;

/** The flags of a command that lays out a session (init): text from a command line, a number from a library caller. */
export type SettingFlags = { [K in SettingName]?: string | number | undefined };

/** session.json as read, for messages that point at the line of a key. */
export interface SettingsFile {
  /** The path as messages show it. */
  shown: string;
  text: string;
}

/** Where the settings come from. */
export type SettingsSource =
  | { from: 'flags'; command: string; flags: SettingFlags }
  /** `file` absent: a config given by a library caller, or read already (then it was checked). */
  | { from: 'session.json'; config: SessionConfig; file?: SettingsFile };

/** Reads one pipeline's settings from one source, each checked, and refused naming its source. */
export class SettingsReader {
  constructor(
    readonly pipeline: PipelineName,
    readonly source: SettingsSource,
  ) {}

  /** A reader of session.json's settings as `config` holds them (no file: a config already checked). */
  static of(pipeline: PipelineName, config: SessionConfig, file?: SettingsFile): SettingsReader {
    return new SettingsReader(pipeline, { from: 'session.json', config, ...(file === undefined ? {} : { file }) });
  }

  /**
   * The topic, '' when none. `needed`: laying out a new session (init's flags) needs one;
   * session.json may lack it, as a session written by hand may.
   */
  topic(needed = false): string {
    const topic = this.#given('topic');
    if (topic !== undefined && typeof topic !== 'string') this.#refuse('topic', 'a text', topic);
    if (needed && this.source.from === 'flags' && (topic ?? '').trim() === '') {
      throw new WaveError('USAGE', `${this.source.command} needs a ${kSettingNames.topic.flag}`);
    }
    return topic ?? '';
  }

  /** One of `choices`, else `fallback` when not given. */
  choice<M extends string>(name: 'mode', choices: readonly M[], fallback: M): M {
    const given = this.#given(name);
    if (given === undefined) return fallback;
    if (!(choices as readonly unknown[]).includes(given)) this.#refuse(name, `one of ${choices.join(', ')} for the ${this.pipeline} pipeline`, given);
    return given as M;
  }

  /** An integer ≥ `min` (0), else `fallback` when not given; a flag's text must be digits only. */
  count(name: 'maxGcRounds' | 'maxQualityRounds', fallback: number, min = 0): number {
    const given = this.#given(name);
    if (given === undefined) return fallback;
    const value = typeof given === 'string' && /^\s*\d+\s*$/.test(given) ? Number(given) : given;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) this.#refuse(name, `an integer ≥ ${min}`, given);
    return value;
  }

  /** A number from `min` to `max`, else `fallback` when not given; a flag's text must be a plain number. */
  number(name: 'qualityThreshold', min: number, max: number, fallback: number): number {
    const given = this.#given(name);
    if (given === undefined) return fallback;
    const value = typeof given === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(given) ? Number(given) : given;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) this.#refuse(name, `a number from ${min} to ${max}`, given);
    return value;
  }

  #given(name: SettingName): unknown {
    const source = this.source;
    return source.from === 'flags' ? source.flags[name] : source.config[kSettingNames[name].key];
  }

  #refuse(name: SettingName, expected: string, given: unknown): never {
    const source = this.source;
    if (source.from === 'flags') throw new WaveError('USAGE', `Expected \`${kSettingNames[name].flag}\` to be ${expected}, got \`${String(given)}\``);
    const { key } = kSettingNames[name];
    const message = `${key}: expected ${expected}, got ${JSON.stringify(given)}`;
    // As session.json's other errors are made (session-diagnostics.ts): its path, the line of the key.
    if (source.file === undefined) throw new WaveError('INVALID_SESSION', `session.json: ${message}`);
    const violation = { line: lineOfKey(source.file.text, key), message };
    throw new WaveError('INVALID_SESSION', formatViolations(source.file.shown, [violation]), { path: source.file.shown, violations: [violation] });
  }
}

/** The settings of a pipeline with only a topic (generic). */
export function topicSettings(reader: SettingsReader): PipelineSettings {
  return { topic: reader.topic() };
}
