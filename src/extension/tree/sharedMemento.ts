// The tree's per-server state (read marks, tree/state.ts) in a file every window on this machine
// reads: VS Code's globalState is per editor and, in a browser workbench (code-server), per
// browser profile, so two windows on one server could disagree on what is unread. Until a file
// is chosen (the connection is not ready yet) the editor's globalState serves. No vscode import.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MementoLike } from '../util/memento';

/** Owner only: the data folder's rule (docs/architecture.md "Modes"). */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
/** A file larger than this is not read state (5000 ids of ≤ 256 characters fit with room). */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

export interface SharedMementoLog {
  warn(message: string): void;
}

export class SharedMemento implements MementoLike {
  private file: string | undefined;
  private values: Record<string, unknown> = {};
  /** Size and mtime of the file as last read: a cheap check whether another window wrote it. */
  private stamp = '';

  constructor(
    private readonly fallback: MementoLike,
    /** The keys this store holds (copied from the fallback into a new file). */
    private readonly keys: readonly string[],
    private readonly log: SharedMementoLog,
  ) {}

  /** The file in use, if any. */
  get path(): string | undefined {
    return this.file;
  }

  /**
   * Keeps the state in `file` from now on. A file that does not exist yet starts with what the
   * editor's globalState held (marks of earlier releases are kept).
   */
  use(file: string): void {
    if (this.file === file) return;
    this.file = file;
    this.stamp = '';
    if (!fs.existsSync(file)) {
      const seed: Record<string, unknown> = {};
      for (const key of this.keys) {
        const v = this.fallback.get(key);
        if (v !== undefined) seed[key] = v;
      }
      this.write(seed);
    }
    this.refresh();
  }

  get<T>(key: string): T | undefined {
    return (this.file ? this.values[key] : this.fallback.get<T>(key)) as T | undefined;
  }

  /** Re-reads the file when another window changed it. */
  refresh(): void {
    if (!this.file) return;
    let st: fs.Stats;
    try {
      st = fs.statSync(this.file);
    } catch {
      return;
    }
    const stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
    if (stamp === this.stamp) return;
    if (st.size > MAX_FILE_BYTES) {
      this.log.warn(`Ignoring ${this.file}: ${st.size} bytes is too large for read marks.`);
      this.stamp = stamp;
      return;
    }
    try {
      const v = JSON.parse(fs.readFileSync(this.file, 'utf8')) as unknown;
      this.values = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
      this.stamp = stamp;
    } catch (e) {
      // A file being replaced is never torn (rename), so this is a damaged file: start over from it.
      this.log.warn(`Could not read ${this.file} (${(e as Error).message}); its read marks start empty.`);
      this.values = {};
      this.stamp = stamp;
    }
  }

  async update(key: string, value: unknown): Promise<void> {
    if (!this.file) return this.fallback.update(key, value);
    // Another window's other keys as they are now, this window's key as given.
    this.refresh();
    const next = { ...this.values };
    if (value === undefined) delete next[key];
    else next[key] = value;
    this.write(next);
    this.refresh();
  }

  /** Replaces the file whole (a temp file renamed over it), so a reader never sees half of it. */
  private write(values: Record<string, unknown>): void {
    const file = this.file!;
    this.values = values;
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: DIR_MODE });
      fs.writeFileSync(tmp, JSON.stringify(values), { mode: FILE_MODE });
      fs.renameSync(tmp, file);
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      this.log.warn(`Could not save read marks in ${file}: ${(e as Error).message}`);
    }
  }
}

/** The local server's read marks, in its data folder: every window attached to it reads the same file. */
export const LOCAL_READ_FILE = 'editor-read.json';

/**
 * Where a server's read marks are kept: the local server's data folder (shared by every editor
 * and browser window attached to it, whichever editor started it), else a file per server in
 * the extension's global storage (on the machine the extension runs on: in code-server, shared
 * by every browser profile).
 */
export function readMarksFile(server: { local?: boolean; dataDir?: string }, serverKey: string, globalStorageDir: string): string {
  if (server.local && server.dataDir) return path.join(server.dataDir, LOCAL_READ_FILE);
  return path.join(globalStorageDir, 'read-marks', `${createHash('sha256').update(serverKey).digest('hex').slice(0, 32)}.json`);
}
