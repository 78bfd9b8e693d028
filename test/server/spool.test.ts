// The shared byte budget and the spooling sink with real files.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BudgetError, ByteBudget } from '../../src/server/budget';
import { SpoolingSink } from '../../src/server/spool';

describe('byte budget and spool', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-spool-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  const forever = new AbortController().signal;

  it('grants bytes first come first served and never more than the capacity', async () => {
    const budget = new ByteBudget(100);
    const a = await budget.take(60, forever);
    assert.equal(budget.tryTake(50, forever), undefined);
    const order: string[] = [];
    const b = budget.take(50, forever).then((r) => (order.push('b'), r));
    const c = budget.take(500, forever).then((r) => (order.push('c'), r)); // more than the capacity: waits to be alone
    assert.equal(budget.tryTake(1, forever), undefined, 'nobody jumps the queue');
    a();
    (await b)();
    (await c)();
    assert.deepEqual(order, ['b', 'c']);
    assert.equal(budget.inUse, 0);
  });

  it('a waiter whose holder ends leaves the queue at once, and a grant goes back when its holder ends', async () => {
    const budget = new ByteBudget(100);
    const holder = new AbortController();
    await budget.take(100, holder.signal); // never released by hand: its lifetime gives it back
    const gone = new AbortController();
    const waiting = budget.take(60, gone.signal);
    const next = budget.take(60, forever);
    assert.equal(budget.waiters, 2);
    gone.abort();
    await assert.rejects(waiting, (e: unknown) => BudgetError.is(e, 'GONE'));
    assert.equal(budget.waiters, 1, 'the waiter that went away left the queue');
    holder.abort();
    const release = await next;
    assert.equal(budget.inUse, 60, 'the ended holder gave its 100 back; the one that left took nothing');
    release();
    assert.equal(budget.inUse, 0);
    await assert.rejects(budget.take(1, gone.signal), (e: unknown) => BudgetError.is(e, 'GONE'), 'an ended lifetime takes nothing');
    assert.equal(budget.tryTake(1, gone.signal), undefined);
  });

  it('close() refuses every waiter and every later take, so a stop never waits for memory', async () => {
    const budget = new ByteBudget(10);
    const held = await budget.take(10, forever);
    const waiters = [budget.take(5, forever), budget.take(5, forever)];
    budget.close();
    for (const w of waiters) await assert.rejects(w, (e: unknown) => BudgetError.is(e, 'CLOSED'));
    await assert.rejects(budget.take(1, forever), (e: unknown) => BudgetError.is(e, 'CLOSED'));
    held();
    assert.equal(budget.inUse, 0);
  });

  it('a spooled body that waits for its head gives up when it is disposed of', async () => {
    const budget = new ByteBudget(100);
    const hold = await budget.take(100, forever);
    const sink = new SpoolingSink({ budget, dir, thresholdBytes: 10 });
    await pipeline(Readable.from([Buffer.alloc(500, 65)]), sink);
    const body = sink.received();
    const head = body.body(50).then(() => 'granted', (e: unknown) => e);
    await body.dispose();
    assert.ok(BudgetError.is(await head, 'GONE'), 'the wait ended when the body was disposed of');
    assert.equal(budget.waiters, 0);
    hold();
    assert.equal(budget.inUse, 0);
  });

  it('keeps a small body in memory and spools a large one to a private file it removes', async () => {
    const budget = new ByteBudget(1024 * 1024);
    const small = new SpoolingSink({ budget, dir, thresholdBytes: 1024 });
    await pipeline(Readable.from([Buffer.from('a'.repeat(500))]), small);
    const smallBody = small.received();
    assert.equal(smallBody.spooled, false);
    assert.equal((await smallBody.body(100)).toString(), 'a'.repeat(500));
    await smallBody.dispose();

    const chunks = Array.from({ length: 10 }, (_, i) => Buffer.alloc(300, 65 + i));
    const large = new SpoolingSink({ budget, dir, thresholdBytes: 1024 });
    await pipeline(Readable.from(chunks), large);
    const body = large.received();
    assert.equal(body.spooled, true);
    const [file] = await fs.readdir(dir);
    assert.equal((await fs.stat(path.join(dir, file))).mode & 0o777, 0o600);
    assert.equal(budget.inUse, 0, 'a spooled body holds no budget until it is read');
    // The store gets the file and its head, never the whole body in memory.
    const stored = await body.body(1000);
    assert.ok(!Buffer.isBuffer(stored));
    assert.equal(stored.file, path.join(dir, file));
    assert.equal(stored.size, 3000);
    assert.deepEqual(stored.head, Buffer.concat(chunks).subarray(0, 1000));
    assert.deepEqual(await fs.readFile(stored.file), Buffer.concat(chunks));
    assert.equal(budget.inUse, 1000, 'only the head is held');
    await body.dispose();
    assert.equal(budget.inUse, 0);
    assert.deepEqual(await fs.readdir(dir), []);
  });

  it('spools even a small body when the budget is taken by others', async () => {
    const budget = new ByteBudget(100);
    const hold = await budget.take(100, forever);
    const sink = new SpoolingSink({ budget, dir });
    await pipeline(Readable.from([Buffer.from('hello')]), sink);
    assert.equal(sink.received().spooled, true);
    hold();
    await sink.received().dispose();
  });
});
