// Paces the tree's change events to VS Code's own coalescing of them. The extension host
// debounces a tree view's change events (extHostTreeViews.ts: `Event.debounce(onDidChangeData,
// …, 200, leading = true)`): a change after 200 quiet ms is drawn at once, but a change inside
// that window restarts it and is drawn only once 200 ms pass without another. So a message
// arriving shortly after the previous one waited 200 ms from its own arrival (every other
// message of a steady trickle), and a steady flood was not drawn until it stopped. Here a
// change fires at once when the last one is older than the window; otherwise the changes of
// the window fire together right after it closes, when VS Code takes its leading edge again.
// No vscode import: the provider hands in its emitter's fire.

/** VS Code's debounce of a tree's change events in the extension host (extHostTreeViews.ts). */
export const VSCODE_TREE_DEBOUNCE_MS = 200;
/**
 * A held change fires this long after the last fire. VS Code's timer and ours start in the same
 * tick (its listener runs inside our fire), so ours, 1 ms longer, always runs after its own.
 */
export const PACED_REFRESH_MS = VSCODE_TREE_DEBOUNCE_MS + 1;

export class RefreshPacer {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pending = false;
  private disposed = false;

  constructor(private readonly fire: () => void) {}

  /** Asks for a redraw: now when the window is closed, else once when it closes. */
  request(): void {
    if (this.disposed) return;
    if (this.timer !== undefined) {
      this.pending = true;
      return;
    }
    this.emit();
  }

  /**
   * Hands a held change to VS Code now. VS Code chains every change it is handed to the
   * promise its reveal() waits for, even inside its own debounce window; a change still held
   * here is not in that chain, so a reveal would look for the new row in the old tree.
   */
  flush(): void {
    if (this.disposed || !this.pending) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.emit();
  }

  private emit(): void {
    this.pending = false;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.pending) this.emit();
    }, PACED_REFRESH_MS);
    this.fire();
  }

  dispose(): void {
    this.disposed = true;
    this.pending = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
