// Which server the extension talks to and the client for it: the embedded local server
// (started on first use, or attached to; local.ts) or a hosted URL with its token from
// SecretStorage (remote.ts), and the state of that connection, re-checked by itself
// while the server cannot be reached (recovery.ts). No vscode import.
import { mkdir } from 'node:fs/promises';
import { ApiError } from '../../api/errors';
import type { InboxApi } from '../../api/types';
import type { TokenStore } from '../config/secrets';
import type { ServerDomains, Settings } from '../config/settings';
import { ConfirmedServers, REASON_TEXT, trustReasons, type TrustReason } from '../config/serverTrust';
import { dataFolderTokens, localTokenKey, type LocalTokens, prepareTokensFile } from './local';
import { RECOVERY_FIRST_MS, RecoveryChecks, watchNetworkFailures } from './recovery';
import { connectRemote, isNetworkFailure, noTokenError, unreachableReason } from './remote';
import { ExtensionError } from '../errors';
import { errorText, type Logger } from '../log';
import { defaultLocalDataDir } from './dataFolder';
import { LocalServer, probeHealth, type LocalServerOptions } from './localServer';
import { Emitter } from '../util/emitter';

/** Seconds in a day, for the retention setting (days) → CLI flag (seconds). */
const DAY_SECONDS = 86_400;
/** Owner only: the data folder holds mail, tokens.json and the server's proof file. */
const DATA_DIR_MODE = 0o700;

interface ServerInfo {
  baseUrl: string;
  local: boolean;
  /**
   * A Test Inbox server (ours, or a remote one that proved it takes our API token): it offers
   * the push stream, `wait=` long-polls and its domain list. Otherwise the hosted service.
   */
  testInbox: boolean;
  /** Test Inbox only: the domain it files mail under when none is named. */
  defaultDomain?: string;
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
  /** Stop Local Server on a server another process runs: we let go of it; it keeps running. */
  | { kind: 'detached'; baseUrl: string; pid?: number }
  /** Nothing answers at the server's address; re-checked by itself until it answers again. */
  | { kind: 'unreachable'; baseUrl: string; reason: string; error: unknown }
  | { kind: 'failed'; error: unknown };

interface ConnectionDeps {
  settings(): Settings;
  tokens: TokenStore;
  log: Logger;
  createApi(opts: { baseUrl: string; apiToken?: string }): InboxApi;
  /** Confirmations of hosted URLs the workspace chose or that use plain http to another machine. */
  trust: ConfirmedServers;
  /** dist/cli.js */
  cliPath: string;
  /**
   * Data folder when the setting is empty: the per-user one `test-inbox serve` uses too. A
   * function is called once, when the local server is first needed (contract.ts
   * resolveDefaultDataDir reads the file system: activation does no I/O).
   */
  defaultDataDir: string | (() => string);
  /** The default of releases up to 0.2.0 (in the extension's storage): moved to defaultDataDir once (dataFolder.ts). */
  legacyDataDir?: string;
  /** Test hook: Node flags for the forked CLI. */
  execArgv?: string[];
  execPath?: string;
}

function stale(): ApiError {
  return new ApiError('cancelled', 'The server settings changed while connecting.');
}

export class Connection {
  /** The default data folder, resolved once (an old release's folder is moved there at most once). */
  private defaultDir: Promise<string> | undefined;
  private stateValue: ConnectionState = { kind: 'idle' };
  private api: InboxApi | undefined;
  private server: LocalServer | undefined;
  private pending: Promise<InboxApi> | undefined;
  /** The local server's tokens, from its data folder (never from SecretStorage). */
  private localTokens: LocalTokens | undefined;
  private generation = 0;
  /** Re-checks of a server that cannot be reached (recovery.ts). */
  private readonly recovery = new RecoveryChecks(() => this.checkRecovery());
  /** Our local server processes being stopped (reset, Stop Local Server): a start waits for them. */
  private stopping: Promise<void> | undefined;
  private readonly stateEmitter = new Emitter<ConnectionState>();
  readonly onDidChangeState = this.stateEmitter.event;

  constructor(private readonly deps: ConnectionDeps) {}

  get state(): ConnectionState {
    return this.stateValue;
  }

  private setState(s: ConnectionState): void {
    if (s.kind !== 'unreachable') this.stopRecovery();
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

  /**
   * The connected server when it is a Test Inbox server (the local one, or a remote one that
   * proved it), which offers the push stream, `wait=` and its domain list; else undefined.
   */
  get testInbox(): ServerInfo | undefined {
    const st = this.stateValue;
    return st.kind === 'ready' && st.server.testInbox ? st.server : undefined;
  }

  /**
   * Where the server files mail when no domain is named: a Test Inbox server's default domain
   * (the local one's from the settings, also before it runs); undefined for the hosted service.
   */
  defaultDomain(): string | undefined {
    return this.testInbox?.defaultDomain ?? (this.isLocal ? this.deps.settings().localDomain : undefined);
  }

  /** The connected Test Inbox server's domains through `api`, for shownDomains; undefined for the hosted service. */
  serverDomains(api: InboxApi, signal?: AbortSignal): ServerDomains | undefined {
    const server = this.testInbox;
    return server && { defaultDomain: server.defaultDomain, list: async () => (await api.listDomains({ signal })).domains.map((d) => d.name) };
  }

  /** The client, connecting (and starting the local server) on first use. */
  ensure(): Promise<InboxApi> {
    if (this.api && this.stateValue.kind === 'ready') return Promise.resolve(this.api);
    if (this.stateValue.kind === 'stopped') {
      return Promise.reject(new ExtensionError('no_server', 'The local server is stopped. Start it to see mail.'));
    }
    if (this.stateValue.kind === 'detached') return Promise.reject(detachedError(this.stateValue));
    // Waits for the user, like "failed": setting the token (or Refresh, or another server) resets.
    // Connecting again on every tree redraw would probe the server in a loop, since each attempt
    // announces the state again and the view redraws on it.
    if (this.stateValue.kind === 'noToken') return Promise.reject(noTokenError(this.stateValue.baseUrl));
    // Said at once, with Retry; the server is re-checked in the background meanwhile.
    if (this.stateValue.kind === 'unreachable') return Promise.reject(unreachableError(this.stateValue));
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
      const watched = this.watch(api, gen);
      this.api = watched;
      this.setState({ kind: 'ready', server });
      return watched;
    } catch (e) {
      // Read before the generation check: a token set meanwhile resets the connection, and then
      // this attempt must not overwrite the fresh state with "failed" (a state that sticks).
      const noToken = ApiError.is(e, 'unauthorized') && settings.server.kind === 'remote' && !(await this.deps.tokens.get('api', settings.server.baseUrl));
      if (gen === this.generation) {
        if (noToken && settings.server.kind === 'remote') {
          this.setState({ kind: 'noToken', baseUrl: settings.server.baseUrl });
        } else if (isNetworkFailure(e) || ApiError.is(e, 'timeout')) {
          this.enterUnreachable(settings.server.kind === 'remote' ? settings.server.baseUrl : localTokenKey(settings), e);
          throw unreachableError(this.stateValue as Extract<ConnectionState, { kind: 'unreachable' }>);
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
      throw new ExtensionError('unconfirmed_server', `Test Inbox has not used ${baseUrl} yet and waits for you to confirm it. ${pending.reasons.map((r) => REASON_TEXT[r]).join(' ')}`);
    }
    const { api, testInbox, defaultDomain } = await connectRemote(baseUrl, this.deps);
    return { api, server: { baseUrl, local: false, testInbox, ...(testInbox ? { defaultDomain } : {}) } };
  }
  /** The default data folder: the shared per-user one, after the move of an old release's folder (dataFolder.ts). */
  private resolveDefaultDir(): Promise<string> {
    const shared = this.deps.defaultDataDir;
    return defaultLocalDataDir(this.deps.legacyDataDir, typeof shared === 'string' ? shared : shared(), this.deps.log);
  }
  private async connectLocal(settings: Settings, gen: number): Promise<{ api: InboxApi; server: ServerInfo }> {
    const dataDir = settings.dataDir || (await (this.defaultDir ??= this.resolveDefaultDir()));
    await mkdir(dataDir, { recursive: true, mode: DATA_DIR_MODE });
    await prepareTokensFile(localTokenKey(settings), dataDir, this.deps.tokens, this.deps.log);
    // No tokens are handed over: `serve` takes them from the data folder's tokens file, the one
    // place the local server's tokens live.
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
      durability: settings.durability,
      compat: settings.compat,
      log: this.deps.log,
    };
    let running = this.server?.current;
    if (!running) {
      // A process of ours still shutting down holds the data folder's lock until it exits: a
      // start before then would find the folder in use (a tree refresh can ask while reset waits).
      await this.stopping;
      // Settings changed meanwhile: never start a process with the old ones.
      if (gen !== this.generation) throw stale();
      const server = new LocalServer(opts);
      this.server = server;
      running = await server.start();
      if (gen !== this.generation) {
        if (this.server === server) this.server = undefined;
        await this.stopTracked(server);
        throw stale();
      }
      server.onUnexpectedExit(({ code }) => {
        if (this.server !== server) return;
        this.server = undefined;
        const api = this.api;
        this.api = undefined;
        void api?.dispose();
        this.setState({ kind: 'failed', error: new ExtensionError('no_server', `The local server stopped unexpectedly (exit code ${code ?? 'none'}). Start it again; the log may say why.`) });
      });
    }
    // Started here or elsewhere, the server proved it is the data folder's (LocalServer.start):
    // only now are the folder's tokens read, and only the one it takes is ever sent.
    const tokens = await dataFolderTokens(running.http, running.proven, dataDir, this.deps.log);
    this.localTokens = tokens;
    const api = this.deps.createApi({ baseUrl: running.http, apiToken: tokens.apiToken });
    return { api, server: { baseUrl: running.http, local: true, testInbox: true, defaultDomain: settings.localDomain, mode: running.mode, smtp: running.smtp, pid: running.proven.pid, dataDir } };
  }

  /** Drops the client (and, when asked, our local server process) and connects again on next use. */
  async reset(stopServer = false): Promise<void> {
    this.generation++;
    this.pending = undefined;
    this.stopRecovery();
    const api = this.api;
    this.api = undefined;
    const server = stopServer ? this.server : undefined;
    if (stopServer) this.server = undefined;
    // Started before anything is awaited: `stopping` is set at once, so a connection made
    // meanwhile waits for the old process's exit (connectLocal).
    const stopped = this.stopTracked(server);
    // Said at once, not after the old process exited (seconds): the tree drops the previous
    // server's rows now, and connects again to the new one.
    if (this.stateValue.kind !== 'stopped') this.setState({ kind: 'idle' });
    await api?.dispose();
    await stopped;
  }

  /** Stops our process and keeps the stop's promise meanwhile, so that no start races its exit. */
  private async stopTracked(server: LocalServer | undefined): Promise<void> {
    if (!server) return;
    const stop = server.stop();
    const all = Promise.all([this.stopping, stop]).then(() => undefined);
    this.stopping = all;
    try {
      await stop;
    } finally {
      if (this.stopping === all) this.stopping = undefined;
    }
  }

  /** Starts (or attaches to) the local server now. */
  async startLocal(): Promise<InboxApi> {
    const k = this.stateValue.kind;
    if (k === 'stopped' || k === 'failed' || k === 'detached' || k === 'unreachable') this.setState({ kind: 'idle' });
    return this.ensure();
  }

  /**
   * Stops our local server process; the tree shows "stopped" until it is started again. A
   * server another process runs is not ours to stop: we let go of it and say whose it is
   * ("detached"), so the state shown matches what keeps running.
   */
  async stopLocal(): Promise<'stopped' | 'detached'> {
    this.generation++;
    this.pending = undefined;
    const server = this.server;
    this.server = undefined;
    const running = server?.current;
    const api = this.api;
    this.api = undefined;
    await api?.dispose();
    await this.stopTracked(server);
    if (running?.mode === 'attached') {
      this.setState({ kind: 'detached', baseUrl: running.http, pid: running.proven.pid });
      return 'detached';
    }
    this.setState({ kind: 'stopped' });
    return 'stopped';
  }

  /** The client, reporting to the connection: a call that finds nobody at the server's address makes the state `unreachable`. */
  private watch(api: InboxApi, gen: number): InboxApi {
    return watchNetworkFailures(api, (e) => {
      if (gen !== this.generation || this.stateValue.kind !== 'ready') return;
      this.enterUnreachable(this.stateValue.server.baseUrl, e);
    });
  }

  /** Nobody answers at `baseUrl`: says so, drops the client and re-checks by itself, more slowly each time. */
  private enterUnreachable(baseUrl: string, error: unknown): void {
    this.generation++;
    this.pending = undefined;
    const api = this.api;
    this.api = undefined;
    void api?.dispose();
    // A server another process ran may come back as a different one: prove it again then.
    if (this.server?.current?.mode === 'attached') this.server = undefined;
    // "Could not reach the server at X: connection refused." → "connection refused": the URL is said once.
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^Could not reach the server at \S+: /, '');
    this.deps.log.warn(`${baseUrl} cannot be reached: ${errorText(error)}. Checking again in ${RECOVERY_FIRST_MS / 1000} s.`);
    this.setState({ kind: 'unreachable', baseUrl, reason, error });
    this.recovery.start();
  }

  private stopRecovery(): void {
    this.recovery.stop();
  }

  /** One re-check of an unreachable server: true once it answers again (the state goes idle), false to check later, undefined when the state moved on. */
  private async checkRecovery(): Promise<boolean | undefined> {
    const st = this.stateValue;
    if (st.kind !== 'unreachable') return undefined;
    const gen = this.generation;
    const back = this.isLocal ? (await probeHealth(st.baseUrl)) === 'test-inbox' : (await unreachableReason(st.baseUrl)) === undefined;
    if (gen !== this.generation || this.stateValue !== st) return undefined;
    if (!back) return false;
    this.deps.log.info(`${st.baseUrl} answers again: reconnecting.`);
    // idle: the tree reloads and connects (and proves a local server again).
    this.setState({ kind: 'idle' });
    return true;
  }

  /** The Twilio auth token of the configured server, if known (the local server's from its data folder, connecting first). */
  async twilioAuthToken(): Promise<string | undefined> {
    if (this.isLocal) return (await this.localTokensNow()).twilioAuthToken;
    return this.deps.tokens.get('twilio', this.tokenKey());
  }

  /** The provider key of the local server (from its data folder, connecting first); a remote server's is not known. */
  async providerKey(): Promise<string | undefined> {
    return this.isLocal ? (await this.localTokensNow()).providerKey : undefined;
  }

  /** The webhook token of the configured server, if known (the local server's from its data folder, connecting first). */
  async webhookToken(): Promise<string | undefined> {
    if (this.isLocal) return (await this.localTokensNow()).webhookToken;
    return this.deps.tokens.get('webhook', this.tokenKey());
  }

  /** The local server's API token, from its data folder once it proved it is that folder's server (connecting first). Never logged. */
  async localApiToken(): Promise<string> {
    return (await this.localTokensNow()).apiToken;
  }

  private async localTokensNow(): Promise<LocalTokens> {
    await this.ensure();
    if (!this.localTokens) throw new ExtensionError('no_server', 'The local server is not connected.');
    return this.localTokens;
  }

  /** pid of our child process, for the debug state. */
  get localPid(): number | undefined {
    return this.server?.pid;
  }

  async dispose(): Promise<void> {
    this.generation++;
    this.stopRecovery();
    const api = this.api;
    this.api = undefined;
    await api?.dispose();
    await this.server?.stop();
    this.server = undefined;
    this.stateEmitter.dispose();
  }
}

function unreachableError(st: Extract<ConnectionState, { kind: 'unreachable' }>): ExtensionError {
  const reason = /[.!?]$/.test(st.reason) ? st.reason : `${st.reason}.`;
  return new ExtensionError('unreachable', `The server at ${st.baseUrl} cannot be reached: ${reason} Test Inbox checks again by itself.`);
}

function detachedError(st: Extract<ConnectionState, { kind: 'detached' }>): ExtensionError {
  return new ExtensionError('no_server', `Detached from the local server at ${st.baseUrl}: it belongs to process ${st.pid ?? '?'} and keeps running. Start Local Server attaches again.`);
}
