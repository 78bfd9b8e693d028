// Read marks shared by every window on a machine (tree/sharedMemento.ts): two windows, each
// with its own editor storage (two browser profiles on one code-server have two), keep their
// marks in one file and agree on what is unread.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LOCAL_READ_FILE, readMarksFile, SharedMemento } from '../../src/extension/tree/sharedMemento';
import { ReadState } from '../../src/extension/tree/state';
import type { MementoLike } from '../../src/extension/util/memento';

/** An editor's own storage (globalState) of one window. */
function editorStorage(initial: Record<string, unknown> = {}): MementoLike {
  const values = { ...initial };
  return {
    get: <T>(key: string) => values[key] as T | undefined,
    update: async (key: string, value: unknown) => {
      values[key] = value;
    },
  };
}

const KEY = 'local';
const KEYS = ReadState.keys(KEY);
const quiet = { warn: () => undefined };

function window(file: string, storage: MementoLike = editorStorage()): ReadState {
  const store = new SharedMemento(storage, [KEYS.read, KEYS.baseline], quiet);
  store.use(file);
  return new ReadState(store, KEY, Date.now(), { allUnread: true });
}

describe('extension: read marks shared by the windows of a machine', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-inbox-readmarks-'));
    file = path.join(dir, LOCAL_READ_FILE);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const msg = (id: string) => ({ id, time: 1 });

  it('a message opened in one window is read in the other once it syncs, though their editor storages differ', async () => {
    const a = window(file);
    const b = window(file);
    assert.equal(b.isUnread(msg('m-1-1')), true);
    await a.markRead(['m-1-1']);
    assert.equal(b.sync(), true, 'the other window sees a change');
    assert.equal(b.isUnread(msg('m-1-1')), false);
    assert.equal(b.sync(), false, 'nothing new the second time');
    assert.equal((fs.statSync(file).mode & 0o777).toString(8), '600');
  });

  it('marks made in both windows are all kept (each write takes in the other\'s first)', async () => {
    const a = window(file);
    const b = window(file);
    await a.markRead(['m-1-1']);
    await b.markRead(['m-1-2']);
    await a.markRead(['m-1-3']);
    for (const w of [a, b, window(file)]) {
      w.sync();
      for (const id of ['m-1-1', 'm-1-2', 'm-1-3']) assert.equal(w.isUnread(msg(id)), false, id);
    }
  });

  it('a new file starts with the marks the editor storage held (nothing read turns unread on upgrade)', () => {
    const w = window(file, editorStorage({ [KEYS.read]: ['old-1-1'] }));
    assert.equal(w.isUnread(msg('old-1-1')), false);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8'))[KEYS.read], ['old-1-1']);
  });

  it('a damaged file is read as empty, said in the log, and rewritten by the next mark', async () => {
    fs.writeFileSync(file, '{not json', { mode: 0o600 });
    const warned: string[] = [];
    const store = new SharedMemento(editorStorage(), [KEYS.read], { warn: (m) => warned.push(m) });
    store.use(file);
    const w = new ReadState(store, KEY, Date.now(), { allUnread: true });
    assert.match(warned.join('\n'), /Could not read/);
    await w.markRead(['m-1-1']);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8'))[KEYS.read], ['m-1-1']);
  });

  it('the local server keeps them in its data folder; another server in a file of its own in global storage', () => {
    assert.equal(readMarksFile({ local: true, dataDir: '/data' }, 'local', '/gs'), path.join('/data', LOCAL_READ_FILE));
    const remote = readMarksFile({ local: false }, 'https://team.example', '/gs');
    assert.equal(path.dirname(remote), path.join('/gs', 'read-marks'));
    assert.notEqual(remote, readMarksFile({ local: false }, 'https://other.example', '/gs'));
  });
});
