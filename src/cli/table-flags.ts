import { Option, type Command } from 'commander';
import { optionFromFlag } from '../options/option-check.js';
import type { OptionCommand, OptionDefinition } from '../option-table.js';

/*
 * Commander's options made from the options table (option-table.ts): the flag, its help
 * (the doc line and the default), its choices; and a flag's value read back, checked
 * against the table and named by its flag.
 */

/** A table option's flag with its help: the doc line and the default. */
export function tableOption(definition: OptionDefinition): Option {
  const option = new Option(definition.flag!, `${definition.doc} (default ${definition.defaultText})`);
  if (definition.repeatable) return option.argParser((value: string, values: string[] = []) => [...values, value]);
  return definition.choices === undefined ? option : option.choices(definition.choices);
}

/** A table option's flags: its own, and the flag that negates it (`--no-cache`), if any. */
export function tableOptions(definition: OptionDefinition): Option[] {
  const option = tableOption(definition);
  if (definition.negation === undefined) return [option];
  return [option, new Option(definition.negation, `the same as ${definition.flag!.split(' ')[0]} off`)];
}

/** Commander's name for a flag's value: `redisTimeout` for `--redis-timeout <seconds>`. */
export function attributeOf(definition: OptionDefinition): string {
  return new Option(definition.flag!).attributeName();
}

/** The definitions of `entries` that `command` takes as flags. */
export function flagsOf<N extends string>(entries: Array<[N, OptionDefinition]>, command: OptionCommand): Array<[N, OptionDefinition]> {
  return entries.filter(([, definition]) => definition.flag !== undefined && definition.commands.includes(command));
}

/** Adds the flags of `entries` that `name` takes to `command`, in the table's order. */
export function addTableFlags(command: Command, entries: Array<[string, OptionDefinition]>, name: OptionCommand): Command {
  for (const [, definition] of flagsOf(entries, name)) for (const option of tableOptions(definition)) command.addOption(option);
  return command;
}

/** A flag's value as commander holds it, checked against its definition; undefined when not given. */
export function tableFlag<T>(definition: OptionDefinition<T>, flags: object): T | undefined {
  const given = (flags as Record<string, unknown>)[attributeOf(definition)];
  if (given === undefined) return undefined;
  // A repeatable flag's values are each text; its list is checked whole by its type.
  return definition.repeatable ? (definition.type.parse(given) as T) : optionFromFlag(definition, given);
}
