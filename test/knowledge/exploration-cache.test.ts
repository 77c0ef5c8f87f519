import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { angleKey, ExplorationCache } from '../../src/knowledge/exploration-cache.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

describe('exploration cache', () => {
  test('angles meet in kebab-case', () => {
    expect(angleKey('Competitor Analysis')).toBe('competitor-analysis');
    expect(angleKey(' competitor_analysis ')).toBe('competitor-analysis');
  });

  test('an angle explored once is found again, also by a new cache on the same session', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cache-'));
    const cache = new ExplorationCache(new SessionWriter(dir));
    expect(cache.lookup('Competitor Analysis')).toBeUndefined();
    cache.store('Competitor Analysis', 'EXPLORE-001', 'three competitors');
    cache.store('competitor analysis', 'EXPLORE-009', 'ignored: only the creator writes an entry');
    expect(new ExplorationCache(new SessionWriter(dir)).lookup('competitor_analysis')).toEqual({ findings: 'three competitors', createdBy: 'EXPLORE-001' });
    const index = JSON.parse(readFileSync(join(dir, 'explorations', 'cache-index.json'), 'utf8')) as { entries: unknown[] };
    expect(index.entries).toEqual([
      expect.objectContaining({ angle: 'competitor-analysis', file: 'explore-competitor-analysis.json', created_by: 'EXPLORE-001' }),
    ]);
    expect(existsSync(join(dir, 'explorations', 'explore-competitor-analysis.json'))).toBe(true);
  });
});
