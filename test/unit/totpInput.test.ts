import assert from 'node:assert/strict';
import { parseTotpInput, suggestedTotpName } from '../../src/core/totpInput';
import { TOTP_SECRETS_KEY, TotpSecretStore } from '../../src/extension/config/secrets';
import { memorySecrets } from '../support/memory';

describe('core/totpInput: pasted TOTP secrets', () => {
  it('takes base32 as authenticator apps do: spaces, dashes, padding and case ignored', () => {
    const r = parseTotpInput(' jbsw-y3dp ehpk 3pxp== ');
    assert.deepEqual(r, { ok: true, value: { secret: 'JBSWY3DPEHPK3PXP', digits: 6, algorithm: 'SHA1', period: 30 } });
  });

  it('takes an otpauth://totp URI with its parameters, issuer and account', () => {
    const r = parseTotpInput('otpauth://totp/Acme:qa%40acme.test?secret=JBSWY3DPEHPK3PXP&issuer=Acme&algorithm=SHA512&digits=8&period=60');
    assert.ok(r.ok);
    assert.deepEqual(r.value, { secret: 'JBSWY3DPEHPK3PXP', algorithm: 'SHA512', digits: 8, period: 60, issuer: 'Acme', account: 'qa@acme.test' });
    assert.equal(suggestedTotpName(r.value), 'Acme (qa@acme.test)');
  });

  it('says what is wrong: empty, not base32, HOTP, unsupported digits, broken URI', () => {
    const problem = (s: string) => {
      const r = parseTotpInput(s);
      assert.equal(r.ok, false, s);
      return r.ok ? '' : r.problem;
    };
    assert.match(problem(''), /Paste a base32 secret/);
    assert.match(problem('JBSWY3DP!'), /"!" is not a base32 character/);
    assert.match(problem('otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1'), /HOTP/);
    assert.match(problem('otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=4'), /4 digits/);
    assert.match(problem('otpauth://totp/x'), /otpauth:\/\/ URI/);
    assert.match(problem('x'.repeat(5000)), /longer than/);
  });
});

describe('extension TOTP secret store (SecretStorage)', () => {
  it('adds, lists sorted, replaces, removes; keeps everything in one secret', async () => {
    const secrets = memorySecrets();
    const store = new TotpSecretStore(secrets);
    assert.deepEqual(await store.names(), []);
    await store.set('zeta', { secret: 'JBSWY3DPEHPK3PXP', algorithm: 'SHA1', digits: 6, period: 30 });
    await store.set(' alpha ', { secret: 'GEZDGNBVGY3TQOJQ', algorithm: 'SHA256', digits: 8, period: 60 });
    assert.deepEqual(await store.names(), ['alpha', 'zeta']);
    assert.deepEqual([...secrets.data.keys()], [TOTP_SECRETS_KEY]);
    await store.set('zeta', { secret: 'GEZDGNBVGY3TQOJQ', algorithm: 'SHA1', digits: 6, period: 30 });
    assert.equal((await store.get('zeta'))?.secret, 'GEZDGNBVGY3TQOJQ');
    assert.equal(await store.remove('zeta'), true);
    assert.equal(await store.remove('zeta'), false);
    assert.equal(await store.remove('alpha'), true);
    assert.equal(secrets.data.size, 0, 'the last removal deletes the secret');
  });

  it('refuses a bad name and skips damaged entries instead of throwing', async () => {
    const secrets = memorySecrets();
    const store = new TotpSecretStore(secrets);
    await assert.rejects(store.set('  ', { secret: 'JBSWY3DPEHPK3PXP', algorithm: 'SHA1', digits: 6, period: 30 }), /name/);
    secrets.data.set(TOTP_SECRETS_KEY, JSON.stringify({ good: { secret: 'JBSWY3DPEHPK3PXP', algorithm: 'SHA1', digits: 6, period: 30 }, bad: { secret: 'not base32' }, worse: 7 }));
    assert.deepEqual(await store.names(), ['good']);
    secrets.data.set(TOTP_SECRETS_KEY, '{not json');
    assert.deepEqual(await store.names(), []);
  });
});
