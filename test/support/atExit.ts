// Cleanups that run when the test process exits (remove a temp folder, stop a database
// cluster), all behind ONE process 'exit' listener per process.
//
// Why a registry on globalThis and not a module-level flag: the integration runner compiles
// each suite file into a bundle of its own (scripts/integration/build.ts), so a helper module
// is loaded once per suite bundle, each copy with its own module state. A "register once" flag
// in a module was once per bundle: every suite added another exit listener to the extension
// host (MaxListenersExceededWarning: 11 exit listeners). The registry lives under a global
// symbol, so every copy of this module finds the same one and the listener is added once.

interface Registry {
  cleanups: Map<string, () => void>;
  listener: () => void;
}

const KEY = Symbol.for('test-inbox.test.atExit');

function registry(): Registry {
  const g = globalThis as { [KEY]?: Registry };
  let r = g[KEY];
  if (!r) {
    const cleanups = new Map<string, () => void>();
    const listener = () => {
      for (const [, fn] of cleanups) {
        try {
          fn();
        } catch {
          // Exiting: one failed cleanup must not stop the others.
        }
      }
      cleanups.clear();
    };
    r = { cleanups, listener };
    g[KEY] = r;
    process.once('exit', listener);
  }
  return r;
}

/**
 * Runs `fn` once when the process exits. `key` names the cleanup: a second registration under
 * the same key (another suite bundle's copy of the same helper) replaces the first instead of
 * adding one, so a cleanup registered per bundle still runs once.
 */
export function atExit(key: string, fn: () => void): void {
  registry().cleanups.set(key, fn);
}
