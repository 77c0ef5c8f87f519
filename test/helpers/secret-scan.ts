import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/**
 * Where the bullmq tests look for a key or secret that must not be there: every Redis
 * value and every file of a folder.
 */

/** Every key of Redis with its DUMP (compression is off on the test server: texts appear as they are). */
export async function dumpAll(url: string): Promise<Map<string, Buffer>> {
  const client = new Redis(url);
  try {
    const dumps = new Map<string, Buffer>();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const dump = await client.dumpBuffer(key);
        if (dump) dumps.set(key, dump);
      }
    } while (cursor !== '0');
    return dumps;
  } finally {
    client.disconnect();
  }
}

/** The paths of every file under `dir`, at any depth. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}
