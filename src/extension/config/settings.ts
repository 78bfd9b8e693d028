// Every `testInbox.*` setting in one typed module. No vscode import: `readSettings` takes
// anything with a `get(key)` (a WorkspaceConfiguration in the host, a plain object in tests).
// The local server's defaults (ports, domain) are the process contract's.
import { DEFAULT_DOMAIN, DEFAULT_DURABILITY, DEFAULT_HTTP_PORT, DEFAULT_SMTP_PORT, DURABILITIES, type Durability, isDurability } from '../../shared/contract';
import { domainProblem, PRIVATE_DOMAIN } from '../../core/ids';
import { hideUrlCredentials } from '../../core/urls';
import type { InboxRef } from '../inboxRef';

/** The value of `testInbox.server` that selects the embedded local server. */
export const LOCAL_SERVER = 'local';
/** Per inbox (the server applies it per inbox): enough history for a test session, bounded disk use. */
const DEFAULT_MAX_MESSAGES = 1000;
/** A week of mail: long enough to look back at yesterday's run. */
const DEFAULT_MAX_AGE_DAYS = 7;
/** Polling every 10 s feels live without loading a hosted API's rate limit. */
export const DEFAULT_POLL_SECONDS = 10;
/** Below 2 s polling costs more than it shows (and hosted services rate-limit). */
const MIN_POLL_SECONDS = 2;
/** An hour: beyond that the view is not "live" anymore. */
const MAX_POLL_SECONDS = 3600;
/** Highest TCP port. */
const MAX_PORT = 65535;

/** Setting keys, relative to the `testInbox` section. */
export const SettingKey = {
  server: 'server',
  domains: 'domains',
  httpPort: 'local.httpPort',
  smtpPort: 'local.smtpPort',
  localDomain: 'local.domain',
  dataDir: 'local.dataFolder',
  smtpTls: 'local.smtpTls',
  durability: 'local.durability',
  compat: 'local.compat',
  maxMessages: 'retention.maxMessages',
  maxAgeDays: 'retention.maxAgeDays',
  pollSeconds: 'pollIntervalSeconds',
  remoteImages: 'remoteImages',
  themeSimpleMail: 'themeSimpleMail',
  notifyNewMail: 'notifyNewMail',
} as const;
export type SettingKey = (typeof SettingKey)[keyof typeof SettingKey];

export const SETTINGS_SECTION = 'testInbox';

/** `fromWorkspace`: the URL comes from workspace (or folder) settings, not the user's: it is used only once the user confirms it. */
export type ServerSetting = { kind: 'local' } | { kind: 'remote'; baseUrl: string; fromWorkspace?: boolean };

export interface Settings {
  server: ServerSetting;
  /** Domains to show; empty means "whatever the server has" (local) or `private` (hosted). */
  domains: string[];
  httpPort: number;
  smtpPort: number;
  localDomain: string;
  /** Empty: the extension's global storage folder. */
  dataDir: string;
  /** The local server offers STARTTLS (self-signed certificate in the data folder). */
  smtpTls: boolean;
  /** What the local server's acknowledgement waits for (`--durability`). */
  durability: Durability;
  /** Serve the drop-in APIs of Mailpit, MailHog and Inbucket (`--compat`, docs/compat.md). */
  compat: boolean;
  maxMessages: number;
  maxAgeDays: number;
  pollSeconds: number;
  remoteImages: boolean;
  /** Simple HTML mail (no backgrounds of its own) in the theme's colours instead of a white sheet. */
  themeSimpleMail: boolean;
  notifyNewMail: boolean;
}

interface SettingsReader {
  get<T>(key: string): T | undefined;
}

/** One setting whose value was not usable: the default was used instead. */
interface SettingProblem {
  key: string;
  message: string;
}

/** Normalises a base URL: lower-case scheme and host, no trailing slash, no query. */
export function normalizeBaseUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password) return undefined;
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}`;
}

/** Why a server URL is refused; the URL is quoted without its user name and password. */
export function serverUrlProblem(raw: string): string | undefined {
  if (normalizeBaseUrl(raw)) return undefined;
  const shown = hideUrlCredentials(raw.trim());
  if (shown !== raw.trim()) return `"${shown}" has a user name or password in it: credentials never go into a URL or a setting; set the API token instead`;
  return `"${shown}" is neither "local" nor an http(s) URL such as https://api.mailinator.com`;
}

function parseServer(raw: unknown): ServerSetting | string {
  if (raw === undefined || raw === null || raw === '' || raw === LOCAL_SERVER) return { kind: 'local' };
  if (typeof raw !== 'string') return 'must be "local" or an http(s) base URL';
  const baseUrl = normalizeBaseUrl(raw);
  if (!baseUrl) return serverUrlProblem(raw) ?? 'is not a server URL';
  return { kind: 'remote', baseUrl };
}

function intSetting(raw: unknown, def: number, min: number, max: number): number | string {
  if (raw === undefined || raw === null) return def;
  if (typeof raw !== 'number' || !Number.isInteger(raw)) return `must be a whole number, got ${JSON.stringify(raw)}`;
  if (raw < min || raw > max) return `must be between ${min} and ${max}, got ${raw}`;
  return raw;
}


/** Reads and validates every setting; unusable values fall back to the default and are reported. */
export function readSettings(cfg: SettingsReader): { settings: Settings; problems: SettingProblem[] } {
  const problems: SettingProblem[] = [];
  const full = (k: string) => `${SETTINGS_SECTION}.${k}`;
  const pick = <T>(key: SettingKey, value: T | string, def: T): T => {
    if (typeof value === 'string' && typeof def !== 'string') {
      problems.push({ key: full(key), message: value });
      return def;
    }
    return value as T;
  };

  const serverRaw = parseServer(cfg.get(SettingKey.server));
  const server = pick<ServerSetting>(SettingKey.server, serverRaw, { kind: 'local' });

  const domainsRaw = cfg.get<unknown>(SettingKey.domains);
  const domains: string[] = [];
  if (Array.isArray(domainsRaw)) {
    for (const d of domainsRaw) {
      if (typeof d === 'string' && domainProblem(d.trim()) === undefined) {
        const v = d.trim().toLowerCase();
        if (!domains.includes(v)) domains.push(v);
      } else problems.push({ key: full(SettingKey.domains), message: `ignored ${JSON.stringify(d)}: not a domain name` });
    }
  } else if (domainsRaw !== undefined && domainsRaw !== null) {
    problems.push({ key: full(SettingKey.domains), message: 'must be a list of domain names' });
  }

  const localDomainRaw = cfg.get<unknown>(SettingKey.localDomain);
  let localDomain = DEFAULT_DOMAIN;
  if (typeof localDomainRaw === 'string' && localDomainRaw.trim() !== '') {
    if (domainProblem(localDomainRaw.trim()) === undefined && localDomainRaw.trim().toLowerCase() !== PRIVATE_DOMAIN) localDomain = localDomainRaw.trim().toLowerCase();
    else problems.push({ key: full(SettingKey.localDomain), message: `"${localDomainRaw}" is not a domain name` });
  }

  const dataDirRaw = cfg.get<unknown>(SettingKey.dataDir);
  const dataDir = typeof dataDirRaw === 'string' ? dataDirRaw.trim() : '';

  const durabilityRaw = cfg.get<unknown>(SettingKey.durability);
  let durability = DEFAULT_DURABILITY;
  if (isDurability(durabilityRaw)) durability = durabilityRaw;
  else if (durabilityRaw !== undefined && durabilityRaw !== null) problems.push({ key: full(SettingKey.durability), message: `must be one of ${DURABILITIES.join(', ')}, got ${JSON.stringify(durabilityRaw)}` });

  const settings: Settings = {
    server,
    domains,
    httpPort: pick(SettingKey.httpPort, intSetting(cfg.get(SettingKey.httpPort), DEFAULT_HTTP_PORT, 0, MAX_PORT), DEFAULT_HTTP_PORT),
    smtpPort: pick(SettingKey.smtpPort, intSetting(cfg.get(SettingKey.smtpPort), DEFAULT_SMTP_PORT, 0, MAX_PORT), DEFAULT_SMTP_PORT),
    localDomain,
    dataDir,
    smtpTls: cfg.get<unknown>(SettingKey.smtpTls) === true,
    durability,
    compat: cfg.get<unknown>(SettingKey.compat) === true,
    maxMessages: pick(SettingKey.maxMessages, intSetting(cfg.get(SettingKey.maxMessages), DEFAULT_MAX_MESSAGES, 1, 1_000_000), DEFAULT_MAX_MESSAGES),
    maxAgeDays: pick(SettingKey.maxAgeDays, intSetting(cfg.get(SettingKey.maxAgeDays), DEFAULT_MAX_AGE_DAYS, 1, 3650), DEFAULT_MAX_AGE_DAYS),
    pollSeconds: pick(SettingKey.pollSeconds, intSetting(cfg.get(SettingKey.pollSeconds), DEFAULT_POLL_SECONDS, MIN_POLL_SECONDS, MAX_POLL_SECONDS), DEFAULT_POLL_SECONDS),
    remoteImages: cfg.get<unknown>(SettingKey.remoteImages) === true,
    themeSimpleMail: cfg.get<unknown>(SettingKey.themeSimpleMail) === true,
    notifyNewMail: cfg.get<unknown>(SettingKey.notifyNewMail) === true,
  };
  return { settings, problems };
}

/** A Test Inbox server's own domains (the local one's, or a remote one's that proved it). */
export interface ServerDomains {
  /** Where it files mail when none is named. */
  defaultDomain?: string;
  /** Its domain list (GET /domains). */
  list(): Promise<string[]>;
}

/**
 * The domains the tree shows when the user has not listed any: a Test Inbox server's default
 * domain, then its list; the hosted service's `private` (its meta-domain for every private
 * domain), which offers no list.
 */
export function defaultDomains(settings: Settings, server: { defaultDomain?: string; listed: string[] } | undefined): string[] {
  if (settings.domains.length > 0) return settings.domains;
  if (!server) return [PRIVATE_DOMAIN];
  const out = server.defaultDomain ? [server.defaultDomain] : [];
  for (const d of server.listed) if (!out.includes(d)) out.push(d);
  return out;
}

/**
 * The domains the tree shows: the listed ones; else the defaults (with a Test Inbox server's
 * own domains) and the domain of every added inbox.
 */
export async function shownDomains(settings: Settings, server: ServerDomains | undefined, added: () => InboxRef[]): Promise<string[]> {
  if (settings.domains.length > 0) return settings.domains;
  const shown = defaultDomains(settings, server && { defaultDomain: server.defaultDomain, listed: await server.list() });
  for (const r of added()) if (!shown.includes(r.domain)) shown.push(r.domain);
  return shown;
}

/** The key per-server state (added inboxes, read marks) is kept under. */
export function serverKey(settings: Settings): string {
  return settings.server.kind === 'remote' ? settings.server.baseUrl : LOCAL_SERVER;
}
