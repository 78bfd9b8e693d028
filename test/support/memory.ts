// In-memory stand-ins for what VS Code hands the extension outside a host: SecretStorage,
// a Memento and the output channel behind the Logger. They keep the contracts of vscode's
// (get/store/delete with change events; get/update) and expose what they hold, so a test can
// check exactly what was stored. One copy for every Node suite.
import type { SecretStorageLike } from '../../src/extension/config/secrets';
import { Logger } from '../../src/extension/log';

/** SecretStorage in a Map; `onDidChange` fires on every store and delete, as vscode's does. */
export function memorySecrets(): SecretStorageLike & { data: Map<string, string> } {
  const data = new Map<string, string>();
  const listeners = new Set<(e: { key: string }) => unknown>();
  const fire = (key: string) => listeners.forEach((l) => l({ key }));
  return {
    data,
    get: async (k) => data.get(k),
    store: async (k, v) => {
      data.set(k, v);
      fire(k);
    },
    delete: async (k) => {
      data.delete(k);
      fire(k);
    },
    onDidChange: (l) => {
      listeners.add(l);
      return { dispose: () => listeners.delete(l) };
    },
  };
}

/** A Memento (globalState / workspaceState) in a Map; fits MementoLike (src/extension/util/memento.ts). */
export function memoryMemento(): { data: Map<string, unknown>; get<T>(key: string): T | undefined; update(key: string, value: unknown): Promise<void> } {
  const data = new Map<string, unknown>();
  return { data, get: <T>(k: string) => data.get(k) as T | undefined, update: async (k, v) => void data.set(k, v) };
}

/** A Logger whose lines (every level, already redacted) are kept in `lines`. */
export function memoryLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const push = (m: string) => void lines.push(m);
  return { log: new Logger({ trace: push, debug: push, info: push, warn: push, error: push }), lines };
}
