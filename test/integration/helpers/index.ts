// Shared helpers for suites running inside the extension host.
import * as vscode from 'vscode';
import { ENV } from '../../../scripts/integration/config';

/** The extension's id: `${publisher}.${name}` from package.json. */
export const EXTENSION_ID = 'test-inbox.test-inbox';
/** Default for waitFor: UI updates and a local server start normally take well under this. */
export const WAIT_FOR_TIMEOUT_MS = 10_000;
/** How often waitFor checks its condition. */
export const WAIT_FOR_INTERVAL_MS = 50;

/** Which runner started this extension host, as told by the runner; undefined outside it. */
export function hostKind(): 'code-server' | 'electron' | undefined {
  const kind = process.env[ENV.hostKind];
  return kind === 'code-server' || kind === 'electron' ? kind : undefined;
}

/** The extension under test; throws when the host did not load it. */
export function getExtension(): vscode.Extension<unknown> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  if (!ext) throw new Error(`Extension ${EXTENSION_ID} is not loaded in this extension host.`);
  return ext;
}

/** Activates the extension under test (idempotent) and returns its exports. */
export async function activateExtension<T = unknown>(): Promise<T> {
  return (await getExtension().activate()) as T;
}

export interface WaitForOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Names what was awaited, for the timeout error. */
  message?: string;
}

/**
 * Polls `condition` until it returns a value other than undefined, null or false and
 * resolves with that value; rejects after the timeout with the last error it threw.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, options: WaitForOptions = {}): Promise<Exclude<T, undefined | null | false>> {
  const timeoutMs = options.timeoutMs ?? WAIT_FOR_TIMEOUT_MS;
  const intervalMs = options.intervalMs ?? WAIT_FOR_INTERVAL_MS;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const what = options.message ?? 'condition';
      const why = lastError instanceof Error ? `: last error: ${lastError.message}` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
