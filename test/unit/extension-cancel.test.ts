// The one bridge from vscode's CancellationToken to the AbortSignal the client takes
// (ui/cancel.ts), with a token shaped like vscode's (an event that hands back a disposable).
import assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { toAbortSignal } from '../../src/extension/ui/cancel';
import { Emitter } from '../../src/extension/util/emitter';

/** A CancellationTokenSource like vscode's, counting the listeners still attached. */
function tokenSource(): { token: vscode.CancellationToken; cancel(): void; listeners(): number } {
  const emitter = new Emitter<void>();
  let cancelled = false;
  let attached = 0;
  const token = {
    get isCancellationRequested() {
      return cancelled;
    },
    onCancellationRequested: (listener: () => unknown) => {
      attached++;
      const sub = emitter.event(() => listener());
      return {
        dispose: () => {
          attached--;
          sub.dispose();
        },
      };
    },
  } as unknown as vscode.CancellationToken;
  return {
    token,
    cancel: () => {
      cancelled = true;
      emitter.fire();
    },
    listeners: () => attached,
  };
}

describe('extension cancellation bridge', () => {
  it('aborts the signal when the token is cancelled', () => {
    const src = tokenSource();
    const { signal, dispose } = toAbortSignal(src.token);
    assert.equal(signal.aborted, false);
    src.cancel();
    assert.equal(signal.aborted, true);
    dispose();
  });

  it('disposes its listener, after which a cancellation no longer reaches the signal', () => {
    const src = tokenSource();
    const { signal, dispose } = toAbortSignal(src.token);
    assert.equal(src.listeners(), 1);
    dispose();
    assert.equal(src.listeners(), 0);
    src.cancel();
    assert.equal(signal.aborted, false);
  });

  it('starts aborted for a token already cancelled, and never aborts without a token', () => {
    const src = tokenSource();
    src.cancel();
    assert.equal(toAbortSignal(src.token).signal.aborted, true);
    const none = toAbortSignal(undefined);
    assert.equal(none.signal.aborted, false);
    none.dispose();
  });
});
