import { WaveError } from '../errors.js';
import type { OptionDefinition } from '../option-table.js';

/*
 * The checks of the table's types, one per source, each naming the option as that source
 * spells it: ``Expected `--concurrency` …`` for a flag, ``Expected `concurrency` …`` for a
 * library option. session.json's values are checked by its schema, made from the same
 * types (schema/session.ts), at the line of their key (session-diagnostics.ts).
 */

/** How a value is shown in a message: as written, objects as JSON. */
function shown(value: unknown): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/** A library option's value, checked: ``Expected `concurrency` to be a positive integer, got `0` (number)``. */
export function checkOption<T>(definition: OptionDefinition<T>, value: unknown, name: string): T {
  const parsed = definition.type.safeParse(value);
  if (!parsed.success) {
    throw new WaveError('USAGE', `Expected \`${name}\` to be ${definition.what}, got \`${shown(value)}\` (${typeof value})`);
  }
  return parsed.data;
}

/** `--concurrency` for `--concurrency <n>`. */
export function flagName(definition: OptionDefinition): string {
  return definition.flag!.split(' ')[0]!;
}

/**
 * A flag's value as commander hands it over (text, or true for a flag without a value),
 * turned into the option's value and checked, named by the flag:
 * ``Expected `--concurrency` to be a positive integer, got `0` ``.
 */
export function optionFromFlag<T>(definition: OptionDefinition<T>, given: unknown): T {
  const flag = flagName(definition);
  const how = definition.fromText ?? 'number';
  let value: unknown = given;
  let what = definition.what;
  if (how !== 'none' && typeof given === 'string') {
    if (typeof how === 'function') value = how(given);
    else {
      const number = Number(given);
      if (given.trim() === '' || !Number.isFinite(number)) throw new WaveError('USAGE', `Expected \`${flag}\` to be a number, got \`${given}\``);
      value = how === 'number' ? number : number * how.scale;
      if (how !== 'number') what = how.what;
    }
  }
  const parsed = definition.type.safeParse(value);
  if (!parsed.success) throw new WaveError('USAGE', `Expected \`${flag}\` to be ${what}, got \`${shown(given)}\``);
  return parsed.data;
}
