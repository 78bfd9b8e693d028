// Our server as users run it: the built CLI `node dist/cli.js serve …` in a child process,
// tokens given through the environment, ready when it prints its JSON line.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { generateToken, parseReadyLine, type ReadyLine, serveArgs, tokensEnv } from '../../src/shared/contract';
import { rssMb, startWithReadyLine, type Started } from './procs';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
/**
 * The tree whose build is measured: this checkout, or another commit's build that
 * `npm run bench -- --against <ref>` prepared (bench/against.ts) and names in this variable.
 * The load generators and the report are always this checkout's.
 */
export const PRODUCT_ENV = 'TEST_INBOX_BENCH_PRODUCT';
export const PRODUCT_ROOT = process.env[PRODUCT_ENV] ? path.resolve(process.env[PRODUCT_ENV]) : REPO_ROOT;
export const CLI = path.join(PRODUCT_ROOT, 'dist', 'cli.js');

export type { ReadyLine };

export interface OursOptions {
  dataDir: string;
  /** Extra CLI arguments, e.g. retention switches. */
  args?: string[];
  /** Extra node arguments, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
}

export interface Ours extends Started<ReadyLine> {
  apiToken: string;
  webhookToken: string;
  /** RSS in MB read right after the ready line. */
  rssAtReadyMb: number;
}

/** Random tokens for one bench run; never printed. */
export function benchTokens(): { apiToken: string; webhookToken: string } {
  return { apiToken: generateToken(), webhookToken: generateToken() };
}

export function cliBuilt(): boolean {
  return existsSync(CLI);
}

/** `serve --help` text, or '' when the CLI does not answer it. */
export function serveHelp(): string {
  try {
    return execFileSync(process.execPath, [CLI, ...serveArgs({}), '--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return `${err.stdout ?? ''}${err.stderr ?? ''}`;
  }
}

/** Retention switches that keep every message, when the CLI offers them. */
export function keepEverythingArgs(help: string): string[] {
  const args: string[] = [];
  if (help.includes('--max-messages')) args.push('--max-messages', '0');
  if (help.includes('--max-age')) args.push('--max-age', '0');
  return args;
}

export async function startOurs(opts: OursOptions, tokens = benchTokens()): Promise<Ours> {
  const args = [...(opts.nodeArgs ?? []), CLI, ...serveArgs({ httpPort: 0, smtpPort: 0, dataDir: opts.dataDir }), ...(opts.args ?? [])];
  const env = { ...process.env, ...tokensEnv(tokens) };
  const started = await startWithReadyLine<ReadyLine>(process.execPath, args, { env, cwd: PRODUCT_ROOT }, parseReadyLine);
  const rss = rssMb(started.child.pid ?? 0);
  return { ...started, ...tokens, rssAtReadyMb: rss };
}

/** Last warning and error lines of the server's stderr (tokens never appear there), or undefined. */
export function complaints(stderr: string, max = 3): string | undefined {
  const lines = stderr.split('\n').filter((l) => / (warn|error) /.test(l));
  return lines.length ? lines.slice(-max).join(' | ') : undefined;
}

/**
 * How far a Maildir server's files are behind its acknowledgements right now: `.eml` files in
 * `<dataDir>/mail/<domain>/<inbox>/new/` against the messages its domain list counts. A store
 * that acknowledges from its log writes files afterwards; one whose writer falls behind looks
 * cheaper inside a window than it is, since the writes it owes are done after the window.
 */
export async function filesWritten(ours: Ours, dataDir: string): Promise<{ files: number; stored: number } | undefined> {
  try {
    const res = await fetch(`${ours.ready.http}/api/v2/domains`, { headers: { authorization: ours.apiToken } });
    const stored = ((await res.json()) as { domains: Array<{ messages: number }> }).domains.reduce((n, d) => n + d.messages, 0);
    let files = 0;
    const root = path.join(dataDir, 'mail');
    for (const domain of readdirSync(root)) {
      for (const inbox of readdirSync(path.join(root, domain))) {
        try {
          files += readdirSync(path.join(root, domain, inbox, 'new')).length;
        } catch {
          // not an inbox folder
        }
      }
    }
    return { files, stored };
  } catch {
    return undefined;
  }
}
