// A minimal event emitter for the vscode-free modules (vscode.EventEmitter in the host).

type Listener<T> = (value: T) => void;

export class Emitter<T> {
  private listeners = new Set<Listener<T>>();

  readonly event = (listener: Listener<T>): { dispose(): void } => {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  };

  fire(value: T): void {
    for (const l of [...this.listeners]) {
      try {
        l(value);
      } catch {
        // A failing listener must not stop the others.
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
