import { cacheModeOf, type CacheMode } from '../option-table.js';
import type { SessionConfig } from '../schema/session.js';

/** What the cache may do for one attempt. */
export interface CacheUse {
  /** Take a cached result instead of executing. */
  read: boolean;
  /** Write the result it produces. */
  write: boolean;
}

export interface CachePolicySetup {
  /** The run's `cache` option: true, 'read' or false (`--cache on|read|off`, `--no-cache`, session.json `cache`). */
  cache: boolean | 'read';
  /** session.json's `roles`: a role with `"cache": false` always executes. */
  roles?: SessionConfig['roles'];
  /**
   * Tasks that execute whatever the cache holds: those a rerun chose (`--task`, `--wave`,
   * the failed ones of `--failed`, the stale ones of `--stale`). Their results are written.
   */
  forced?: ReadonlySet<string>;
}

const kNone: CacheUse = Object.freeze({ read: false, write: false });
const kReadOnly: CacheUse = Object.freeze({ read: true, write: false });
const kWriteOnly: CacheUse = Object.freeze({ read: false, write: true });
const kBoth: CacheUse = Object.freeze({ read: true, write: true });

/**
 * When a run uses the cache (docs/cache.md, "When the cache is used"): the run's mode, then
 * a role's `"cache": false`, then the tasks a rerun forced. Interactive tasks and worktree
 * tasks never reach it (the task runner and the key say so).
 */
export class CachePolicy {
  readonly mode: CacheMode;
  readonly #offRoles: ReadonlySet<string>;
  readonly #forced: ReadonlySet<string>;

  constructor(setup: CachePolicySetup) {
    this.mode = cacheModeOf(setup.cache);
    this.#offRoles = new Set(Object.entries(setup.roles ?? {}).filter(([, entry]) => entry.cache === false).map(([role]) => role));
    this.#forced = setup.forced ?? new Set();
  }

  /** What the cache may do for task `id` of role `role`. */
  use(id: string, role: string): CacheUse {
    if (this.mode === 'off' || this.#offRoles.has(role)) return kNone;
    const read = !this.#forced.has(id);
    if (this.mode === 'read') return read ? kReadOnly : kNone;
    return read ? kBoth : kWriteOnly;
  }

  /** Whether the role's results are never taken from the cache (`"cache": false` in its entry of `roles`). */
  roleOff(role: string): boolean {
    return this.#offRoles.has(role);
  }

  /** Whether a rerun forced the task to execute. */
  forced(id: string): boolean {
    return this.#forced.has(id);
  }
}
