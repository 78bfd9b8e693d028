// Connection caps sized from the process's file-descriptor limit: every
// open connection holds a descriptor, and so does every file the store writes, the log, the
// journal, the lock and Node itself. Past the limit accept() and open() both fail, so a crowd
// of idle sockets would make deliveries fail; capping connections well below it keeps room.
import { readFileSync } from 'node:fs';

/** Where Linux publishes the limits of the running process. */
const PROC_LIMITS = '/proc/self/limits';
/**
 * Assumed soft limit where it cannot be read (macOS, Windows): macOS's default soft limit is
 * 256, the smallest of the systems VS Code runs on, so caps sized from it are safe everywhere.
 */
export const FALLBACK_FD_LIMIT = 256;
/** Descriptors kept for the store (its files, log, journal, lock), worker threads and Node itself. */
export const RESERVED_FDS = 64;
/** Share of the rest kept free for connections past a cap, which hold a descriptor while they are refused. */
const REFUSAL_SHARE = 0.25;
/** Never fewer than this many connections per protocol, however low the limit: a server needs a few to be useful. */
const MIN_CAP = 8;

/**
 * The soft RLIMIT_NOFILE of this process from /proc/self/limits, or undefined where there is none.
 * Linux only: Windows' Node under Wine would read the Linux limits of Wine's process there, which
 * a real Windows does not have.
 */
export function readSoftFdLimit(text?: string, platform: NodeJS.Platform = process.platform): number | undefined {
  let limits = text;
  if (limits === undefined) {
    if (platform !== 'linux') return undefined;
    try {
      limits = readFileSync(PROC_LIMITS, 'utf8');
    } catch {
      return undefined;
    }
  }
  const m = /^Max open files\s+(\S+)/m.exec(limits);
  if (!m) return undefined;
  if (m[1] === 'unlimited') return Number.MAX_SAFE_INTEGER;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

export interface ConnectionCaps {
  smtp: number;
  http: number;
  /** The soft limit the caps were sized from, and whether it was read or assumed. */
  fdLimit: number;
  fdLimitSource: 'proc' | 'fallback';
}

/** Default caps: the descriptors left after RESERVED_FDS and the refusal share, split evenly between SMTP and HTTP. */
export function defaultConnectionCaps(fdLimit: number | undefined): ConnectionCaps {
  const limit = fdLimit ?? FALLBACK_FD_LIMIT;
  const usable = Math.max(0, Math.min(limit, 1 << 20) - RESERVED_FDS) * (1 - REFUSAL_SHARE);
  const each = Math.max(MIN_CAP, Math.floor(usable / 2));
  return { smtp: each, http: each, fdLimit: limit, fdLimitSource: fdLimit === undefined ? 'fallback' : 'proc' };
}
