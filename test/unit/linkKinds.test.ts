import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { classifyLinks, linkKind } from '../../src/core/linkKinds';

interface Fixture {
  description: string;
  html?: string;
  text?: string;
  listUnsubscribe?: string;
  expect: Array<{ url: string; kind: string }>;
}

const DIR = path.join(__dirname, '..', 'fixtures', 'links');

describe('core/linkKinds', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

  it('finds at least ten fixture emails to run', () => {
    assert.ok(files.length >= 10, `${files.length} fixtures`);
  });

  for (const file of files) {
    const fx = JSON.parse(readFileSync(path.join(DIR, file), 'utf8')) as Fixture;
    it(`${file}: ${fx.description}`, () => {
      const got = classifyLinks({ html: fx.html, text: fx.text, listUnsubscribe: fx.listUnsubscribe }).map((l) => ({ url: l.url, kind: l.kind }));
      assert.deepEqual(got, fx.expect);
    });
  }

  it('adds the List-Unsubscribe URL when the body does not show it, and ignores its mailto:', () => {
    const got = classifyLinks({ html: '<a href="https://x.test/verify?t=1">Go</a>', listUnsubscribe: '<mailto:u@x.test>, <https://x.test/l/u?i=9>' });
    assert.deepEqual(
      got.map((l) => [l.url, l.kind]),
      [
        ['https://x.test/verify?t=1', 'verify-email'],
        ['https://x.test/l/u?i=9', 'unsubscribe'],
      ],
    );
  });

  it('a tracker with neutral text counts by the URL it wraps; with no wrapped URL it is tracking', () => {
    assert.equal(linkKind({ url: 'https://click.x.test/c?url=https%3A%2F%2Fx.test%2Fconfirm%3Fk%3D1', text: 'Click here' }), 'verify-email');
    assert.equal(linkKind({ url: 'https://click.x.test/c?url=https%3A%2F%2Fx.test%2Fshop', text: 'Click here' }), 'tracking');
    assert.equal(linkKind({ url: 'https://x.test/ls/click?upn=zz', text: 'Our shop' }), 'tracking');
  });

  it('text outranks the URL: a reset link whose URL says "confirm" is a reset', () => {
    assert.equal(linkKind({ url: 'https://x.test/confirm/abc', text: 'Reset your password' }), 'reset-password');
    assert.equal(linkKind({ url: 'https://x.test/home', text: 'Home' }), 'other');
  });
});
