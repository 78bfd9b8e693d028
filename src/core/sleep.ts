// The one sleep: resolves after `ms`, or rejects at once when `signal` aborts (with `aborted()`,
// by default the signal's reason). The client's retries and its waits both use it.
export function sleep(ms: number, signal?: AbortSignal, aborted: () => unknown = () => signal?.reason): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted());
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
