// The one store shape the extension persists through: anything like a vscode Memento
// (globalState, workspaceState), or tree/sharedMemento.ts. No vscode import.

export interface MementoLike {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
  /** Takes in what other windows wrote, where the store does not push it (tree/sharedMemento.ts). */
  refresh?(): void;
}
