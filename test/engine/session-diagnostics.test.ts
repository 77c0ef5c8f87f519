import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { jsonErrorOffset, jsonErrorPosition, lineOfPath } from '../../src/text/json-error-position.js';
import { editDistance, nearestName } from '../../src/text/nearest-name.js';
import { sessionViolations } from '../../src/session/session-diagnostics.js';
import { sessionConfigSchema } from '../../src/schema/session.js';

describe('editDistance and nearestName', () => {
  test.each([
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
    ['topic', 'topci', 2],
    ['max_rows', 'max_row', 1],
    ['same', 'same', 0],
  ])('%s → %s: %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });

  test('is a distance: zero only for equal names, and the triangle inequality holds', () => {
    const name = fc.string({ maxLength: 8 });
    fc.assert(
      fc.property(name, name, name, (a, b, c) => {
        expect(editDistance(a, b) === 0).toBe(a === b);
        expect(editDistance(a, c)).toBeLessThanOrEqual(editDistance(a, b) + editDistance(b, c));
      }),
    );
  });

  test('the nearest name within two edits or a change of case wins; none past two', () => {
    const known = ['pipeline', 'topic', 'timeout', 'max_rows'];
    expect(nearestName('PIPELINE', known)).toBe('pipeline');
    expect(nearestName('timout', known)).toBe('timeout');
    expect(nearestName('tpoic', known)).toBe('topic');
    expect(nearestName('colour', known)).toBeUndefined();
  });
});

describe('jsonErrorOffset', () => {
  test('a valid document, however spaced, has its error at the end (none)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('', 2, '\t', ' \r\n'), (value, indent) => {
        const text = `\n${JSON.stringify(value, null, indent)}\t`;
        JSON.parse(text);
        expect(jsonErrorOffset(text)).toBe(text.length);
      }),
    );
  });

  test('a valid document followed by more text fails where the extra text starts', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('}', ']', 'x', '"a"', ',1'), (value, junk) => {
        const json = JSON.stringify(value);
        const text = `${json} \n${junk}`;
        expect(jsonErrorOffset(text)).toBe(json.length + 2);
      }),
    );
  });

  test('names the line and column of the first error, and V8 reason without a position', () => {
    const text = '{\n"a":[1,,2]}';
    let error: Error | undefined;
    try {
      JSON.parse(text);
    } catch (caught) {
      error = caught as Error;
    }
    const position = jsonErrorPosition(text, error!);
    expect(position).toEqual({ line: 2, column: 8, detail: "Unexpected token ','" });
  });

  test('a document nested deeper than the stack is still given a position, not a crash', () => {
    const text = '['.repeat(200_000);
    expect(jsonErrorOffset(text)).toBeGreaterThan(0);
  });
});

describe('sessionViolations', () => {
  test('an unknown key is named at its line with the key it most likely meant; violations in line order', () => {
    const text = '{\n  "topic": 3,\n  "max_rowz": 10\n}';
    const parsed = sessionConfigSchema.safeParse(JSON.parse(text));
    expect(parsed.success).toBe(false);
    const violations = sessionViolations(parsed.error!.issues, text, JSON.parse(text));
    expect(violations.map((v) => v.line)).toEqual([2, 3]);
    expect(violations[1]).toEqual({ line: 3, message: 'Unknown key: max_rowz (did you mean max_rows?)' });
    expect(violations[0]!.message).toMatch(/^topic: /);
  });
});

describe('sessionViolations under roles', () => {
  const text = [
    '{',
    '  "executor": { "type": "codex", "model": "run-model", "sandbox": "read-only" },',
    '  "roles": {',
    '    "writer": {',
    '      "model": "",',
    '      "agnet": "claude",',
    '      "sandbox": "full"',
    '    }',
    '  }',
    '}',
  ].join('\n');

  test("a role entry's problems are at their own lines, not at the executor block's keys of the same name; an unknown key gets the entry's keys as hint", () => {
    const parsed = sessionConfigSchema.safeParse(JSON.parse(text));
    expect(parsed.success).toBe(false);
    expect(sessionViolations(parsed.error!.issues, text, JSON.parse(text))).toEqual([
      { line: 5, message: 'roles.writer.model: Too small: expected string to have >=1 characters' },
      { line: 6, message: 'Unknown key: roles.writer.agnet (did you mean agent?)' },
      { line: 7, message: expect.stringMatching(/^roles\.writer\.sandbox: Invalid option/) },
    ]);
  });

  test('lineOfPath finds a key by its path, through arrays, and falls back to the first key of the name', () => {
    expect(lineOfPath(text, ['roles', 'writer', 'sandbox'])).toBe(7);
    expect(lineOfPath(text, ['executor', 'sandbox'])).toBe(2);
    expect(lineOfPath('{\n"a": [\n{"b": 1},\n{\n"b": 2}\n]\n}', ['a', '1', 'b'])).toBe(5);
    expect(lineOfPath(text, ['roles', 'nobody', 'model'])).toBe(2);
    expect(lineOfPath(text, [])).toBe(1);
  });
});
