// Which server the extension talks to and the client for it: the embedded local server
// (started on first use, or attached to) or a hosted URL with its token from SecretStorage.
// No vscode import.
import { mkdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { ApiError } from '../api/errors';
import type { InboxApi } from '../api/types';
import type { TokenStore } from './config/secrets';
import type { Settings } from './config/settings';
import { generateToken, readTokensFile, tokenDigest, TOKENS_FILE, TokensFileProblem } from '../server/contract';
import { ConfirmedServers, REASON_TEXT, trustReasons, type TrustReason } from './config/serverTrust';
import { ExtensionError } from './errors';
import { errorText, type Logger } from './log';
import { LOCAL_HOST, LocalServer, LocalServerError, type LocalServerOptions, type ProvenServer } from './localServer';
import { Emitter } from './util/emitter';

/** Seconds in a day, for the retention setting (days) → CLI flag (seconds). */
const DAY_SECONDS = 86_400;
/** Owner only: the data folder holds mail, tokens.json and the server's proof file. */
const DATA_DIR_MODE = 0o700;

export interface ServerInfo {
  baseUrl: string;
  local: boolean;
  /** Local only: whether we run the process or attached to someone else's. */
  mode?: 'started' | 'attached';
  /** Attached only: the pid its server file names. */
  pid?: number;
  smtp?: { host: string; port: number };
  /** Local only: the data folder (where the SMTP TLS certificate is generated). */
  dataDir?: string;
}

export type ConnectionState =
  | { kind: 'idle' }
  | { kind: 'starting' }
  | { kind: 'ready'; server: ServerInfo }
  | { kind: 'noToken'; baseUrl: string }
  | { kind: 'stopped' }
  | { kind: 'failed'; error: unknown };

export interface ConnectionDeps {
  settings(): Settings;
  tokens: TokenStore;
  log: Logger;
  createApi(opts: { baseUrl: string; apiToken?: string }): InboxApi;
  /** Confirmations of hosted URLs the workspace chose or that use plain http to another machine. */
  trust: ConfirmedServers;
  /** dist/cli.js */
  cliPath: string;
  /** Data folder when the setting is empty. */
  defaultDataDir: string;
  /** Test hook: Node flags for the forked CLI. */
  execArgv?: string[];
  execPath?: string;
}

function stale(): ApiError {
  return new ApiError('cancelled', 'The server settings changed while connecting.');
}

/** The URL local tokens are keyed by: the configured port, known before the server starts. */
export function localTokenKey(settings: Settings): string {
  return `http://${LOCAL_HOST}:${settings.httpPort}`;
}

export class Connection {
  private stateValue: ConnectionState = { kind: 'idle' };
  private api: InboxApi | undefined;
  private server: LocalServer | undefined;
  private pending: Promise<InboxApi> | undefined;
  /** Tokens our own process was started with. */
  private startedWith: { apiToken: string; webhookToken: string; twilioAuthToken: string } | undefined;
  private generation = 0;
  private readonly stateEmitter = new Emitter<ConnectionState>();
  readonly onDidChangeState = this.stateEmitter.event;

  constructor(private readonly deps: ConnectionDeps) {}

  get state(): ConnectionState {
    return this.stateValue;
  }

  private setState(s: ConnectionState): void {
    this.stateValue = s;
    this.stateEmitter.fire(s);
  }

  /** The URL tokens of the configured server are stored under. */
  tokenKey(): string {
    const s = this.deps.settings();
    return s.server.kind === 'remote' ? s.server.baseUrl : localTokenKey(s);
  }

  /** Human description of the configured server, for messages. */
  describe(): string {
    const s = this.deps.settings();
    return s.server.kind === 'remote' ? s.server.baseUrl : 'the local server';
  }

  get isLocal(): boolean {
    return this.deps.settings().server.kind === 'local';
  }

  /** The client, connecting (and starting the local server) on first use. */
  ensure(): Promise<InboxApi> {
    if (this.api && this.stateValue.kind === 'ready') return Promise.resolve(this.api);
    if (this.stateValue.kind === 'stopped') {
      return Promise.reject(new ExtensionError('noServer', 'The local server is stopped. Start it to see mail.'));
    }
    // No silent retry loop after a failure: Retry (Refresh) or a settings/token change resets.
    if (this.stateValue.kind === 'failed') return Promise.reject(this.stateValue.error);
    if (!this.pending) {
      const gen = this.generation;
      this.pending = this.connect(gen).finally(() => {
        if (gen === this.generation) this.pending = undefined;
      });
    }
    return this.pending;
  }

  /** Like ensure() but never starts anything: the client if connected. */
  current(): InboxApi | undefined {
    return this.stateValue.kind === 'ready' ? this.api : undefined;
  }

  private async connect(gen: number): Promise<InboxApi> {
    const settings = this.deps.settings();
    this.setState({ kind: 'starting' });
    try {
      const { api, server } = settings.server.kind === 'remote' ? await this.connectRemote(settings.server.baseUrl) : await this.connectLocal(settings, gen);
      if (gen !== this.generation) {
        void api.dispose();
        throw stale();
      }
      this.api = api;
      this.setState({ kind: 'ready', server });
      return api;
    } catch (e) {
      if (gen === this.generation) {
        if (ApiError.is(e, 'unauthorized') && settings.server.kind === 'remote' && !(await this.deps.tokens.get('api', settings.server.baseUrl))) {
          this.setState({ kind: 'noToken', baseUrl: settings.server.baseUrl });
        } else {
          this.deps.log.error(`Connecting to ${this.describe()} failed: ${errorText(e)}`);
          this.setState({ kind: 'failed', error: e });
        }
      }
      throw e;
    }
  }

  /** The configured hosted URL and what it still needs the user to confirm, if anything. */
  unconfirmed(): { baseUrl: string; reasons: TrustReason[] } | undefined {
    const server = this.deps.settings().server;
    if (server.kind !== 'remote') return undefined;
    const reasons = this.deps.trust.missing(server.baseUrl, trustReasons(server));
    return reasons.length > 0 ? { baseUrl: server.baseUrl, reasons } : undefined;
  }

  /** Records the user's confirmation of the configured URL and connects again. */
  async confirmServer(baseUrl: string, reasons: TrustReason[]): Promise<void> {
    await this.deps.trust.confirm(baseUrl, reasons);
    if (this.stateValue.kind === 'failed') this.setState({ kind: 'idle' });
    await this.reset();
  }

  private async connectRemote(baseUrl: string): Promise<{ api: InboxApi; server: ServerInfo }> {
    // Before the token is even read: nothing goes to a URL the user has not confirmed.
    const pending = this.unconfirmed();
    if (pending) {
      throw new ExtensionError('unconfirmedServer', `Test Inbox has not used ${baseUrl} yet and waits for you to confirm it. ${pending.reasons.map((r) => REASON_TEXT[r]).join(' ')}`);
    }
    const apiToken = await this.deps.tokens.get('api', baseUrl);
    this.deps.log.addSecret(apiToken);
    this.deps.log.addSecret(await this.deps.tokens.get('webhook', baseUrl));
    if (!apiToken) {
      throw new ApiError('unauthorized', `No API token is set for ${baseUrl}. Set the API token to see its inboxes.`);
    }
    const api = this.deps.createApi({ baseUrl, apiToken });
    this.deps.log.info(`Using the hosted server ${baseUrl}.`);
    return { api, server: { baseUrl, local: false } };
  }

  private async connectLocal(settings: Settings, gen: number): Promise<{ api: InboxApi; server: ServerInfo }> {
    const key = localTokenKey(settings);
    let apiToken = await this.deps.tokens.get('api', key);
    let webhookToken = await this.deps.tokens.get('webhook', key);
    if (!apiToken) {
      apiToken = generateToken();
      await this.deps.tokens.set('api', key, apiToken);
    }
    if (!webhookToken) {
      webhookToken = generateToken();
      await this.deps.tokens.set('webhook', key, webhookToken);
    }
    let twilioAuthToken = await this.deps.tokens.get('twilio', key);
    if (!twilioAuthToken) {
      twilioAuthToken = generateToken();
      await this.deps.tokens.set('twilio', key, twilioAuthToken);
    }
    this.deps.log.addSecret(apiToken);
    this.deps.log.addSecret(webhookToken);
    this.deps.log.addSecret(twilioAuthToken);
    const dataDir = settings.dataDir || this.deps.defaultDataDir;
    await mkdir(dataDir, { recursive: true, mode: DATA_DIR_MODE });
    const opts: LocalServerOptions = {
      cliPath: this.deps.cliPath,
      execArgv: this.deps.execArgv,
      execPath: this.deps.execPath,
      httpPort: settings.httpPort,
      smtpPort: settings.smtpPort,
      dataDir,
      domain: settings.localDomain,
      maxMessages: settings.maxMessages,
      maxAgeSeconds: settings.maxAgeDays * DAY_SECONDS,
      smtpTls: settings.smtpTls,
      apiToken,
      webhookToken,
      twilioAuthToken,
      log: this.deps.log,
    };
    let running = this.server?.current;
    if (running?.mode === 'started' && (this.startedWith?.apiToken !== apiToken || this.startedWith?.webhookToken !== webhookToken || this.startedWith?.twilioAuthToken !== twilioAuthToken)) {
      // Our process was started with other tokens (they were changed or cleared): restart it.
      this.deps.log.info('The tokens changed: restarting the local server with the new ones.');
      const old = this.server;
      this.server = undefined;
      await old?.stop();
      running = undefined;
    }
    if (!running) {
      // Settings or tokens changed meanwhile: never start a process with the old ones.
      if (gen !== this.generation) throw stale();
      const server = new LocalServer(opts);
      this.server = server;
      running = await server.start();
      if (gen !== this.generation) {
        if (this.server === server) this.server = undefined;
        await server.stop();
        throw stale();
      }
      this.startedWith = { apiToken, webhookToken, twilioAuthToken };
      server.onUnexpectedExit(({ code }) => {
        if (this.server !== server) return;
        this.server = undefined;
        const api = this.api;
        this.api = undefined;
        void api?.dispose();
        this.setState({ kind: 'failed', error: new ExtensionError('noServer', `The local server stopped unexpectedly (exit code ${code ?? 'none'}). Start it again; the log may say why.`) });
      });
    }
    if (running.mode === 'attached' && running.proven) {
      // Someone else started it: send only the token it proved it takes (never try one and then another).
      ({ apiToken } = await this.tokensForAttached(running.http, running.proven, key, dataDir, { apiToken, webhookToken }));
    }
    const api = this.deps.createApi({ baseUrl: running.http, apiToken });
    return { api, server: { baseUrl: running.http, local: true, mode: running.mode, smtp: running.smtp, pid: running.proven?.pid, dataDir } };
  }

  /**
   * The tokens of a proven server someone else started: ours from SecretStorage when their
   * digests match its server file, else those of its data folder's tokens.json (saved into
   * SecretStorage then). No match: `tokenUnknown`, and no token is sent.
   */
  private async tokensForAttached(url: string, proven: ProvenServer, key: string, dataDir: string, stored: { apiToken: string; webhookToken: string }): Promise<{ apiToken: string }> {
    const matches = async (token: string | undefined, digest: string): Promise<boolean> => token !== undefined && (await tokenDigest(token)) === digest;
    let apiToken: string | undefined = (await matches(stored.apiToken, proven.apiTokenSha256)) ? stored.apiToken : undefined;
    const webhookOk = await matches(stored.webhookToken, proven.webhookTokenSha256);
    // Read once: it may hold the tokens we lack, and the Twilio auth token, which is not part
    // of the proof (a server this extension starts gets ours; one started by hand generates it).
    const file = await readTokensFile(path.join(dataDir, TOKENS_FILE), (f) => readFile(f, 'utf8'));
    if (TokensFileProblem.is(file)) {
      if ((!apiToken || !webhookOk) && file.code !== 'TOKENS_FILE_MISSING') this.deps.log.warn(`No tokens from the data folder: ${file.message}`);
    } else {
      if (!apiToken && (await matches(file.apiToken, proven.apiTokenSha256))) {
        apiToken = file.apiToken!;
        this.deps.log.addSecret(apiToken);
        await this.deps.tokens.set('api', key, apiToken);
      }
      if (!webhookOk && (await matches(file.webhookToken, proven.webhookTokenSha256))) {
        this.deps.log.addSecret(file.webhookToken);
        await this.deps.tokens.set('webhook', key, file.webhookToken!);
      }
      if (file.twilioAuthToken) {
        this.deps.log.addSecret(file.twilioAuthToken);
        await this.deps.tokens.set('twilio', key, file.twilioAuthToken);
      }
    }
    if (!apiToken) {
      throw new LocalServerError(
        'tokenUnknown',
        `The Test Inbox server at ${url} (pid ${proven.pid}) was started with an API token this window does not know: neither the stored one nor the one in ${TOKENS_FILE} of its data folder. Set the API token it was started with.`,
      );
    }
    return { apiToken };
  }

  /** Drops the client (and, when asked, our local server process) and connects again on next use. */
  async reset(stopServer = false): Promise<void> {
    this.generation++;
    this.pending = undefined;
    const api = this.api;
    this.api = undefined;
    await api?.dispose();
    if (stopServer) {
      const server = this.server;
      this.server = undefined;
      await server?.stop();
    }
    if (this.stateValue.kind !== 'stopped') this.setState({ kind: 'idle' });
  }

  /** Starts (or attaches to) the local server now. */
  async startLocal(): Promise<InboxApi> {
    if (this.stateValue.kind === 'stopped' || this.stateValue.kind === 'failed') this.setState({ kind: 'idle' });
    return this.ensure();
  }

  /** Stops our local server process; the tree shows "stopped" until it is started again. */
  async stopLocal(): Promise<'stopped' | 'detached'> {
    this.generation++;
    this.pending = undefined;
    const server = this.server;
    this.server = undefined;
    const attached = server?.current?.mode === 'attached';
    const api = this.api;
    this.api = undefined;
    await api?.dispose();
    await server?.stop();
    this.setState({ kind: 'stopped' });
    return attached ? 'detached' : 'stopped';
  }

  /** The Twilio auth token of the configured server, if known. */
  twilioAuthToken(): Promise<string | undefined> {
    return this.deps.tokens.get('twilio', this.tokenKey());
  }

  /** The webhook token of the configured server, if known. */
  webhookToken(): Promise<string | undefined> {
    return this.deps.tokens.get('webhook', this.tokenKey());
  }

  /** pid of our child process, for the debug state. */
  get localPid(): number | undefined {
    return this.server?.pid;
  }

  async dispose(): Promise<void> {
    this.generation++;
    const api = this.api;
    this.api = undefined;
    await api?.dispose();
    await this.server?.stop();
    this.server = undefined;
    this.stateEmitter.dispose();
  }
}
