// `test-inbox chaos`: the fault rules of a running Test Inbox server (docs/chaos.md), through the
// API client the other test commands use. A rule is given as JSON or with flags, so the common
// case is one command:
//   test-inbox chaos add --surface resend --recipient ann@inbox.test --status 429 --retry-after 2
import { type FlagSpec, UsageError } from '../shared/args';
import type { ChaosRuleInfo } from '../core/wire';
import { connect } from '../api/node/connect';
import { toTestInboxError } from '../testing/connection';
import { type ConnectionOptions, TestInboxError } from '../testing/types';

export const CHAOS_FLAGS = {
  surface: { type: 'string' },
  recipient: { type: 'string' },
  sender: { type: 'string' },
  stage: { type: 'string' },
  client: { type: 'string' },
  all: { type: 'boolean' },
  reply: { type: 'string' },
  drop: { type: 'boolean' },
  delay: { type: 'string' },
  status: { type: 'string' },
  'retry-after': { type: 'string' },
  'twilio-code': { type: 'string' },
  'delivery-delay': { type: 'string' },
  times: { type: 'string' },
  probability: { type: 'string' },
  seed: { type: 'string' },
  ttl: { type: 'string' },
} as const satisfies FlagSpec;

export const CHAOS_USAGE = `Usage: test-inbox chaos add <rule JSON> | add --surface <s> [match] [fault] [how often]
       test-inbox chaos list | remove <id> | clear

Failures on demand (docs/chaos.md): rules that make the server fail on purpose, to test an
app's retry and timeout paths. add prints the new rule's id; list prints each rule with its
counters; remove takes one rule away, clear all of them. Rules also end by themselves (--ttl,
default 10m, at most 24h).

A rule as flags:
  --surface <s>         smtp, resend, sendgrid, postmark, mailgun, ses, twilio, verify,
                        delivery
  --recipient <p>       match an address (joe@inbox.test), an inbox of any domain (joe), or
                        a domain (*@inbox.test); for SMS, the number
  --sender <p>          match the sender the same way
  --stage <stage>       smtp: connect, ehlo, auth, mail, rcpt (default) or data
  --client <ip>         smtp: the client's address
  --all                 match everything (required when nothing else is matched)
  --reply "<code> <text>"
                        smtp: answer this instead, e.g. "451 4.7.1 Greylisted"
  --drop                smtp: close the connection without a reply
  --delay <duration>    wait before the answer: 500ms, 40s
  --status <n>          HTTP surfaces: answer this status in the provider's error shape
  --retry-after <s>     with it, the Retry-After header in seconds
  --twilio-code <n>     twilio, verify: the Twilio error code (20429, 21211, 60203)
  --delivery-delay <d>  delivery: answer the sender at once, show the message this much later
  --times <n>           fire on the next n matches only
  --probability <p>     fire with this probability (0 to 1], seeded by --seed (default 1)
  --ttl <duration>      how long the rule lives (default 10m)
Example: test-inbox chaos add --surface resend --recipient ann@inbox.test --status 429 --retry-after 2`;

type Values = Record<string, string | boolean | undefined>;

/** A whole number flag, or a usage error naming it. */
function whole(v: Values, name: string): number | undefined {
  const s = v[name];
  if (typeof s !== 'string') return undefined;
  if (!/^[0-9]{1,9}$/.test(s)) throw new UsageError(`--${name} must be a whole number (got ${JSON.stringify(s)})`);
  return Number(s);
}

/** A duration flag: a bare number is milliseconds, as in a JSON rule; text (40s, 10m) goes to the server as is. */
function duration(v: Values, name: string): number | string | undefined {
  const s = v[name];
  if (typeof s !== 'string') return undefined;
  return /^[0-9]+$/.test(s) ? Number(s) : s;
}

/** The rule the flags describe (the server checks it whole). */
export function ruleFromFlags(v: Values): Record<string, unknown> {
  if (typeof v.surface !== 'string') throw new UsageError('--surface is required (or give the rule as JSON)');
  const match: Record<string, unknown> = {};
  if (v.all === true) match.all = true;
  for (const k of ['recipient', 'sender', 'stage', 'client'] as const) if (typeof v[k] === 'string') match[k] = v[k];
  const fault: Record<string, unknown> = {};
  if (typeof v.reply === 'string') {
    const m = /^\s*([0-9]{3})(?:\s+(.*))?$/.exec(v.reply);
    if (!m) throw new UsageError(`--reply must be a code and its text, e.g. "451 4.7.1 Greylisted" (got ${JSON.stringify(v.reply)})`);
    fault.reply = { code: Number(m[1]), ...(m[2] ? { text: m[2] } : {}) };
  }
  if (v.drop === true) fault.drop = true;
  const delay = duration(v, 'delay');
  if (delay !== undefined) fault.delay = delay;
  const deliveryDelay = duration(v, 'delivery-delay');
  if (deliveryDelay !== undefined) fault.delivery_delay = deliveryDelay;
  for (const [flag, key] of [['status', 'status'], ['retry-after', 'retry_after'], ['twilio-code', 'twilio_code']] as const) {
    const n = whole(v, flag);
    if (n !== undefined) fault[key] = n;
  }
  const rule: Record<string, unknown> = { surface: v.surface, match, fault };
  const times = whole(v, 'times');
  if (times !== undefined) rule.times = times;
  if (typeof v.probability === 'string') {
    const p = Number(v.probability);
    if (!Number.isFinite(p)) throw new UsageError(`--probability must be a number (got ${JSON.stringify(v.probability)})`);
    rule.probability = p;
  }
  const seed = whole(v, 'seed');
  if (seed !== undefined) rule.seed = seed;
  const ttl = duration(v, 'ttl');
  if (ttl !== undefined) rule.ttl = ttl;
  return rule;
}

/** One line per rule: its id, surface, match, fault and counters. */
function ruleLine(r: ChaosRuleInfo): string {
  const pairs = (o: Record<string, unknown>): string =>
    Object.entries(o)
      .map(([k, x]) => `${k}=${typeof x === 'object' ? JSON.stringify(x) : String(x)}`)
      .join(' ');
  const often = r.times !== undefined ? ` times=${r.times}` : r.probability !== undefined ? ` probability=${r.probability} seed=${r.seed ?? 1}` : '';
  return `${r.id}\t${r.surface}\t${pairs(r.match)}\t${pairs(r.fault)}${often}\tfired ${r.fired}, matched ${r.evaluated}\tuntil ${r.expires}`;
}

/** What the command answers: the text on stdout, the JSON with --json, a message on stderr. */
interface Answer {
  text?: string;
  json: unknown;
  message?: string;
}

export async function chaosCommand(action: string | undefined, ruleText: string | undefined, v: Values, conn: ConnectionOptions, env: NodeJS.ProcessEnv): Promise<Answer> {
  const act = action ?? 'list';
  if (!['add', 'list', 'remove', 'clear'].includes(act)) throw new UsageError(`unknown action ${JSON.stringify(act)}: use add, list, remove or clear`);
  if (act !== 'add' && act !== 'remove' && ruleText !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(ruleText)}`);
  let rule: Record<string, unknown> | undefined;
  if (act === 'add') {
    if (ruleText !== undefined) {
      try {
        rule = JSON.parse(ruleText) as Record<string, unknown>;
      } catch (e) {
        throw new UsageError(`the rule is not valid JSON: ${(e as Error).message}`);
      }
    } else rule = ruleFromFlags(v);
  }
  if (act === 'remove' && ruleText === undefined) throw new UsageError('missing <id> (test-inbox chaos list shows them)');
  const c = await connect(conn, env).catch((e: unknown) => {
    throw toTestInboxError(e);
  });
  try {
    const id = await c.api.identify();
    if (id.kind !== 'test-inbox') throw new TestInboxError('unsupported', `${c.baseUrl} is not a Test Inbox server: a hosted service has no fault rules`);
    switch (act) {
      case 'add': {
        const added = await c.api.addChaosRule(rule!);
        return { text: added.id, json: added, message: `added ${ruleLine(added.rule)}` };
      }
      case 'remove': {
        const removed = await c.api.removeChaosRule(ruleText!);
        return { json: removed, message: `removed ${ruleText!}` };
      }
      case 'clear': {
        const cleared = await c.api.clearChaos();
        return { json: cleared, message: `removed ${cleared.removed} rule${cleared.removed === 1 ? '' : 's'}` };
      }
      default: {
        const list = await c.api.chaosRules();
        return { ...(list.rules.length > 0 ? { text: list.rules.map(ruleLine).join('\n') } : {}), json: list, message: `${list.active} rule${list.active === 1 ? '' : 's'} active` };
      }
    }
  } catch (e) {
    throw toTestInboxError(e);
  } finally {
    await c.close();
  }
}
