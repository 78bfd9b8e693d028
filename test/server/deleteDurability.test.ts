// Deleted stays deleted: a delete that was answered is in the OS (process rule) or on disk
// (strict rule) before the answer. The server
// runs as a child process and is SIGKILLed the moment the answer arrives; it must not bring the
// message back on restart. A power cut is simulated on a real ext4 file system in a loop-mounted
// image (needs root and CAP_SYS_ADMIN, as `.ci/run` has; skipped otherwise): the image is copied
// right after the kill, which keeps only what the file system committed (its journal commits
// only on fsync, commit=600), and the copy is mounted and served.

import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { DURABILITIES, type Durability } from '../../src/shared/contract';
import { type Running, startCli } from './cliProcess';

const API = 'delete-durability-api-token';
const WEBHOOK = 'delete-durability-webhook-token';
const IMAGE_BYTES = 64 * 1024 * 1024;
/** Longer than the store's checkpoint interval (2 s): the first message is then in its file only, no longer in the log. */
const AFTER_CHECKPOINT_MS = 3000;

describe('a delete that was answered survives a crash', function () {
  this.timeout(120_000);
  let work: string;
  const children: ChildProcess[] = [];
  const mounts: string[] = [];

  beforeEach(async () => {
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-delete-'));
  });

  afterEach(async () => {
    for (const c of children.splice(0)) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      const gone = new Promise((res) => c.once('close', res));
      c.kill('SIGKILL');
      await gone;
    }
    for (const m of mounts.splice(0).reverse()) execFileSync('umount', [m]);
    await fs.rm(work, { recursive: true, force: true, maxRetries: 5 });
  });

  function serve(dataDir: string, durability: Durability = 'strict'): Running {
    const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir, '--api-token', API, '--webhook-token', WEBHOOK, '--durability', durability]);
    children.push(r.child);
    return r;
  }

  async function ids(http: string): Promise<string[]> {
    const res = await fetch(`${http}/api/v2/domains/inbox.test/inboxes/joe?limit=100`, { headers: { authorization: API } });
    assert.equal(res.status, 200);
    return ((await res.json()) as { msgs: Array<{ id: string }> }).msgs.map((m) => m.id).sort();
  }

  /** Delivers three messages (the first checkpointed, the others only in the log), deletes two, and SIGKILLs the server on the second answer. */
  async function deleteThenKill(dataDir: string, durability: Durability = 'strict'): Promise<{ kept: string; deleted: string[] }> {
    const r = serve(dataDir, durability);
    const ready = await r.ready;
    const [host, port] = ready.smtp.split(':');
    const transport = nodemailer.createTransport({ host, port: Number(port), secure: false, ignoreTLS: true });
    const send = async (subject: string): Promise<string> => {
      const info = await transport.sendMail({ from: 'a@example.com', to: 'joe@inbox.test', subject, text: `${subject} `.repeat(200) });
      return /stored as (\S+)/.exec(info.response)![1];
    };
    const old = await send('checkpointed');
    await new Promise((res) => setTimeout(res, AFTER_CHECKPOINT_MS));
    const fresh = await send('in the log');
    const kept = await send('kept');
    const del = (id: string): Promise<Response> => fetch(`${ready.http}/api/v2/domains/inbox.test/messages/${encodeURIComponent(id)}`, { method: 'DELETE', headers: { authorization: API } });
    assert.equal((await del(old)).status, 200);
    const answer = await del(fresh);
    r.child.kill('SIGKILL');
    assert.equal(answer.status, 200);
    await r.exited;
    transport.close();
    return { kept, deleted: [old, fresh] };
  }

  for (const durability of DURABILITIES) {
    it(`after SIGKILL right after the answer, the restarted server does not bring the messages back (--durability ${durability})`, async () => {
      const dataDir = path.join(work, 'data');
      const { kept } = await deleteThenKill(dataDir, durability);
      const again = serve(dataDir, durability);
      assert.deepEqual(await ids((await again.ready).http), [kept]);
    });
  }

  // The strict rule's promise only: under the process-safe rule a power cut may undo the last second.

  it('after a simulated power cut (an ext4 image copied right after the kill), the messages stay deleted (--durability strict)', async function () {
    const image = path.join(work, 'fs.img');
    const mountPoint = path.join(work, 'mnt');
    await fs.mkdir(mountPoint);
    await fs.writeFile(image, '');
    await fs.truncate(image, IMAGE_BYTES);
    try {
      execFileSync('mkfs.ext4', ['-q', '-F', image], { stdio: 'pipe' });
      // commit=600: the journal commits only when something is fsynced, so the image holds exactly what the server made durable.
      execFileSync('mount', ['-o', 'loop,commit=600', image, mountPoint], { stdio: 'pipe' });
    } catch {
      this.skip(); // no mkfs.ext4 or no permission to mount here
    }
    mounts.push(mountPoint);
    const dataDir = path.join(mountPoint, 'data');
    const { kept } = await deleteThenKill(dataDir);
    // What a power cut right now would leave on the disk.
    const cut = path.join(work, 'cut.img');
    await fs.copyFile(image, cut);
    const cutMount = path.join(work, 'cut');
    await fs.mkdir(cutMount);
    execFileSync('mount', ['-o', 'loop', cut, cutMount], { stdio: 'pipe' });
    mounts.push(cutMount);
    const after = serve(path.join(cutMount, 'data'));
    assert.deepEqual(await ids((await after.ready).http), [kept]);
  });
});
