// Failures on demand (issue 39, docs/chaos.md): the one set of fault rules behind
// every way to set them, and the one evaluation every surface calls. A rule names a surface, what
// it matches, what happens, how often (a seeded probability or the next N times) and how long it
// lives; it counts how often it fired. The rule set is pure but for the clock and ids it is given: the
// HTTP routes, the CLI, the library and the team server's table keep rules through it (on a team
// server the rules, their counters and `times` limits are kept in the database: SharedChaosRules).
//
// What can be matched when (SMTP): at `connect` and `ehlo` only the client's address is known;
// `auth` adds nothing a rule can match; `mail` knows the sender; `rcpt` the sender and the one
// recipient; `data` the sender and every recipient. HTTP surfaces know the sender and the
// recipients of the request; `delivery` (a delay before an accepted message becomes visible)
// knows the message's sender and recipient.
import { randomBytes } from 'node:crypto';
import { parseDuration } from '../../core/duration';
import { normalizeInbox, splitAddress } from '../../core/ids';
import { type ChaosRuleInfo, MAX_CHAOS_DELAY_MS } from '../../core/wire';
import { CHAOS_SURFACES, type ChaosFault, type ChaosMatch, type ChaosRule, type ChaosSurface, type SharedChaosRules, SMTP_STAGES, type SmtpStage } from '../store/sharedChaos';
import { codedError, type CodedError } from '../../core/errors';

export { CHAOS_SURFACES, type ChaosFault, type ChaosMatch, type ChaosRule, type ChaosSurface, type SharedChaosRules, SMTP_STAGES, type SmtpStage };

/** A rule id unique across the server's runs: `r<n>-<6 hex digits>`. */
export function serverRuleId(n: number): string {
  return `r${n}-${randomBytes(3).toString('hex')}`;
}

/** The surfaces the server applies rules on (`delivery` where it holds messages: chaos/delayed.ts); `mailosaur` (no compat API yet) is to come. */
export const APPLIED_SURFACES: readonly ChaosSurface[] = ['smtp', 'resend', 'sendgrid', 'postmark', 'mailgun', 'ses', 'twilio', 'verify', 'delivery'];

/** A rule lives 10 minutes unless told otherwise, so a forgotten rule stops by itself. */
export const DEFAULT_TTL_MS = 10 * 60_000;
/** And 24 hours at the most. */
export const MAX_TTL_MS = 24 * 3_600_000;
/** The longest delay before a reply or a visible delivery (core/wire.ts, shared with the editor's presets). */
const MAX_DELAY_MS = MAX_CHAOS_DELAY_MS;
/** Rules kept at once: far beyond a test suite's need, and it bounds each evaluation. */
export const MAX_RULES = 200;

/** What an evaluation knows of the request or the SMTP transaction. */
export interface ChaosContext {
  stage?: SmtpStage;
  client?: string;
  sender?: string;
  recipients?: readonly string[];
}

/** A rule as given (POST, PUT, a --chaos file): checked by parseRule. */
export type ChaosRuleInput = Record<string, unknown>;

/** Why a rule was refused: the field and what is wrong, in words. */
export const ChaosRuleError = codedError<'bad_input'>('ChaosRuleError');
export type ChaosRuleError = CodedError<'bad_input'>;

const HTTP_SURFACES: ReadonlySet<ChaosSurface> = new Set(['resend', 'sendgrid', 'postmark', 'mailgun', 'ses', 'twilio', 'verify', 'mailosaur']);

function fail(message: string): never {
  throw new ChaosRuleError('bad_input', message);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The fields of a rule, its match and its fault, as docs/chaos.md writes them (snake_case, as on the wire). */
const RULE_FIELDS: readonly string[] = ['surface', 'match', 'fault', 'probability', 'seed', 'times', 'ttl'];
const MATCH_FIELDS: readonly string[] = ['all', 'recipient', 'sender', 'stage', 'client'];
const FAULT_FIELDS: readonly string[] = ['reply', 'drop', 'delay', 'status', 'retry_after', 'twilio_code', 'delivery_delay'];

function pattern(v: unknown, field: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > 320) fail(`match.${field} must be an address, an inbox name or *@domain (1–320 characters)`);
  // A phone number as people write it (`+1 555 010 0199`) names its phone inbox, as everywhere (core/ids.ts).
  return normalizeInbox(v);
}

/** A duration of at most `max` (and at least `min`), or the reason it is not one. */
function duration(v: unknown, field: string, max: number, min = 0): number | undefined {
  if (v === undefined) return undefined;
  const ms = typeof v === 'number' ? Math.round(v) : typeof v === 'string' ? parseDuration(v) : undefined;
  const form = '(milliseconds as a number, or text such as 500ms, 40s, 10m, 2h)';
  if (ms === undefined || !Number.isFinite(ms)) fail(`${field} must be a duration ${form}, got ${JSON.stringify(v).slice(0, 40)}`);
  if (ms > max) fail(`${field} must be at most ${formatDuration(max)} ${form}, got ${JSON.stringify(v).slice(0, 40)}`);
  if (ms < min) fail(`${field} must be at least ${formatDuration(min)}: a rule with no time to live would never fire`);
  return ms;
}

/** `86400000` as `24h`, `600000` as `10m`: how a limit reads in a message. */
function formatDuration(ms: number): string {
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/**
 * A rule from its JSON, checked whole: every field it does not know, or cannot use on its
 * surface, is refused with what is wrong. `id` and `now` are the store's.
 */
export function parseRule(input: unknown, id: string, now: number): ChaosRule {
  if (!isObject(input)) fail('a rule is a JSON object: {"surface": "smtp", "match": {…}, "fault": {…}}');
  for (const k of Object.keys(input)) if (!RULE_FIELDS.includes(k)) fail(`unknown field ${JSON.stringify(k)} (known: ${RULE_FIELDS.join(', ')})`);
  const surface = input.surface;
  if (typeof surface !== 'string' || !(CHAOS_SURFACES as readonly string[]).includes(surface)) fail(`surface must be one of ${CHAOS_SURFACES.join(', ')}`);
  const s = surface as ChaosSurface;
  const m = input.match;
  if (!isObject(m)) fail('match is required: {"recipient": "joe@inbox.test"}, {"sender": …}, or {"all": true} to match everything');
  for (const k of Object.keys(m)) if (!MATCH_FIELDS.includes(k)) fail(`unknown field match.${k} (known: ${MATCH_FIELDS.join(', ')})`);
  const match: ChaosMatch = {};
  if (m.all !== undefined) {
    if (m.all !== true) fail('match.all must be true (or absent)');
    match.all = true;
  }
  const recipient = pattern(m.recipient, 'recipient');
  const sender = pattern(m.sender, 'sender');
  if (recipient !== undefined) match.recipient = recipient;
  if (sender !== undefined) match.sender = sender;
  if (m.stage !== undefined) {
    if (s !== 'smtp') fail('match.stage is for the smtp surface only');
    if (typeof m.stage !== 'string' || !(SMTP_STAGES as readonly string[]).includes(m.stage)) fail(`match.stage must be one of ${SMTP_STAGES.join(', ')}`);
    match.stage = m.stage as SmtpStage;
  }
  if (m.client !== undefined) {
    if (s !== 'smtp') fail('match.client is for the smtp surface only');
    if (typeof m.client !== 'string' || m.client.length === 0 || m.client.length > 64) fail('match.client must be an IP address');
    match.client = m.client;
  }
  const stage = match.stage ?? 'rcpt';
  if (s === 'smtp' && (stage === 'connect' || stage === 'ehlo' || stage === 'auth') && (match.recipient !== undefined || match.sender !== undefined)) {
    fail(`at the ${stage} stage only match.client is known (the sender comes with MAIL, the recipient with RCPT)`);
  }
  if (s === 'smtp' && stage === 'mail' && match.recipient !== undefined) fail('at the mail stage the recipient is not known yet: use stage rcpt or data');
  if (!match.all && match.recipient === undefined && match.sender === undefined && match.client === undefined) fail('match names a recipient, a sender or a client; to match everything say "all": true');
  if (match.all && (match.recipient !== undefined || match.sender !== undefined || match.client !== undefined)) fail('match.all goes alone');

  const f = input.fault;
  if (!isObject(f)) fail('fault is required: what happens when the rule fires');
  for (const k of Object.keys(f)) if (!FAULT_FIELDS.includes(k)) fail(`unknown field fault.${k} (known: ${FAULT_FIELDS.join(', ')})`);
  for (const k of ['reply', 'drop'] as const) if (s !== 'smtp' && f[k] !== undefined) fail(`fault.${k} is for the smtp surface`);
  for (const k of ['status', 'retry_after'] as const) if (!HTTP_SURFACES.has(s) && f[k] !== undefined) fail(`fault.${k} is for the provider and Twilio surfaces`);
  if (s !== 'delivery' && f.delivery_delay !== undefined) fail('fault.delivery_delay is for the delivery surface');
  if (s === 'delivery' && f.delay !== undefined) fail('fault.delay is for the smtp, provider and Twilio surfaces: a delivery rule\'s wait is fault.delivery_delay');
  const fault: ChaosFault = {};
  const delayMs = duration(f.delay, 'fault.delay', MAX_DELAY_MS);
  if (delayMs !== undefined) fault.delayMs = delayMs;
  if (s === 'smtp') {
    if (f.reply !== undefined) {
      if (!isObject(f.reply) || !Number.isInteger(f.reply.code) || (f.reply.code as number) < 400 || (f.reply.code as number) > 599) fail('fault.reply must be {"code": 4xx or 5xx, "text": "…"}');
      const text = f.reply.text === undefined ? 'Failure on demand' : f.reply.text;
      if (typeof text !== 'string' || text.length > 400 || /[\r\n]/.test(text)) fail('fault.reply.text must be one line of at most 400 characters');
      fault.reply = { code: f.reply.code as number, text };
    }
    if (f.drop !== undefined) {
      if (f.drop !== true) fail('fault.drop must be true (or absent)');
      fault.drop = true;
    }
    if (fault.reply && fault.drop) fail('fault.reply and fault.drop exclude each other');
    if (!fault.reply && !fault.drop && fault.delayMs === undefined) fail('an smtp fault is a reply, a drop or a delay');
  } else if (HTTP_SURFACES.has(s)) {
    if (f.status !== undefined) {
      if (!Number.isInteger(f.status) || (f.status as number) < 400 || (f.status as number) > 599) fail('fault.status must be an HTTP status from 400 to 599');
      fault.status = f.status as number;
    }
    if (f.retry_after !== undefined) {
      if (!Number.isInteger(f.retry_after) || (f.retry_after as number) < 0 || (f.retry_after as number) > 86_400) fail('fault.retry_after must be whole seconds from 0 to 86400');
      fault.retryAfterSeconds = f.retry_after as number;
    }
    if (f.twilio_code !== undefined) {
      if (s !== 'twilio' && s !== 'verify') fail('fault.twilio_code is for the twilio and verify surfaces');
      if (!Number.isInteger(f.twilio_code) || (f.twilio_code as number) < 10_000 || (f.twilio_code as number) > 99_999) fail('fault.twilio_code must be a five-digit Twilio error code');
      fault.twilioCode = f.twilio_code as number;
    }
    // A Twilio error code alone comes with 400, the status of Twilio's own 21211 and most others.
    if (fault.twilioCode !== undefined && fault.status === undefined) fault.status = 400;
    if (fault.status === undefined && fault.delayMs === undefined) fail(`a ${s} fault is a status (with retry_after${s === 'twilio' || s === 'verify' ? ' or twilio_code' : ''}) or a delay`);
  } else {
    // delivery
    const d = duration(f.delivery_delay, 'fault.delivery_delay', MAX_DELAY_MS);
    if (d === undefined) fail('a delivery fault is {"delivery_delay": "40s"}');
    fault.deliveryDelayMs = d;
  }

  const rule: ChaosRule = { id, surface: s, match, fault, expiresAt: now + (duration(input.ttl, 'ttl', MAX_TTL_MS, 1) ?? DEFAULT_TTL_MS), fired: 0, evaluated: 0 };
  if (input.times !== undefined && input.probability !== undefined) fail('times and probability exclude each other');
  if (input.times !== undefined) {
    if (!Number.isInteger(input.times) || (input.times as number) < 1 || (input.times as number) > 1_000_000) fail('times must be a whole number of at least 1');
    rule.times = input.times as number;
  } else if (input.probability !== undefined) {
    if (typeof input.probability !== 'number' || !(input.probability > 0 && input.probability <= 1)) fail('probability must be a number above 0 and at most 1');
    rule.probability = input.probability;
    const seed = input.seed ?? 1;
    if (!Number.isInteger(seed) || (seed as number) < 0 || (seed as number) > 0xffffffff) fail('seed must be a whole number from 0 to 4294967295');
    rule.seed = seed as number;
  } else if (input.seed !== undefined) fail('seed goes with probability');
  return rule;
}

/** A rule as the API, the CLI and the library show it (the wire's ChaosRuleInfo): its input's own fields (so it reads like what was sent), its id, when it ends, and its counters. */
export type ChaosRuleView = Omit<ChaosRuleInfo, 'surface' | 'match'> & { surface: ChaosSurface; match: ChaosMatch };

export function ruleView(rule: ChaosRule): ChaosRuleView {
  const f = rule.fault;
  const fault: Record<string, unknown> = {};
  if (f.reply) fault.reply = { ...f.reply };
  if (f.drop) fault.drop = true;
  if (f.delayMs !== undefined) fault.delay = f.delayMs;
  if (f.status !== undefined) fault.status = f.status;
  if (f.retryAfterSeconds !== undefined) fault.retry_after = f.retryAfterSeconds;
  if (f.twilioCode !== undefined) fault.twilio_code = f.twilioCode;
  if (f.deliveryDelayMs !== undefined) fault.delivery_delay = f.deliveryDelayMs;
  return {
    id: rule.id,
    surface: rule.surface,
    match: { ...rule.match },
    fault,
    ...(rule.times !== undefined ? { times: rule.times } : {}),
    ...(rule.probability !== undefined ? { probability: rule.probability, seed: rule.seed } : {}),
    expires: new Date(rule.expiresAt).toISOString(),
    fired: rule.fired,
    evaluated: rule.evaluated,
  };
}

/**
 * The `index`-th draw (from 0) of the generator seeded by `seed`, in [0, 1): mulberry32, whose
 * state after n steps is seed + n × its increment, so any draw is computed without the ones
 * before it (a rule's draws stay the same however the server restarts or splits them).
 */
export function seededDraw(seed: number, index: number): number {
  let t = (seed + Math.imul(index + 1, 0x6d2b79f5)) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** Whether an address matches a rule's pattern: the address, the inbox of any domain, or `*@domain`. */
export function addressMatches(patternText: string, address: string): boolean {
  const a = address.trim().toLowerCase();
  if (patternText.startsWith('*@')) return a.endsWith(patternText.slice(1));
  if (patternText.includes('@')) return a === patternText;
  return splitAddress(a).local === patternText || a === patternText;
}

/** Whether a rule can fire again: one with `times` stops at its N (docs/chaos.md, "active"). */
export function canStillFire(rule: Pick<ChaosRule, 'times' | 'fired'>): boolean {
  return rule.times === undefined || rule.fired < rule.times;
}

function matches(rule: ChaosRule, ctx: ChaosContext): boolean {
  const m = rule.match;
  if (rule.surface === 'smtp' && (m.stage ?? 'rcpt') !== ctx.stage) return false;
  if (m.all) return true;
  if (m.client !== undefined && m.client !== ctx.client) return false;
  if (m.sender !== undefined && (ctx.sender === undefined || !addressMatches(m.sender, ctx.sender))) return false;
  if (m.recipient !== undefined && !(ctx.recipients ?? []).some((r) => addressMatches(m.recipient!, r))) return false;
  return true;
}


/**
 * The rule set. `evaluate` is the one decision every surface asks: the first live rule of the
 * surface that matches and whose draw or count says so fires (its counter goes up) and its fault
 * is returned. With no rule, it answers at once (intake does no extra work).
 *
 * Its rules are kept in this process's memory (the Maildir server), or, given a SharedChaosRules
 * (the team server), in the database with this memory as its mirror. Then a rule with a `times`
 * limit fires only when the database grants the firing (SharedChaosRules.claim), and any other
 * firing is counted there before its fault applies, so `evaluate` answers a promise when a rule
 * fires; no rule, or none firing, answers at once. Seeded draws are this process's: the i-th
 * evaluation of a rule here takes the i-th draw.
 */
export class ChaosRules {
  private rules: ChaosRule[] = [];
  private nextId = 1;
  /** Evaluations of each rule in this process: the index of its next seeded draw. */
  private readonly draws = new Map<string, number>();
  /** The last load of the shared set (reload), and the one waiting to start. */
  private loading: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;

  /**
   * `surfaces`: those a server applies; a rule of another is refused, not kept to do nothing
   * (`delivery` and `mailosaur` until their surfaces ask the rules). Default: every surface.
   */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly surfaces: readonly ChaosSurface[] = CHAOS_SURFACES,
    /** The id of the n-th rule added (from 1). The server's add a random part, so a rule of an earlier run is never taken for one of this run (a test's handle that outlived a restart removes nothing of another test's). */
    private readonly idOf: (n: number) => string = (n) => `r${n}`,
    /** The team server's table; absent: the rules live in this process's memory only. */
    private readonly shared?: SharedChaosRules,
  ) {}

  /** Loads the shared set and follows its changes (nothing to do without one). */
  async open(): Promise<void> {
    if (!this.shared) return;
    // Watching first: a change made between the load and the watch is not missed.
    await this.shared.watch(() => void this.reload().catch(() => undefined));
    await this.reload();
  }

  /** Writes the shared counts still pending and stops following the set. */
  async close(): Promise<void> {
    await this.shared?.close();
  }

  /**
   * The mirror, from the shared set as it is now. Loads run one after another, so one asked for
   * after a change sees it; one asked for while another waits to start joins it.
   */
  private reload(): Promise<void> {
    const shared = this.shared;
    if (!shared) return Promise.resolve();
    if (this.queued) return this.queued;
    const run = this.loading
      .catch(() => undefined)
      .then(async () => {
        this.queued = undefined;
        const rules = await shared.load(this.now());
        this.rules = rules;
        const ids = new Set(rules.map((r) => r.id));
        for (const id of this.draws.keys()) if (!ids.has(id)) this.draws.delete(id);
      });
    this.queued = run;
    this.loading = run;
    return run;
  }

  /** parseRule, and a surface this server applies. */
  private parse(input: unknown, id: string, now: number): ChaosRule {
    const rule = parseRule(input, id, now);
    if (!this.surfaces.includes(rule.surface)) fail(`surface ${rule.surface} is not applied by this server yet; it applies ${this.surfaces.join(', ')} (docs/chaos.md)`);
    return rule;
  }

  /** Live rules (expired ones are dropped on the way), with their counters (of every process, on a team server). */
  async list(): Promise<ChaosRule[]> {
    await this.reload();
    this.expire();
    return this.rules.map((r) => ({ ...r, match: { ...r.match }, fault: { ...r.fault } }));
  }

  /** True with no rule (expired ones may still count): the one cheap check an intake makes before it builds what a rule could match. */
  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** Rules that can still fire: a `times` rule that has fired its N stays listed, with its counters, until its ttl, and is not counted. */
  get size(): number {
    this.expire();
    return this.rules.filter(canStillFire).length;
  }

  async add(input: unknown): Promise<ChaosRule> {
    this.expire();
    if (this.rules.length >= MAX_RULES) fail(`at most ${MAX_RULES} rules at once: remove some first`);
    const now = this.now();
    const rule = this.parse(input, this.idOf(this.nextId), now);
    this.nextId++;
    if (this.shared) {
      if (!(await this.shared.add(rule, MAX_RULES, now))) fail(`at most ${MAX_RULES} rules at once: remove some first`);
      await this.reload();
    } else this.rules.push(rule);
    return { ...rule };
  }

  /** Replaces the whole set (checked whole first: a bad rule changes nothing). */
  async replace(inputs: unknown): Promise<ChaosRule[]> {
    if (!Array.isArray(inputs)) fail('the rule set is a JSON array of rules');
    if (inputs.length > MAX_RULES) fail(`at most ${MAX_RULES} rules at once`);
    const now = this.now();
    const parsed = inputs.map((r, i) => {
      try {
        return this.parse(r, this.idOf(this.nextId + i), now);
      } catch (e) {
        throw new ChaosRuleError('bad_input', `rule ${i + 1}: ${(e as Error).message}`);
      }
    });
    this.nextId += parsed.length;
    if (this.shared) await this.shared.replace(parsed);
    else this.rules = parsed;
    this.draws.clear();
    return this.list();
  }

  async remove(id: string): Promise<boolean> {
    this.draws.delete(id);
    if (this.shared) {
      const gone = await this.shared.remove(id);
      await this.reload();
      return gone;
    }
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    return this.rules.length < before;
  }

  async clear(): Promise<number> {
    this.draws.clear();
    if (this.shared) {
      const n = await this.shared.clear(this.now());
      await this.reload();
      return n;
    }
    this.expire();
    const n = this.rules.length;
    this.rules = [];
    return n;
  }

  /**
   * The fault of the first rule that fires, or undefined. Synchronous, but when a rule fires on a
   * team server: its firing is claimed (a `times` rule) or counted in the database first, and the
   * answer is a promise (a firing another process took lets the evaluation go on with the next rule).
   */
  evaluate(surface: ChaosSurface, ctx: ChaosContext): ChaosFault | undefined | Promise<ChaosFault | undefined> {
    if (this.rules.length === 0) return undefined;
    this.expire();
    return this.evaluateFrom(this.rules, 0, surface, ctx);
  }

  private evaluateFrom(rules: readonly ChaosRule[], start: number, surface: ChaosSurface, ctx: ChaosContext): ChaosFault | undefined | Promise<ChaosFault | undefined> {
    const shared = this.shared;
    for (let i = start; i < rules.length; i++) {
      const rule = rules[i];
      if (rule.surface !== surface || !matches(rule, ctx)) continue;
      const draw = this.draws.get(rule.id) ?? 0;
      this.draws.set(rule.id, draw + 1);
      rule.evaluated++;
      // On a team server this mirror's `fired` only grows towards the table's: a rule used up here is used up there.
      const fires = rule.times !== undefined ? rule.fired < rule.times : rule.probability !== undefined ? seededDraw(rule.seed ?? 1, draw) < rule.probability : true;
      if (!fires || (shared && rule.times !== undefined)) shared?.count(rule.id);
      if (!fires) continue;
      if (!shared) {
        rule.fired++;
        return { ...rule.fault };
      }
      if (rule.times !== undefined) {
        return shared.claim(rule.id, this.now()).then((fired) => {
          if (fired === undefined) {
            // Another process took its last firing, or it ended: the evaluation goes on with the next rule.
            rule.fired = rule.times!;
            return this.evaluateFrom(rules, i + 1, surface, ctx);
          }
          rule.fired = Math.max(rule.fired, fired);
          return { ...rule.fault };
        });
      }
      rule.fired++;
      const fault = { ...rule.fault };
      return shared.fired(rule.id).then(() => fault);
    }
    return undefined;
  }

  private expire(): void {
    if (this.rules.length === 0) return;
    const now = this.now();
    // A rule whose N times are used up stays, with its counter, until its time to live ends.
    if (this.rules.some((r) => r.expiresAt <= now)) this.rules = this.rules.filter((r) => r.expiresAt > now);
  }
}
