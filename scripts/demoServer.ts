// The local inbox server as `npm start`, the screenshots, the e2e tests and the arrival
// bench run it: the built CLI (dist/cli.js `serve`) in a child process, with tokens it
// generates into its tokens file (`<data-dir>/tokens.json`) — so a VS Code window whose settings point at the
// same ports and data folder ATTACHES to it (src/extension/connection/connection.ts) — plus the sample
// messages the README shows.
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import nodemailer from 'nodemailer';
import {
  DEFAULT_DOMAIN,
  EXIT_PORT_IN_USE,
  parseReadyLine,
  type ReadyLine,
  readTokensFile,
  serveArgs,
  stopServerProcess,
  TOKENS_FILE,
  TokensFileProblem,
  withoutTokensEnv,
} from '../src/shared/contract';

/** Repository root (this file is scripts/demoServer.ts). */
export const REPO_ROOT = path.resolve(__dirname, '..');
/** The built CLI; `npm run build` writes it. */
export const CLI_PATH = path.join(REPO_ROOT, 'dist', 'cli.js');
/** The CLI reads its Maildir index before it prints the ready line; generous for a busy 2-core machine. */
const READY_TIMEOUT_MS = 30_000;
/** A clean shutdown takes milliseconds; after this the process is killed. */
const STOP_TIMEOUT_MS = 5_000;

/** The sample messages: what the README's screenshots and `npm start` show. */
export const SAMPLES = {
  emailInbox: 'demo',
  domain: DEFAULT_DOMAIN,
  reportSubject: 'Your November report',
  signupSubject: 'Confirm your email address',
  signupCode: '482913',
  /** The signup mail's verification link (the message view marks it; Copy Verification Link copies it). */
  signupLink: 'https://acme.test/verify-email?token=q7Xr2mK4',
  smsInbox: '15555550123',
  smsCode: '731904',
} as const;

export type DemoServerErrorCode = 'NOT_BUILT' | 'port_in_use' | 'START_FAILED' | 'SEED_FAILED';

export class DemoServerError extends Error {
  constructor(
    readonly code: DemoServerErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DemoServerError';
  }

  static is(e: unknown, code?: DemoServerErrorCode): e is DemoServerError {
    return e instanceof DemoServerError && (code === undefined || e.code === code);
  }
}

export interface DemoServerOptions {
  /** Kept after stop(); a fresh temp folder (removed by stop()) when omitted. */
  dataDir?: string;
  /** 0 picks a free port (the default). */
  httpPort?: number;
  smtpPort?: number;
  /** Extra CLI arguments for `serve`. */
  extraArgs?: string[];
}

export interface DemoServer {
  /** e.g. http://127.0.0.1:41234 */
  http: string;
  httpPort: number;
  smtpHost: string;
  smtpPort: number;
  dataDir: string;
  apiToken: string;
  webhookToken: string;
  child: ChildProcess;
  /** Settings that make the extension attach to this server. */
  extensionSettings: Record<string, unknown>;
  stop(): Promise<void>;
}

/** Starts `dist/cli.js serve`; resolves once it printed its ready line and wrote its tokens. */
export async function startDemoServer(options: DemoServerOptions = {}): Promise<DemoServer> {
  try {
    await fsp.access(CLI_PATH);
  } catch {
    throw new DemoServerError('NOT_BUILT', `${path.relative(process.cwd(), CLI_PATH)} is missing; run \`npm run build\` first.`);
  }
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await fsp.mkdtemp(path.join(os.tmpdir(), 'test-inbox-demo-')));
  const args = [CLI_PATH, ...serveArgs({ dataDir, httpPort: options.httpPort ?? 0, smtpPort: options.smtpPort ?? 0 }), ...(options.extraArgs ?? [])];
  // No tokens in the environment: the CLI generates them into its tokens file, where an attaching extension reads them.
  const env = withoutTokensEnv(process.env);
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stopChild = async (): Promise<void> => {
    await stopServerProcess(child, STOP_TIMEOUT_MS);
    await exited;
  };
  const removeOwnDir = () => (ownDir ? fsp.rm(dataDir, { recursive: true, force: true }) : Promise.resolve());

  let ready: ReadyLine;
  try {
    ready = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new DemoServerError('START_FAILED', `the server did not get ready within ${READY_TIMEOUT_MS / 1000} s:\n${stderr}`)), READY_TIMEOUT_MS);
      const lines = createInterface({ input: child.stdout! });
      lines.once('line', (line) => {
        clearTimeout(timer);
        const parsed = parseReadyLine(line);
        if (parsed) resolve(parsed);
        else reject(new DemoServerError('START_FAILED', `unexpected first line from the server: ${line}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        const codeName = code === EXIT_PORT_IN_USE ? 'port_in_use' : 'START_FAILED';
        reject(new DemoServerError(codeName, `the server exited with code ${code} before it was ready:\n${stderr.trim()}`));
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    await removeOwnDir();
    throw err;
  }

  const tokens = await readTokensFile(path.join(dataDir, TOKENS_FILE), (f) => fsp.readFile(f, 'utf8'));
  if (TokensFileProblem.is(tokens) || !tokens.apiToken || !tokens.webhookToken) {
    await stopChild();
    await removeOwnDir();
    throw new DemoServerError('START_FAILED', `the server is ready but wrote no tokens: ${TokensFileProblem.is(tokens) ? tokens.message : 'a token is missing'}`);
  }
  const { host: smtpHost, port: smtpPort } = ready.smtp;
  const httpPort = Number(new URL(ready.http).port);
  const stop = async (): Promise<void> => {
    await stopChild();
    await removeOwnDir();
  };
  return {
    http: ready.http,
    httpPort,
    smtpHost,
    smtpPort,
    dataDir,
    apiToken: tokens.apiToken,
    webhookToken: tokens.webhookToken,
    child,
    extensionSettings: {
      'testInbox.server': 'local',
      'testInbox.local.httpPort': httpPort,
      'testInbox.local.smtpPort': smtpPort,
      'testInbox.local.dataFolder': dataDir,
    },
    stop,
  };
}

/** Sends one email over SMTP; resolves at the server's 250 reply. */
export async function sendMail(server: Pick<DemoServer, 'smtpHost' | 'smtpPort'>, mail: nodemailer.SendMailOptions): Promise<void> {
  const transport = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail(mail);
  } finally {
    transport.close();
  }
}

/** Seeds the samples: an HTML email with an attachment, a sign-up email with a code, an SMS with a code. */
export async function seedSamples(server: DemoServer): Promise<void> {
  const to = `${SAMPLES.emailInbox}@${SAMPLES.domain}`;
  await sendMail(server, {
    from: 'Acme Newsletter <news@acme.test>',
    to,
    subject: SAMPLES.reportSubject,
    text: 'Your November report is attached.\n\nView online: https://acme.test/reports/11',
    html: '<h1 style="color:#0b7">Your November report</h1><p>It is attached. <a href="https://acme.test/reports/11">View online</a>.</p>',
    attachments: [{ filename: 'report.csv', content: 'month,signups\n2026-11,42\n', contentType: 'text/csv' }],
  });
  await sendMail(server, {
    from: 'Acme <no-reply@acme.test>',
    to,
    subject: SAMPLES.signupSubject,
    text: `Welcome to Acme!\n\nYour verification code is ${SAMPLES.signupCode.slice(0, 3)} ${SAMPLES.signupCode.slice(3)}.\nIt expires in 10 minutes.\n\nOr confirm your email address: ${SAMPLES.signupLink}`,
    html: `<p>Welcome to Acme!</p><p>Your verification code is <b>${SAMPLES.signupCode.slice(0, 3)} ${SAMPLES.signupCode.slice(3)}</b>.</p><p>It expires in 10 minutes.</p><p>Or <a href="${SAMPLES.signupLink}">confirm your email address</a>.</p>`,
  });
  const res = await fetch(`${server.http}/api/v2/domains/private/inboxes/${SAMPLES.smsInbox}`, {
    method: 'POST',
    headers: { authorization: server.apiToken, 'content-type': 'application/json' },
    body: JSON.stringify({ from: '15555550100', text: `Your Acme login code is ${SAMPLES.smsCode}. Do not share it.\n\n@acme.test #${SAMPLES.smsCode}` }),
  });
  if (!res.ok) throw new DemoServerError('SEED_FAILED', `injecting the sample SMS failed: HTTP ${res.status} ${await res.text()}`);
}
