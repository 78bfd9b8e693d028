import { strict as assert } from 'node:assert';
import { DEFAULT_TOTP, base32SecretProblem, totpAt } from '../../src/core/totp';

/** RFC 4648 base32 without padding, written here so the test does not trust the code under test to encode its input. */
function base32(bytes: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

// RFC 6238 Appendix B: the seeds are ASCII digits of 20, 32 and 64 bytes.
const SEEDS = {
  SHA1: base32(Buffer.from('12345678901234567890')),
  SHA256: base32(Buffer.from('12345678901234567890123456789012')),
  SHA512: base32(Buffer.from('1234567890123456789012345678901234567890123456789012345678901234')),
} as const;

const VECTORS: Array<[number, string, string, string]> = [
  // time (s), SHA1, SHA256, SHA512 — 8 digits
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('core/totp', () => {
  for (const [t, sha1, sha256, sha512] of VECTORS) {
    it(`RFC 6238 vectors at T=${t}, 8 and 6 digits`, () => {
      const expected = { SHA1: sha1, SHA256: sha256, SHA512: sha512 } as const;
      for (const algorithm of ['SHA1', 'SHA256', 'SHA512'] as const) {
        assert.equal(totpAt(SEEDS[algorithm], { digits: 8, algorithm, period: 30 }, t * 1000).code, expected[algorithm], `${algorithm} 8 digits`);
        // Six digits are the same truncated number modulo 10^6.
        assert.equal(totpAt(SEEDS[algorithm], { digits: 6, algorithm, period: 30 }, t * 1000).code, expected[algorithm].slice(2), `${algorithm} 6 digits`);
      }
    });
  }

  it('seconds_left counts down to the end of the period', () => {
    assert.equal(totpAt(SEEDS.SHA1, DEFAULT_TOTP, 59_000).seconds_left, 1);
    assert.equal(totpAt(SEEDS.SHA1, DEFAULT_TOTP, 60_000).seconds_left, 30);
    assert.equal(totpAt(SEEDS.SHA1, DEFAULT_TOTP, 60_001).seconds_left, 30);
    assert.equal(totpAt(SEEDS.SHA1, { ...DEFAULT_TOTP, period: 60 }, 61_000).seconds_left, 59);
  });

  it('accepts lowercase, spaces and padding as authenticator apps do', () => {
    const spaced = SEEDS.SHA1.toLowerCase().replace(/(.{4})/g, '$1 ') + '====';
    assert.equal(totpAt(spaced, DEFAULT_TOTP, 59_000).code, '287082');
  });

  it('names what is wrong with a bad secret', () => {
    assert.match(base32SecretProblem('') ?? '', /empty/);
    assert.match(base32SecretProblem('ABC1DEFG') ?? '', /"1" is not a base32 character/);
    assert.match(base32SecretProblem('ABC') ?? '', /not a whole number of bytes/);
    assert.equal(base32SecretProblem(SEEDS.SHA256), undefined);
    assert.throws(() => totpAt('!!', DEFAULT_TOTP, 0), /bad base32 secret/);
  });
});
