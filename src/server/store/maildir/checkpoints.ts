// The checkpoints of the Maildir store's write-ahead log (wal.ts): each rotates the log and drops
// its generations oldest first, once the files of their messages are written (by the
// materialiser, materialiser.ts) and flushed. A generation is never dropped while an older one
// stays, so a removal record is never dropped while the message it removes is still in the log.
import { promises as fs } from 'node:fs';
import type { StoreLog } from '../types';
import { flushFiles } from './fileOps';
import type { MaterialiseJob } from './materialiser';
import type { WriteAheadLog } from './wal';
import { retryBusy } from '../../../shared/portableFs';

/** Checkpoint once the log holds this much: bounds the replay work after a crash. */
const WAL_CHECKPOINT_BYTES = 32 * 1024 * 1024;

/** A rotated log generation until a checkpoint drops it: its file, the files it logged, and their materialiser jobs. */
interface KeptGeneration {
  /** Rejects when the rotation failed: the generation is then never dropped in this run (the next start replays it). */
  file: Promise<string>;
  files: string[];
  jobs: MaterialiseJob[];
  /** The last failure logged for it. */
  failure?: string;
}

export class Checkpoints {
  /** Files committed to the current log generation, to flush at the next checkpoint. */
  private unflushed: string[] = [];
  /** Materialiser jobs of the current log generation: a checkpoint drops it only once they are written. */
  private unwritten: MaterialiseJob[] = [];
  /** Rotated log generations not dropped yet, oldest first (run()). */
  private kept: KeptGeneration[] = [];
  private checkpointRun: Promise<boolean> | undefined;
  /** The run that follows the one under way, shared by the callers that came meanwhile. */
  private checkpointNext: Promise<boolean> | undefined;

  constructor(
    private readonly wal: WriteAheadLog,
    private readonly log: StoreLog,
  ) {}

  /**
   * Records the files and materialiser jobs of records about to be committed to the current
   * generation. Call it in the same tick as the log write, so a rotation sees both or neither.
   */
  track(files: string[], jobs: MaterialiseJob[]): void {
    this.unflushed.push(...files);
    this.unwritten.push(...jobs);
  }

  /** True once the log holds enough that a checkpoint should run now. */
  get due(): boolean {
    return this.wal.bytes >= WAL_CHECKPOINT_BYTES;
  }

  /**
   * Rotates the log and drops every generation up to the one just rotated, oldest first: one
   * whose messages all have their files (written or cancelled) is flushed and then deleted. The
   * first that cannot be dropped (a file not written when the store closes, a failed fsync)
   * stops the run: it and every later generation stay, on disk for the next start's replay and
   * here for the next checkpoint, which tries them again first. Never deleting a generation
   * while an older one stays is what keeps removals: a later generation may hold the removal
   * record of a message an older one logged, and a replay of the older one without it would
   * bring the message back. Called while a run is under way, it waits for that run and starts
   * one more (shared by every such caller), so what was logged before the call is covered.
   * Never rejects: resolves true when every generation up to the call's is dropped, false when
   * one is kept (the failure is logged).
   */
  run(): Promise<boolean> {
    if (this.checkpointRun) {
      this.checkpointNext ??= this.checkpointRun.then(() => {
        this.checkpointNext = undefined;
        return this.run();
      });
      return this.checkpointNext;
    }
    if (this.wal.hasRecordsToRotate) {
      // Swap the lists and rotate in the same tick: commits queued before belong to the old generation.
      this.kept.push({ file: this.wal.rotate(), files: this.unflushed, jobs: this.unwritten });
      this.unflushed = [];
      this.unwritten = [];
    }
    if (this.kept.length === 0) return Promise.resolve(true);
    const run = this.dropKept().finally(() => (this.checkpointRun = undefined));
    this.checkpointRun = run;
    return run;
  }

  /** Drops the kept generations oldest first; stops at the first that cannot be dropped (see run()). */
  private async dropKept(): Promise<boolean> {
    while (this.kept.length > 0) {
      const gen = this.kept[0];
      let file = '';
      try {
        file = await gen.file;
        // The generation holds the only copy of a message until its file is written.
        const written = await Promise.all(gen.jobs.map((j) => j.done));
        const missing = written.filter((ok) => !ok).length;
        if (missing > 0) throw new Error(`${missing} message(s) logged in ${file} have no file yet`);
        gen.jobs = []; // all written or cancelled: their bytes are not held for a retry
        await flushFiles(gen.files);
        await retryBusy(() => fs.rm(file, { force: true }));
      } catch (e) {
        // Logged once per generation and cause: the periodic checkpoint tries again every few seconds.
        const cause = (e as Error).message;
        if (gen.failure === cause) return false;
        gen.failure = cause;
        const later = this.kept.length - 1;
        this.log(
          'warn',
          `store: checkpoint failed (${file || 'the log'} is kept and replayed on the next start${later > 0 ? `, and the ${later} later generation(s) with it` : ''}; the next checkpoint tries again): ${cause}`,
        );
        return false;
      }
      this.kept.shift();
    }
    return true;
  }
}
