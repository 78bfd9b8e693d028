// The presets of Simulate Failures… (docs/chaos.md, "In the editor"): each one names the few
// answers it needs and turns them into one fault rule. The rule itself is checked by the server
// only (POST /api/v2/chaos/rules answers a 400 that names the field): these checks are of the
// answers' shape, so a prompt can say at once that "abc" is not a number. No vscode import.
import { MAX_CHAOS_DELAY_MS } from '../../core/wire';

/** The provider APIs a rate-limit preset can fail. */
export const RATE_LIMITED_PROVIDERS = ['resend', 'sendgrid', 'postmark', 'mailgun', 'ses'] as const;
export type RateLimitedProvider = (typeof RATE_LIMITED_PROVIDERS)[number];

/** A test's greylisting or drop lasts a few tries: more than this many is a typo. */
const MAX_TIMES = 1000;
/** The server's own bound on a delivery delay. */
const MAX_DELAY_SECONDS = MAX_CHAOS_DELAY_MS / 1000;
/** Retry-After beyond an hour is no test anyone waits for. */
const MAX_RETRY_AFTER_SECONDS = 3600;

export interface PresetQuestion {
  key: string;
  prompt: string;
  placeHolder?: string;
  /** What the box starts with. */
  value?: string;
  /** A message when the answer cannot be used, undefined when it can. */
  validate(text: string): string | undefined;
  /** A pick from these values instead of a typed answer. */
  choices?: ReadonlyArray<{ value: string; label: string; description?: string }>;
}

export interface Preset {
  id: string;
  label: string;
  icon: string;
  description: string;
  questions: PresetQuestion[];
  /** The rule, from answers every question's validate() accepted. */
  rule(answers: Record<string, string>): Record<string, unknown>;
}

function wholeNumber(min: number, max: number): (text: string) => string | undefined {
  return (text) => {
    const t = text.trim();
    if (!/^\d+$/.test(t)) return `a whole number from ${min} to ${max}`;
    const n = Number(t);
    return n < min || n > max ? `a whole number from ${min} to ${max}` : undefined;
  };
}

const required = (what: string) => (text: string) => (text.trim() === '' ? `${what} is needed` : undefined);
const anything = (): undefined => undefined;

/** A blank answer matches everything (`"all": true`); otherwise the recipient as typed. */
function recipientMatch(text: string | undefined): Record<string, unknown> {
  const t = (text ?? '').trim();
  return t === '' ? { all: true } : { recipient: t };
}

const times = (deflt: string): PresetQuestion => ({ key: 'times', prompt: 'How many times in a row (the next N matches)?', value: deflt, validate: wholeNumber(1, MAX_TIMES) });
const optionalRecipient = (placeHolder: string): PresetQuestion => ({ key: 'recipient', prompt: 'Only for this recipient (blank: every one)', placeHolder, validate: anything });

export const PRESETS: readonly Preset[] = [
  {
    id: 'greylisting',
    label: 'SMTP greylisting',
    icon: 'watch',
    description: '451 at RCPT for the next N deliveries',
    questions: [optionalRecipient('joe@inbox.test, joe, or *@inbox.test'), times('1')],
    rule: (a) => ({ surface: 'smtp', match: { stage: 'rcpt', ...recipientMatch(a.recipient) }, fault: { reply: { code: 451, text: '4.7.1 Greylisted, try again later' } }, times: Number(a.times) }),
  },
  {
    id: 'badRecipient',
    label: 'One bad recipient',
    icon: 'person',
    description: '550 for one address; the others get their copies',
    questions: [{ key: 'recipient', prompt: 'The address the server refuses with 550', placeHolder: 'ann@inbox.test', validate: required('an address') }],
    rule: (a) => ({ surface: 'smtp', match: { stage: 'rcpt', recipient: a.recipient.trim() }, fault: { reply: { code: 550, text: '5.1.1 No such user' } } }),
  },
  {
    id: 'providerRateLimit',
    label: 'Provider rate limit',
    icon: 'cloud-upload',
    description: '429 with Retry-After from Resend, SendGrid, Postmark, Mailgun or SES',
    questions: [
      {
        key: 'provider',
        prompt: 'Which provider API answers 429?',
        validate: (t) => ((RATE_LIMITED_PROVIDERS as readonly string[]).includes(t) ? undefined : `one of ${RATE_LIMITED_PROVIDERS.join(', ')}`),
        choices: [
          { value: 'resend', label: 'Resend' },
          { value: 'sendgrid', label: 'SendGrid' },
          { value: 'postmark', label: 'Postmark' },
          { value: 'mailgun', label: 'Mailgun' },
          { value: 'ses', label: 'Amazon SES', description: 'TooManyRequestsException' },
        ],
      },
      optionalRecipient('ann@inbox.test'),
      { key: 'retryAfter', prompt: 'Retry-After, in seconds', value: '2', validate: wholeNumber(0, MAX_RETRY_AFTER_SECONDS) },
    ],
    rule: (a) => ({ surface: a.provider, match: recipientMatch(a.recipient), fault: { status: 429, retry_after: Number(a.retryAfter) } }),
  },
  {
    id: 'sesThrottling',
    label: 'SES throttling',
    icon: 'cloud',
    description: 'TooManyRequestsException for the next N sends (the AWS SDK retries)',
    questions: [times('2')],
    rule: (a) => ({ surface: 'ses', match: { all: true }, fault: { status: 429 }, times: Number(a.times) }),
  },
  {
    id: 'twilioRateLimit',
    label: 'Twilio 20429',
    icon: 'device-mobile',
    description: 'Too many requests from the Messages API',
    questions: [optionalRecipient('+15550100199')],
    rule: (a) => ({ surface: 'twilio', match: recipientMatch(a.recipient), fault: { status: 429 } }),
  },
  {
    id: 'twilioInvalidTo',
    label: 'Twilio 21211',
    icon: 'device-mobile',
    description: "Invalid 'To' phone number for one number",
    questions: [{ key: 'recipient', prompt: "The number Twilio calls invalid (21211)", placeHolder: '+15550100200', validate: required('a number') }],
    rule: (a) => ({ surface: 'twilio', match: { recipient: a.recipient.trim() }, fault: { twilio_code: 21211 } }),
  },
  {
    id: 'lateDelivery',
    label: 'Slow SMS code / late delivery',
    icon: 'clock',
    description: 'accepted at once, visible N seconds later',
    questions: [
      { key: 'recipient', prompt: 'Whose mail or SMS arrives late: an address, an inbox, or a phone inbox (its digits)', placeHolder: '15550100199', validate: required('a recipient') },
      { key: 'seconds', prompt: 'How late, in seconds', value: '40', validate: wholeNumber(1, MAX_DELAY_SECONDS) },
    ],
    rule: (a) => ({ surface: 'delivery', match: { recipient: a.recipient.trim() }, fault: { delivery_delay: `${Number(a.seconds)}s` }, times: 1 }),
  },
  {
    id: 'dropMidData',
    label: 'Drop the connection mid-DATA',
    icon: 'debug-disconnect',
    description: 'the SMTP connection closes while the message arrives',
    questions: [times('1')],
    rule: (a) => ({ surface: 'smtp', match: { stage: 'data', all: true }, fault: { drop: true }, times: Number(a.times) }),
  },
];

export function findPreset(id: string): Preset | undefined {
  return PRESETS.find((p) => p.id === id);
}

/** One line per rule for a list: `resend 429 · ann@inbox.test · fired 2 of 3`. */
export function describeRule(r: { surface: string; match: Record<string, unknown>; fault: Record<string, unknown>; fired: number; evaluated: number; times?: number }): { label: string; detail: string } {
  const f = r.fault;
  const reply = f.reply as { code?: unknown } | undefined;
  const what = [
    reply?.code !== undefined ? String(reply.code) : undefined,
    f.drop === true ? 'drop' : undefined,
    f.status !== undefined ? String(f.status) : undefined,
    f.twilio_code !== undefined ? `code ${String(f.twilio_code)}` : undefined,
    f.delivery_delay !== undefined ? `late ${String(f.delivery_delay)}` : undefined,
    f.delay !== undefined ? `delay ${String(f.delay)}` : undefined,
  ].filter((x) => x !== undefined);
  const m = r.match;
  const who = [m.stage, m.recipient, m.sender, m.client, m.all === true ? 'all' : undefined].filter((x) => typeof x === 'string').join(' · ');
  return { label: `${r.surface} ${what.join(' ')}`.trim(), detail: `${who}${who ? ' · ' : ''}fired ${r.fired}${r.times !== undefined ? ` of ${r.times}` : ''}, matched ${r.evaluated}` };
}
