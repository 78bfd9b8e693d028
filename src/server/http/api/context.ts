// What every resource handler of the HTTP API shares: the store, the stream hub, the
// configuration checked once by the composition in ../httpApi.ts, and the request-input readers
// (each throws a 400 HttpError naming the problem). Route table in docs/api.md.
import type http from 'node:http';
import { ALL_INBOXES, PRIVATE_DOMAIN, domainProblem, inboxNameProblem, inboxOfName, normalizeInbox, parseMessageId } from '../../../core/ids';
import type { ByteBudget } from '../../budget';
import type { Store } from '../../store/types';
import type { TokenCheck } from '../auth';
import { badRequest } from '../errors';
import type { WorkerPool } from '../../workers/pool';
import type { SearchBodyCache } from './searchBodyCache';
import type { StreamHub } from '../stream';
import type { TwilioContext } from '../twilio/api';

export type { Query } from '../query';
export type Req = http.IncomingMessage;
export type Res = http.ServerResponse;

export interface ApiContext {
  readonly store: Store;
  readonly hub: StreamHub;
  /** Parses and renders stored messages off the main thread. */
  readonly mime: WorkerPool;
  /** Message bytes held in memory at once, shared with SMTP (budget.ts): request bodies wait for their share. */
  readonly budget: ByteBudget;
  /** Bytes of stored messages being read (every read view, the link route, the search; read.ts): a budget of their own, so reads never hold back intake. */
  readonly readBudget: ByteBudget;
  /** What the search read of message bodies lately (api/search.ts). */
  readonly searchBodies: SearchBodyCache;
  readonly webhookToken: TokenCheck;
  /** The Twilio messages (inbound Twilio webhooks are stored there). */
  readonly twilio: TwilioContext;
  /** Key of X-Twilio-Signature on form webhooks; absent: they are not verified. */
  readonly twilioAuthToken?: string;
  /** Domain that writes to `private` go to (lowercase, checked). */
  readonly defaultDomain: string;
  readonly maxBody: number;
  /** Pending long-polls: each ends its wait when called (close() calls them all). */
  readonly polls: Set<() => void>;
  /** True once close() began: no new long-poll starts waiting. */
  closing(): boolean;
}

/** `private` → undefined (reads: every domain); otherwise the lowercase domain. */
export function readDomain(raw: string): string | undefined {
  const d = raw.toLowerCase();
  if (d === PRIVATE_DOMAIN) return undefined;
  const problem = domainProblem(d);
  if (problem) throw badRequest('bad_name', `bad domain ${JSON.stringify(raw.slice(0, 100))}: ${problem}`);
  return d;
}

/** An inbox of a path: checked, and in its stored form (a phone number written with `+` is its digits' inbox). */
export function readInbox(raw: string, allowAll: boolean, what = 'inbox'): string {
  const name = inboxOfName(raw);
  const problem = inboxNameProblem(name);
  if (problem) throw badRequest('bad_name', `bad ${what} ${JSON.stringify(raw.slice(0, 100))}: ${problem}`);
  if (name === ALL_INBOXES && !allowAll) throw badRequest('bad_name', `bad ${what}: "*" (every inbox) is only for reading and clearing; name one inbox`);
  return normalizeInbox(name);
}

export function readId(raw: string): string {
  const id = raw.toLowerCase();
  if (!parseMessageId(id)) throw badRequest('bad_id', `bad message id ${JSON.stringify(raw.slice(0, 100))}: it must be shaped <inbox>-<number>-<number>`);
  return id;
}
