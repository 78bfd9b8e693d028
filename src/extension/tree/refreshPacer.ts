// Paces the tree's change events to VS Code's own coalescing of them. The extension host
// debounces a tree view's change events (extHostTreeViews.ts: `Event.debounce(onDidChangeData,
// …, 200, leading = true)`): a change after 200 quiet ms is drawn at once, but a change inside
// that window restarts it and is drawn only once 200 ms pass without another. So a message
// arriving shortly after the previous one waited 200 ms from its own arrival (every other
// message of a steady trickle), and a steady flood was not drawn until it stopped. Here a
// change fires at once when the last one is older than the window; otherwise the changes of
// the window fire together right after it closes, when VS Code takes its leading edge again.
// Changes name what they touched (a row), or nothing when they touched anything: the held ones
// fire as the list of their rows, or as "everything" once one of them touched anything.
// No vscode import: the provider hands in its redraw.

/** VS Code's debounce of a tree's change events in the extension host (extHostTreeViews.ts). */
export const VSCODE_TREE_DEBOUNCE_MS = 200;
/**
 * A held change fires this long after the last fire. VS Code's timer and ours start in the same
 * tick (its listener runs inside our fire), so ours, 1 ms longer, always runs after its own.
 */
export const PACED_REFRESH_MS = VSCODE_TREE_DEBOUNCE_MS + 1;

export class RefreshPacer<C> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Changes not fired yet: their list, or 'all' once one touched anything. */
  private held: C[] | 'all' | undefined;
  private disposed = false;

  /** `fire` gets the changes to draw, or undefined for everything. */
  constructor(private readonly fire: (changes: C[] | undefined) => void) {}

  /** Asks for a redraw of what `change` touched (everything when undefined): now when the window is closed, else once when it closes. */
  request(change?: C): void {
    if (this.disposed) return;
    if (change === undefined) this.held = 'all';
    else if (this.held === undefined) this.held = [change];
    else if (this.held !== 'all') this.held.push(change);
    if (this.timer === undefined) this.emit();
  }

  /**
   * Hands the held changes to VS Code now. VS Code chains every change it is handed to the
   * promise its reveal() waits for, even inside its own debounce window; a change still held
   * here is not in that chain, so a reveal would look for the new row in the old tree.
   */
  flush(): void {
    if (this.disposed || this.held === undefined) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.emit();
  }

  private emit(): void {
    const held = this.held;
    this.held = undefined;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.held !== undefined) this.emit();
    }, PACED_REFRESH_MS);
    this.fire(held === 'all' ? undefined : held);
  }

  dispose(): void {
    this.disposed = true;
    this.held = undefined;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
