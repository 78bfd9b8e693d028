// The fault-rule set of src/server/chaos/rules.ts: parsing with clear refusals, matching by stage
// and address, seeded draws, next-N counts, and the time to live.
import assert from 'node:assert/strict';
import { addressMatches, type ChaosFault, ChaosRuleError, ChaosRules, DEFAULT_TTL_MS, MAX_TTL_MS, parseRule, ruleView, seededDraw } from '../../src/server/chaos/rules';

const greylist = { surface: 'smtp', match: { recipient: 'joe@inbox.test', stage: 'rcpt' }, fault: { reply: { code: 451, text: '4.7.1 Greylisted, try again later' } }, times: 1 };

describe('fault rules (chaos)', () => {
  it('fires the next N times, counts, and then lets mail through while the rule stays listed with its counter', async () => {
    const rules = new ChaosRules(() => 1_000);
    const r = await rules.add({ ...greylist, times: 2 });
    const ctx = { stage: 'rcpt' as const, sender: 'app@example.com', recipients: ['joe@inbox.test'] };
    assert.deepEqual(rules.evaluate('smtp', ctx), { reply: { code: 451, text: '4.7.1 Greylisted, try again later' } });
    assert.ok(rules.evaluate('smtp', ctx));
    assert.equal(rules.evaluate('smtp', ctx), undefined);
    assert.deepEqual((await rules.list()).map((x) => [x.id, x.fired, x.evaluated]), [[r.id, 2, 3]]);
  });

  it('matches only its stage, surface and addresses: an address, an inbox of any domain, or *@domain', async () => {
    const rules = new ChaosRules(() => 0);
    await rules.add({ ...greylist, times: 100 });
    assert.equal(rules.evaluate('smtp', { stage: 'mail', sender: 'a@b.test' }), undefined, 'another stage');
    assert.equal(rules.evaluate('resend', { recipients: ['joe@inbox.test'] }), undefined, 'another surface');
    assert.equal(rules.evaluate('smtp', { stage: 'rcpt', recipients: ['ann@inbox.test'] }), undefined, 'another recipient');
    assert.ok(rules.evaluate('smtp', { stage: 'rcpt', recipients: ['JOE@inbox.test'] }), 'case-insensitive');
    assert.equal(addressMatches('joe', 'joe@other.test'), true);
    assert.equal(addressMatches('*@inbox.test', 'ann@inbox.test'), true);
    assert.equal(addressMatches('*@inbox.test', 'ann@xinbox.test'), false);
    assert.equal(addressMatches('joe@inbox.test', 'joe@inbox.testx'), false);
  });

  it('gives the same sequence twice for one seed, and the i-th evaluation takes the i-th draw', async () => {
    const run = async (): Promise<boolean[]> => {
      const rules = new ChaosRules(() => 0);
      await rules.add({ surface: 'resend', match: { all: true }, fault: { status: 429, retry_after: 2 }, probability: 0.5, seed: 42 });
      return Array.from({ length: 40 }, () => rules.evaluate('resend', { recipients: ['x@y.test'] }) !== undefined);
    };
    const a = await run();
    assert.deepEqual(await run(), a);
    assert.deepEqual(a, Array.from({ length: 40 }, (_, i) => seededDraw(42, i) < 0.5));
    assert.ok(a.includes(true) && a.includes(false), 'a probability of one half fires sometimes, not always');
    const other = new ChaosRules(() => 0);
    await other.add({ surface: 'resend', match: { all: true }, fault: { status: 429 }, probability: 0.5, seed: 7 });
    assert.notDeepEqual(Array.from({ length: 40 }, () => other.evaluate('resend', {}) !== undefined), a, 'another seed, another sequence');
  });

  it('ends a rule when its time to live is over: 10 minutes by default, at most 24 h', async () => {
    let now = 0;
    const rules = new ChaosRules(() => now);
    await rules.add({ ...greylist, times: 100 });
    await rules.add({ ...greylist, times: 100, ttl: '30s' });
    assert.equal(rules.size, 2);
    now = 30_000;
    assert.equal(rules.size, 1, 'the 30 s rule is gone');
    now = DEFAULT_TTL_MS;
    assert.equal(rules.size, 0);
    assert.equal(rules.evaluate('smtp', { stage: 'rcpt', recipients: ['joe@inbox.test'] }), undefined);
    assert.throws(() => parseRule({ ...greylist, ttl: MAX_TTL_MS + 1 }, 'r', 0), /ttl must be at most 24h .*got 86400001/);
    assert.throws(() => parseRule({ ...greylist, ttl: '2d' }, 'r', 0), /ttl must be at most 24h .*got "2d"/);
    assert.throws(() => parseRule({ ...greylist, ttl: '2 days' }, 'r', 0), /ttl must be a duration \(milliseconds as a number, or text such as 500ms, 40s, 10m, 2h\), got "2 days"/);
    assert.throws(() => parseRule({ ...greylist, ttl: 0 }, 'r', 0), /ttl must be at least 1ms: a rule with no time to live would never fire/);
  });

  it('reads a phone number as people write it as its phone inbox, on every surface (a delivery rule holds the SMS of +1 555 010 0199)', async () => {
    const rules = new ChaosRules(() => 0);
    await rules.add({ surface: 'delivery', match: { recipient: '+1 (555) 010-0199' }, fault: { delivery_delay: '5s' } });
    assert.equal((rules.evaluate('delivery', { recipients: ['15550100199@inbox.test'] }) as ChaosFault | undefined)?.deliveryDelayMs, 5_000);
    assert.equal(rules.evaluate('delivery', { recipients: ['15550100200@inbox.test'] }), undefined);
  });

  it('counts as active only the rules that can still fire: a times rule that fired its N stays listed with its counters', async () => {
    const rules = new ChaosRules(() => 0);
    await rules.add(greylist);
    assert.equal(rules.size, 1);
    assert.ok(rules.evaluate('smtp', { stage: 'rcpt', recipients: ['joe@inbox.test'] }));
    assert.equal(rules.size, 0, 'used up');
    assert.deepEqual((await rules.list()).map((r) => [r.fired, r.times]), [[1, 1]]);
  });

  it('names the known fields at every level of a rule with an unknown one', () => {
    assert.throws(() => parseRule({ ...greylist, match: { recipent: 'joe' } }, 'r', 0), /unknown field match.recipent \(known: all, recipient, sender, stage, client\)/);
    assert.throws(() => parseRule({ surface: 'resend', match: { all: true }, fault: { retryAfter: 2 } }, 'r', 0), /unknown field fault.retryAfter \(known: .*retry_after/);
  });

  it('refuses what a surface cannot do or a stage cannot know, and a match-everything rule without "all": true', () => {
    const refused: Array<[unknown, RegExp]> = [
      [{ surface: 'smtp', match: {}, fault: { reply: { code: 451 } } }, /"all": true/],
      [{ surface: 'smtp', match: { stage: 'connect', recipient: 'joe' }, fault: { drop: true } }, /only match.client is known/],
      [{ surface: 'smtp', match: { stage: 'mail', recipient: 'joe' }, fault: { drop: true } }, /recipient is not known yet/],
      [{ surface: 'smtp', match: { all: true }, fault: { reply: { code: 250 } } }, /4xx or 5xx/],
      [{ surface: 'resend', match: { all: true }, fault: { reply: { code: 451 } } }, /fault.reply is for the smtp surface/],
      [{ surface: 'sendgrid', match: { all: true }, fault: { twilio_code: 20429, status: 429 } }, /twilio and verify/],
      [{ surface: 'delivery', match: { all: true }, fault: {} }, /delivery_delay/],
      [{ surface: 'delivery', match: { all: true }, fault: { delay: '2s', delivery_delay: '5s' } }, /fault.delay is for the smtp, provider and Twilio surfaces/],
      [{ surface: 'smtp', match: { all: true, sender: 'a' }, fault: { drop: true } }, /match.all goes alone/],
      [{ surface: 'nope', match: { all: true }, fault: {} }, /surface must be one of/],
      [{ surface: 'smtp', match: { all: true }, fault: { drop: true }, times: 1, probability: 0.5 }, /exclude each other/],
      [{ surface: 'smtp', match: { all: true }, fault: { drop: true }, extra: 1 }, /unknown field "extra"/],
    ];
    for (const [input, message] of refused) assert.throws(() => parseRule(input, 'r', 0), (e: unknown) => ChaosRuleError.is(e) && message.test(e.message), JSON.stringify(input));
  });

  it('replaces the whole set only when every rule is good, naming the bad one', async () => {
    const rules = new ChaosRules(() => 0);
    await rules.add(greylist);
    await assert.rejects(() => rules.replace([greylist, { surface: 'smtp' }]), /rule 2: match is required/);
    assert.equal(rules.size, 1, 'unchanged');
    assert.equal((await rules.replace([greylist, greylist])).length, 2);
    assert.equal(await rules.clear(), 2);
  });

  it('gives a Twilio error code alone the status 400, and shows a rule in the fields it was given', () => {
    const rule = parseRule({ surface: 'twilio', match: { recipient: '+15550100200' }, fault: { twilio_code: 21211, delay: '1s' }, times: 2, ttl: '1m' }, 'r7', 1_000);
    assert.deepEqual(rule.fault, { twilioCode: 21211, status: 400, delayMs: 1_000 });
    assert.deepEqual(ruleView(rule), { id: 'r7', surface: 'twilio', match: { recipient: '15550100200' }, fault: { delay: 1_000, status: 400, twilio_code: 21211 }, times: 2, expires: new Date(61_000).toISOString(), fired: 0, evaluated: 0 });
    assert.deepEqual(ruleView(parseRule({ surface: 'resend', match: { all: true }, fault: { status: 429 }, probability: 0.25 }, 'r8', 0)), { id: 'r8', surface: 'resend', match: { all: true }, fault: { status: 429 }, probability: 0.25, seed: 1, expires: new Date(DEFAULT_TTL_MS).toISOString(), fired: 0, evaluated: 0 });
  });

  it('answers at once with no rule (no work on intake)', () => {
    let clockRead = 0;
    const rules = new ChaosRules(() => (clockRead++, 0));
    assert.equal(rules.evaluate('smtp', { stage: 'rcpt', recipients: ['joe@inbox.test'] }), undefined);
    assert.equal(clockRead, 0, 'not even the clock is read');
  });
});
