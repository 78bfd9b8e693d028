// The embedded local inbox server as a child process: fork
// dist/cli.js `serve` with ELECTRON_RUN_AS_NODE=1, or attach to a Test Inbox server that a
// second window (or a terminal) already runs on the port. No vscode import.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import {
  DEFAULT_HOST,
  EXIT_DATA_DIR_IN_USE,
  EXIT_PORT_IN_USE,
  checkHealthProof,
  parseReadyLine,
  readServerFile,
  SERVER_FILE,
  ServerFileProblem,
  secretFileProblem,
  serveArgs,
  stopServerProcess,
  tokensEnv,
  withoutTokensEnv,
  type Durability,
} from '../../shared/contract';
import { LocalServerError } from '../errors';
import type { Logger } from '../log';
import { Emitter } from '../util/emitter';
import { sleep } from '../../core/sleep';

/** The local server only ever binds loopback: its API is for this machine only. */
export const LOCAL_HOST = DEFAULT_HOST;
/** A healthy server answers /healthz in milliseconds; 1.5 s allows for a busy machine. */
const HEALTH_TIMEOUT_MS = 1500;
/** Start-up reads the Maildir index; 20 s covers a large data folder on a slow disk. */
const READY_TIMEOUT_MS = 20_000;
/** Grace period for a clean shutdown before SIGKILL. */
const STOP_TIMEOUT_MS = 5000;
/** How long to wait for the server that holds the data folder to answer on the port: it may be reading a large folder (ready ≤ 2 s for 100,000 messages). */
const DATA_DIR_WAIT_MS = 10_000;
/** A starting server writes its server file within milliseconds of answering /healthz; 3 s allows for a busy machine. */
const PROOF_WAIT_MS = 3000;
/** How often to ask it meanwhile. */
const DATA_DIR_POLL_MS = 200;
/** Keep at most this much of the child's stderr for error messages. */
const MAX_STDERR_KEPT = 4000;

export interface LocalServerOptions {
  cliPath: string;
  /** Node runtime to fork with; default process.execPath (Electron acts as Node with ELECTRON_RUN_AS_NODE). */
  execPath?: string;
  /** Extra Node flags, e.g. `--import tsx` to run the TypeScript CLI in tests. */
  execArgv?: string[];
  httpPort: number;
  smtpPort: number;
  dataDir: string;
  domain: string;
  maxMessages?: number;
  /** Retention by age, in seconds. */
  maxAgeSeconds?: number;
  /** Offer STARTTLS with the data folder's self-signed certificate (`testInbox.local.smtpTls`). */
  smtpTls?: boolean;
  /** What an acknowledgement waits for (`testInbox.local.durability`); absent: the CLI's default. */
  durability?: Durability;
  /** Serve the drop-in APIs (`testInbox.local.compat`, `--compat`). */
  compat?: boolean;
  /** Tokens to hand the server; absent (the extension's way): it uses its data folder's tokens file. */
  apiToken?: string;
  webhookToken?: string;
  twilioAuthToken?: string;
  log: Logger;
  readyTimeoutMs?: number;
  /** Default DATA_DIR_WAIT_MS. */
  dataDirWaitMs?: number;
  /** Default PROOF_WAIT_MS. */
  proofWaitMs?: number;
}

interface RunningServer {
  /** Base URL of the HTTP API, e.g. http://127.0.0.1:2580 */
  http: string;
  smtp: { host: string; port: number };
  /** `started`: our child process; `attached`: a server someone else runs. */
  mode: 'started' | 'attached';
  /** What its server file proved (pid, which tokens it takes): asked of every server, ours too, before any token is read or sent. */
  proven: ProvenServer;
}

/** A server that answered the health challenge with the key of our data folder's server file. */
export interface ProvenServer {
  pid: number;
  apiTokenSha256: string;
  webhookTokenSha256: string;
}

type HealthProbe = 'test-inbox' | 'other' | 'none';

/** Asks `GET /healthz` whether a Test Inbox server listens on the port. */
export async function probeHealth(httpUrl: string, timeoutMs = HEALTH_TIMEOUT_MS): Promise<HealthProbe> {
  let res: Response;
  try {
    res = await fetch(`${httpUrl}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    // Refused: nothing listens. A timeout means something holds the port without answering HTTP.
    const cause = (e as { cause?: { code?: string } }).cause;
    if (cause?.code === 'ECONNREFUSED' || cause?.code === 'ECONNRESET') return 'none';
    return (e as { name?: string }).name === 'TimeoutError' ? 'other' : 'none';
  }
  try {
    const body = (await res.json()) as { service?: unknown };
    return res.ok && body && body.service === 'test-inbox' ? 'test-inbox' : 'other';
  } catch {
    return 'other';
  }
}

/** Owns at most one child process. */
export class LocalServer {
  private child: ChildProcess | undefined;
  private running: RunningServer | undefined;
  private readonly exitEmitter = new Emitter<{ code: number | null; signal: string | null }>();
  /** Fires when our child process ends without `stop()` being asked. */
  readonly onUnexpectedExit = this.exitEmitter.event;

  constructor(private readonly opts: LocalServerOptions) {}

  get current(): RunningServer | undefined {
    return this.running;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Attaches to a Test Inbox server on the port or starts one. */
  async start(): Promise<RunningServer> {
    if (this.running) return this.running;
    const o = this.opts;
    const configuredUrl = `http://${LOCAL_HOST}:${o.httpPort}`;
    if (o.httpPort !== 0) {
      const probe = await probeHealth(configuredUrl);
      if (probe === 'test-inbox') return this.attach(configuredUrl, await this.prove(configuredUrl));
      if (probe === 'other') throw portTaken('HTTP', o.httpPort);
    }
    try {
      const started = await this.spawn();
      try {
        started.proven = await this.prove(started.http);
      } catch (e) {
        await this.stop();
        throw e;
      }
      return started;
    } catch (e) {
      // Another window may have won the race for the port: attach to it.
      if (LocalServerError.is(e, 'port_taken') && o.httpPort !== 0 && e.port === o.httpPort) {
        if ((await probeHealth(configuredUrl)) === 'test-inbox') return this.attach(configuredUrl, await this.prove(configuredUrl));
      }
      // ...or for the data folder, and be still reading it: wait for it to answer on the port.
      if (LocalServerError.is(e, 'data_dir_in_use')) {
        if (o.httpPort !== 0 && (await this.awaitHealthy(configuredUrl))) return this.attach(configuredUrl, await this.prove(configuredUrl));
        throw new LocalServerError(
          'data_dir_in_use',
          `Another Test Inbox server uses the data folder ${o.dataDir}` +
            (o.httpPort !== 0 ? ` but does not answer on port ${o.httpPort}` : '') +
            `. Stop it, or give this window another port and data folder. (${e.message})`,
        );
      }
      throw e;
    }
  }

  /** Whether a Test Inbox server answers at `url` within dataDirWaitMs. */
  private async awaitHealthy(url: string): Promise<boolean> {
    const deadline = Date.now() + (this.opts.dataDirWaitMs ?? DATA_DIR_WAIT_MS);
    for (;;) {
      if ((await probeHealth(url)) === 'test-inbox') return true;
      if (Date.now() >= deadline) return false;
      await sleep(DATA_DIR_POLL_MS);
    }
  }

  /**
   * Whether the server answering at `url` is the one our data folder's server file names: the
   * file (ours, not readable by others) is for this URL, and the server answers a fresh
   * challenge with the HMAC keyed by the file's key. Throws `not_proven`, saying why, otherwise.
   * Nothing but the challenge is sent before the proof: no token.
   */
  private async prove(url: string): Promise<ProvenServer> {
    // A server answers /healthz a moment before its server file is written (both ports must
    // listen first): ask again for a short while before refusing.
    const deadline = Date.now() + (this.opts.proofWaitMs ?? PROOF_WAIT_MS);
    for (;;) {
      try {
        return await this.proveOnce(url);
      } catch (e) {
        if (!LocalServerError.is(e, 'not_proven') || Date.now() >= deadline) throw e;
      }
      await sleep(DATA_DIR_POLL_MS);
    }
  }

  private async proveOnce(url: string): Promise<ProvenServer> {
    const o = this.opts;
    const file = path.join(o.dataDir, SERVER_FILE);
    const refuse = (why: string): LocalServerError =>
      new LocalServerError(
        'not_proven',
        `A program on port ${o.httpPort} answers like a Test Inbox server, but ${why}. It may be another user's program, so no token was sent to it. Stop it or choose another port; if it is your own \`test-inbox serve\` with another --data-dir, set testInbox.local.dataFolder to that folder.`,
        o.httpPort,
      );
    const proof = await readServerFile(file, (f) => fs.readFile(f, 'utf8'));
    if (ServerFileProblem.is(proof)) {
      throw refuse(proof.code === 'server_file_missing' ? `the data folder ${o.dataDir} has no ${SERVER_FILE} from a running server` : `${SERVER_FILE} in the data folder is unusable (${proof.message})`);
    }
    const ownProblem = await secretFileProblem(file);
    if (ownProblem) throw refuse(`${SERVER_FILE} ${ownProblem}`);
    if (proof.http !== url) throw refuse(`the server of the data folder ${o.dataDir} listens at ${proof.http}, not ${url}`);
    const check = await checkHealthProof(url, proof.key, AbortSignal.timeout(HEALTH_TIMEOUT_MS));
    if (check.unanswered !== undefined) throw refuse(`it did not answer the identity check (${check.unanswered})`);
    if (!check.proven) throw refuse(`it could not prove it is the server of the data folder ${o.dataDir}`);
    return { pid: proof.pid, apiTokenSha256: proof.apiTokenSha256, webhookTokenSha256: proof.webhookTokenSha256 };
  }

  private attach(http: string, proven: ProvenServer): RunningServer {
    this.opts.log.info(`Attached to the Test Inbox server already running at ${http} (pid ${proven.pid}); it proved it serves ${this.opts.dataDir}.`);
    this.running = { http, smtp: { host: LOCAL_HOST, port: this.opts.smtpPort }, mode: 'attached', proven };
    return this.running;
  }

  private spawn(): Promise<RunningServer> {
    const o = this.opts;
    if (!existsSync(o.cliPath)) {
      return Promise.reject(new LocalServerError('cli_missing', `The local server program is missing (${o.cliPath}). Reinstall the extension.`));
    }
    const args = serveArgs({
      host: LOCAL_HOST,
      httpPort: o.httpPort,
      smtpPort: o.smtpPort,
      dataDir: o.dataDir,
      domain: o.domain,
      maxMessages: o.maxMessages,
      maxAgeSeconds: o.maxAgeSeconds,
      smtpTls: o.smtpTls,
      durability: o.durability,
      compat: o.compat,
    });
    o.log.info(`Starting the local server: ${path.basename(o.cliPath)} ${args.join(' ')}`);
    const child = fork(o.cliPath, args, {
      execPath: o.execPath ?? process.execPath,
      execArgv: o.execArgv ?? [],
      env: {
        // Tokens of the extension host's own environment never reach the server.
        ...withoutTokensEnv(process.env),
        ELECTRON_RUN_AS_NODE: '1',
        ...(o.apiToken && o.webhookToken ? tokensEnv({ apiToken: o.apiToken, webhookToken: o.webhookToken, twilioAuthToken: o.twilioAuthToken }) : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child = child;
    let stderr = '';
    let stdoutBuf = '';
    return new Promise<RunningServer>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        finish(new LocalServerError('start_timeout', `The local server did not start within ${Math.round((o.readyTimeoutMs ?? READY_TIMEOUT_MS) / 1000)} s. See the log.`));
        child.kill('SIGKILL');
      }, o.readyTimeoutMs ?? READY_TIMEOUT_MS);
      const finish = (result: RunningServer | Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => {
        stdoutBuf += chunk;
        let nl: number;
        while ((nl = stdoutBuf.indexOf('\n')) >= 0) {
          const line = stdoutBuf.slice(0, nl).trim();
          stdoutBuf = stdoutBuf.slice(nl + 1);
          if (!line) continue;
          const ready = settled ? undefined : parseReadyLine(line);
          if (ready) {
            // Proven by start() before anyone reads a token; the pid is our child's until then.
            this.running = { ...ready, mode: 'started', proven: { pid: child.pid ?? 0, apiTokenSha256: '', webhookTokenSha256: '' } };
            o.log.info(`Local server ready: HTTP ${ready.http}, SMTP ${ready.smtp.host}:${ready.smtp.port} (pid ${child.pid}).`);
            finish(this.running);
          } else o.log.info(`[server] ${line}`);
        }
      });
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-MAX_STDERR_KEPT);
        for (const line of chunk.split('\n')) if (line.trim()) o.log.info(`[server] ${line.trim()}`);
      });
      child.on('error', (e) => finish(new LocalServerError('start_failed', `The local server could not be started: ${e.message}`)));
      child.on('exit', (code, signal) => {
        const wasRunning = this.running?.mode === 'started' && this.child === child;
        if (this.child === child) {
          this.child = undefined;
          this.running = undefined;
        }
        o.log.info(`Local server exited (code ${code ?? '-'}${signal ? `, signal ${signal}` : ''}).`);
        if (!settled) {
          const lastLine = stderr.trim().split('\n').pop()?.trim() ?? '';
          if (code === EXIT_PORT_IN_USE) {
            const which = /smtp/i.test(lastLine) ? 'SMTP' : 'HTTP';
            const port = which === 'SMTP' ? o.smtpPort : o.httpPort;
            finish(portTaken(which, port, lastLine));
          } else if (code === EXIT_DATA_DIR_IN_USE) {
            finish(new LocalServerError('data_dir_in_use', lastLine.replace(/^test-inbox: /, '') || 'the data folder is in use'));
          } else {
            finish(new LocalServerError('start_failed', `The local server stopped while starting (exit code ${code ?? signal}): ${lastLine || 'no message'}`));
          }
        } else if (wasRunning) {
          this.exitEmitter.fire({ code, signal });
        }
      });
    });
  }

  /** Stops our child process (an attached server belongs to someone else and keeps running). */
  async stop(): Promise<void> {
    const child = this.child;
    this.running = undefined;
    this.child = undefined;
    if (!child) return;
    // Through the IPC channel (contract.ts stopServerProcess): on Windows SIGTERM would be
    // TerminateProcess, and every stop by the editor an unclean one.
    const how = await stopServerProcess(child, STOP_TIMEOUT_MS);
    if (how === 'killed') this.opts.log.warn(`The local server did not stop within ${STOP_TIMEOUT_MS / 1000} s and was killed; its next start recovers.`);
  }

  dispose(): void {
    void this.stop();
    this.exitEmitter.dispose();
  }
}

function portTaken(which: 'HTTP' | 'SMTP', port: number, detail?: string): LocalServerError {
  return new LocalServerError(
    'port_taken',
    `Port ${port} (${which}) is used by another program${detail ? ` (${detail})` : ''}. Choose another port in the settings.`,
    port,
  );
}

