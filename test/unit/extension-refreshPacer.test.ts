import * as assert from 'node:assert/strict';
import { mock } from 'node:test';
import { PACED_REFRESH_MS, RefreshPacer, VSCODE_TREE_DEBOUNCE_MS } from '../../src/extension/tree/refreshPacer';

// The pacer's clock is Node's own timers, driven here by node:test's mock timers: the
// assertions are about which redraws happen in which order, not about how long anything takes.
describe('tree refresh pacer', () => {
  let fired: number;
  let drawn: Array<string[] | undefined>;
  let pacer: RefreshPacer<string>;

  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout'] });
    fired = 0;
    drawn = [];
    pacer = new RefreshPacer<string>((changes) => {
      fired++;
      drawn.push(changes);
    });
  });

  afterEach(() => {
    pacer.dispose();
    mock.timers.reset();
  });

  it('redraws at once when the tree has been quiet', () => {
    pacer.request();
    assert.equal(fired, 1);
  });

  it('holds changes inside the window and redraws them once, right after VS Code’s debounce has closed', () => {
    pacer.request();
    pacer.request();
    pacer.request();
    assert.equal(fired, 1, 'the first change is drawn, the next two wait');
    mock.timers.tick(VSCODE_TREE_DEBOUNCE_MS);
    assert.equal(fired, 1, 'not while VS Code would still debounce it');
    mock.timers.tick(PACED_REFRESH_MS - VSCODE_TREE_DEBOUNCE_MS);
    assert.equal(fired, 2, 'the held changes are drawn together');
    mock.timers.tick(PACED_REFRESH_MS * 3);
    assert.equal(fired, 2, 'nothing more without a new change');
  });

  it('keeps drawing during a steady flood instead of waiting for it to stop', () => {
    pacer.request();
    for (let step = 0; step < 20; step++) {
      mock.timers.tick(50);
      pacer.request();
    }
    // 1,000 ms of changes every 50 ms: drawn at the start and once per window since.
    assert.equal(fired, 1 + Math.floor(1_000 / PACED_REFRESH_MS));
  });

  it('redraws a change after the window at once', () => {
    pacer.request();
    mock.timers.tick(PACED_REFRESH_MS);
    pacer.request();
    assert.equal(fired, 2);
  });

  it('drops a held change when disposed', () => {
    pacer.request();
    pacer.request();
    pacer.dispose();
    mock.timers.tick(PACED_REFRESH_MS * 2);
    pacer.request();
    assert.equal(fired, 1);
  });

  it('flush hands a held change over at once, and the window starts again from it', () => {
    pacer.request();
    pacer.request();
    assert.equal(fired, 1);
    mock.timers.tick(50);
    pacer.flush();
    assert.equal(fired, 2, 'the held change is drawn now (a reveal follows it)');
    mock.timers.tick(PACED_REFRESH_MS - 50);
    assert.equal(fired, 2, 'the old window closing draws nothing more');
    pacer.request();
    assert.equal(fired, 2, 'a change within the new window is held');
    mock.timers.tick(50);
    assert.equal(fired, 3, 'and drawn when the window that started at the flush closes');
  });

  it('flush does nothing when nothing is held', () => {
    pacer.flush();
    assert.equal(fired, 0);
    pacer.request();
    pacer.flush();
    assert.equal(fired, 1, 'the change was drawn at once; nothing was held');
  });

  it('draws the rows the changes named, or everything once one named none', () => {
    pacer.request('inbox a');
    assert.deepEqual(drawn, [['inbox a']], 'a change in a quiet tree is drawn at once, as its row');
    pacer.request('inbox b');
    pacer.request('inbox c');
    mock.timers.tick(PACED_REFRESH_MS);
    assert.deepEqual(drawn[1], ['inbox b', 'inbox c'], 'the changes held in the window are drawn together, each row');
    mock.timers.tick(PACED_REFRESH_MS);
    pacer.request('inbox d');
    pacer.request();
    pacer.request('inbox e');
    mock.timers.tick(PACED_REFRESH_MS);
    assert.deepEqual(drawn.slice(2), [['inbox d'], undefined], 'a change that named no row makes the held ones (before and after it) a redraw of everything');
    mock.timers.tick(PACED_REFRESH_MS * 2);
    assert.equal(drawn.length, 4, 'nothing more without a new change');
  });
});
