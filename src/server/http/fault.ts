// Failures on demand on the HTTP surfaces (docs/chaos.md): the provider APIs and Twilio's. Each
// route asks `requestFault` once per request, after the request is read and checked and before
// anything of it is stored, with the sender and every recipient the request names; the one
// evaluation is the rule set's (chaos/rules.ts). A fault's status comes back as an
// InjectedFailure, which each provider answers in its own error shape (providers/index.ts,
// twilio/errors.ts); its `Retry-After` is added here, once.
import type http from 'node:http';
import type { ChaosContext, ChaosFault, ChaosRules, ChaosSurface } from '../chaos/rules';
import { codedError } from '../../core/errors';

/** A fault rule's HTTP answer: its status, `Retry-After` and (Twilio, Verify) the Twilio error code. */
export class InjectedFailure extends codedError<'injected'>('InjectedFailure') {
  readonly status: number;
  readonly twilioCode?: number;
  /** `Retry-After`, when the rule gives one. */
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, fault: Pick<ChaosFault, 'retryAfterSeconds' | 'twilioCode'> = {}) {
    super('injected', message);
    this.status = status;
    if (fault.twilioCode !== undefined) this.twilioCode = fault.twilioCode;
    this.headers = fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
  }
}

/** The words of an injected status, as the providers' own answers put it. */
function messageOf(status: number): string {
  if (status === 429) return 'Too many requests (a fault rule of Test Inbox; docs/chaos.md)';
  if (status >= 500) return 'The service is unavailable (a fault rule of Test Inbox; docs/chaos.md)';
  return 'The request was refused (a fault rule of Test Inbox; docs/chaos.md)';
}

/** Waits `ms`, or less when the response closes first (the client left, the server stops): then false. */
function pause(ms: number, res: http.ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('close', gone);
      resolve(true);
    };
    const timer = setTimeout(done, ms);
    const gone = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    res.once('close', gone);
  });
}

/**
 * The fault rules of `surface` for one request. With no rule it returns at once. A rule that
 * fires waits its delay (a client that leaves meanwhile gets nothing, and nothing is stored),
 * then throws its status as an InjectedFailure; a delay alone lets the request go on.
 */
export async function requestFault(rules: ChaosRules | undefined, surface: ChaosSurface, ctx: () => Pick<ChaosContext, 'sender' | 'recipients'>, res: http.ServerResponse): Promise<void> {
  // The one check with no rule: what a rule could match is not even gathered.
  if (!rules || rules.empty) return;
  // A rule with a `times` limit on a team server claims its firing in the database (chaos/rules.ts): awaited here, the one place every HTTP surface asks.
  const fault = await rules.evaluate(surface, ctx());
  if (!fault) return;
  if (fault.delayMs && !(await pause(fault.delayMs, res))) throw new InjectedFailure(503, 'the client left during a fault rule\'s delay');
  if (fault.status !== undefined) throw new InjectedFailure(fault.status, messageOf(fault.status), fault);
}
