// Connecting to the embedded local server: its data folder's tokens file (written before the
// server starts, so `serve` never generates or prints a token), the options of the process, and
// the tokens read back once the running server proved it is the folder's. No vscode import.
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { generateProviderKey, generateToken, readTokensFile, tokenDigest, TOKENS_FILE, TokensFileProblem, tokenSeparationProblem, writeTokensFile } from '../../shared/contract';
import type { TokenStore } from '../config/secrets';
import type { Settings } from '../config/settings';
import { LocalServerError } from '../errors';
import { LOCAL_HOST, type ProvenServer } from './localServer';
import type { Logger } from '../log';

/** The tokens of the local server, read from its data folder after it proved it is that folder's server. */
export interface LocalTokens {
  apiToken: string;
  webhookToken?: string;
  twilioAuthToken?: string;
  /** The key of the email provider APIs (docs/providers.md). */
  providerKey?: string;
}

/** The URL local tokens are keyed by: the configured port, known before the server starts. */
export function localTokenKey(settings: Settings): string {
  return `http://${LOCAL_HOST}:${settings.httpPort}`;
}

/**
 * The tokens of a proven local server from its data folder's tokens file, checked against
 * the digests its server file names. No match: `token_unknown`, and no token is sent.
 */
export async function dataFolderTokens(url: string, proven: ProvenServer, dataDir: string, log: Logger): Promise<LocalTokens> {
  const matches = async (token: string | undefined, digest: string): Promise<boolean> => token !== undefined && (await tokenDigest(token)) === digest;
  const file = await readTokensFile(path.join(dataDir, TOKENS_FILE), (f) => readFile(f, 'utf8'));
  if (TokensFileProblem.is(file) || !(await matches(file.apiToken, proven.apiTokenSha256))) {
    throw new LocalServerError(
      'token_unknown',
      `The Test Inbox server at ${url} (pid ${proven.pid}) was started with an API token that is not in ${TOKENS_FILE} of its data folder ${dataDir}` +
        (TokensFileProblem.is(file) ? ` (${file.message})` : '') +
        `, so this window cannot use it. Start that server without --api-token (it then uses the folder's tokens), or stop it and let Test Inbox start its own.`,
    );
  }
  const apiToken = file.apiToken!;
  log.addSecret(apiToken);
  const webhookToken = (await matches(file.webhookToken, proven.webhookTokenSha256)) ? file.webhookToken : undefined;
  log.addSecret(webhookToken);
  log.addSecret(file.twilioAuthToken);
  log.addSecret(file.providerKey);
  return { apiToken, webhookToken, twilioAuthToken: file.twilioAuthToken, providerKey: file.providerKey };
}

/**
 * Makes sure the data folder has its tokens file before the server starts, so that `serve`
 * never generates (and prints) a token: written here, owner-only, when missing. Its tokens
 * are told to the log's redaction at once; they are sent only after the server's proof.
 * Earlier versions kept the local tokens in SecretStorage and handed them to the server: they
 * become the file's tokens when it has none yet (webhook URLs and Twilio settings already
 * copied keep working) and are removed from SecretStorage either way.
 */
export async function prepareTokensFile(key: string, dataDir: string, tokens: TokenStore, log: Logger): Promise<void> {
  const stored = { apiToken: await tokens.get('api', key), webhookToken: await tokens.get('webhook', key), twilioAuthToken: await tokens.get('twilio', key) };
  for (const t of Object.values(stored)) log.addSecret(t);
  const file = path.join(dataDir, TOKENS_FILE);
  const existing = await readTokensFile(file, (f) => readFile(f, 'utf8'));
  if (!TokensFileProblem.is(existing)) {
    for (const t of Object.values(existing)) log.addSecret(t as string | undefined);
  } else if (existing.code === 'tokens_file_missing') {
    const usable = Boolean(stored.apiToken && stored.webhookToken) && tokenSeparationProblem(stored) === undefined;
    const fresh = {
      ...(usable ? { ...stored, twilioAuthToken: stored.twilioAuthToken ?? generateToken() } : { apiToken: generateToken(), webhookToken: generateToken(), twilioAuthToken: generateToken() }),
      providerKey: generateProviderKey(),
    };
    for (const t of Object.values(fresh)) log.addSecret(t);
    try {
      // `wx`: never over a tokens file that appeared meanwhile (another window's server).
      await writeTokensFile(file, fresh, { exclusive: true });
      log.info(usable ? `Moved the local server's tokens from secret storage into ${file}.` : `Generated the local server's tokens into ${file}.`);
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'EEXIST') throw e;
    }
  }
  // A damaged file is left alone: the server refuses to start and says why.
  if (stored.apiToken || stored.webhookToken || stored.twilioAuthToken) {
    for (const kind of ['api', 'webhook', 'twilio'] as const) await tokens.clear(kind, key);
  }
}
