// A small driver run inside the workbench's extension host (as its extensionTestsPath entry):
// it answers the bench over a loopback HTTP port and runs commands there, reads the host's heap
// after full garbage collections, and writes heap snapshots. Used by the heap and message-open
// benches; the host stays up until `done()`.
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TEST_HOOKS_ENV } from '../../src/extension/commandIds';

/** Waits for the driver's port file. */
const DRIVER_TIMEOUT_MS = 60_000;

/** The driver (plain CommonJS: the host loads it as is). */
const DRIVER = `
const vscode = require('vscode');
const http = require('http');
const v8 = require('v8');
const vm = require('vm');
const fs = require('fs');
exports.run = () => new Promise((resolve) => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const read = (req) => new Promise((ok) => { let s = ''; req.on('data', (c) => (s += c)); req.on('end', () => ok(s)); });
  const server = http.createServer(async (req, res) => {
    try {
      let out = {};
      if (req.url === '/heap') {
        gc(); gc();
        out = { heapUsed: process.memoryUsage().heapUsed };
      } else if (req.url === '/snapshot') {
        const body = JSON.parse(await read(req));
        gc(); gc();
        out = { file: v8.writeHeapSnapshot(body.file) };
      } else if (req.url === '/command') {
        const body = JSON.parse(await read(req));
        out = { result: await vscode.commands.executeCommand(body.id, ...(body.args || [])) };
      } else if (req.url === '/done') {
        setTimeout(() => { server.close(); resolve(); }, 10);
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(out));
    } catch (e) {
      res.statusCode = 500;
      res.end(JSON.stringify({ message: String((e && e.stack) || e) }));
    }
  });
  server.listen(0, '127.0.0.1', () => fs.writeFileSync(process.env.TEST_INBOX_BENCH_DRIVER_PORT, String(server.address().port)));
});
`;

export interface HostDriverFiles {
  /** The extensionTestsPath entry to give startWorkbench. */
  entry: string;
  /** Environment for startWorkbench: where the driver writes its port. */
  env: Record<string, string>;
  /** Connects once the host has started the driver. */
  connect(): Promise<HostDriver>;
}

export interface HostDriver {
  /** Runs a command in the extension host and returns its result. */
  command<T = unknown>(id: string, ...args: unknown[]): Promise<T>;
  /** The host's heapUsed in MB after two full garbage collections. */
  heapMb(): Promise<number>;
  /** Writes a heap snapshot (after two full garbage collections) to `file`. */
  snapshot(file: string): Promise<string>;
  /** Lets the host's test entry finish. */
  done(): Promise<void>;
}

async function waitForFile(file: string, timeoutMs: number): Promise<string> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const text = await fsp.readFile(file, 'utf8').catch(() => '');
    if (text) return text;
    if (Date.now() > deadline) throw new Error(`the extension-host driver did not start within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Writes the driver into `dir` (a temp folder the caller removes). */
export function writeHostDriver(dir: string): HostDriverFiles {
  const entry = path.join(dir, 'driver.js');
  const portFile = path.join(dir, 'driver.port');
  fs.writeFileSync(entry, DRIVER);
  return {
    entry,
    // The driver calls testInbox._debugState: the test hooks are on even when the extension runs from a VSIX.
    env: { TEST_INBOX_BENCH_DRIVER_PORT: portFile, [TEST_HOOKS_ENV]: '1' },
    async connect() {
      const base = `http://127.0.0.1:${(await waitForFile(portFile, DRIVER_TIMEOUT_MS)).trim()}`;
      const call = async <T>(route: string, body?: unknown): Promise<T> => {
        const res = await fetch(base + route, { method: body === undefined ? 'GET' : 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
        const json = (await res.json()) as T & { message?: string };
        if (!res.ok) throw new Error(`driver ${route}: ${json.message}`);
        return json;
      };
      return {
        command: async <T>(id: string, ...args: unknown[]) => (await call<{ result: T }>('/command', { id, args })).result,
        heapMb: async () => (await call<{ heapUsed: number }>('/heap')).heapUsed / 1024 / 1024,
        snapshot: async (file: string) => (await call<{ file: string }>('/snapshot', { file })).file,
        done: async () => {
          await call('/done');
        },
      };
    },
  };
}
