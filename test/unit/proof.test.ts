// The proof key of a token (src/core/proof.ts): PBKDF2-SHA256 as documented, derived once per
// token in a process, and never one token's key for another.
import assert from 'node:assert/strict';
import { pbkdf2Sync } from 'node:crypto';
import { tokenProofKey } from '../../src/core/proof';

/** The documented derivation, computed here by Node's own PBKDF2. */
const expected = (token: string): string => pbkdf2Sync(token, 'test-inbox token proof v1', 100_000, 32, 'sha256').toString('hex');

describe('tokenProofKey', () => {
  it('is PBKDF2-SHA256 of the token, and a second ask in the process is the first answer', async () => {
    const first = tokenProofKey('proof-token-a');
    assert.equal(tokenProofKey('proof-token-a'), first, 'the same derivation, not a second one');
    assert.equal(await first, expected('proof-token-a'));
  });

  it('keeps each token its own key, also past the number it remembers', async () => {
    const tokens = Array.from({ length: 20 }, (_, i) => `proof-token-${i}`);
    const keys = await Promise.all(tokens.map((t) => tokenProofKey(t)));
    assert.equal(new Set(keys).size, tokens.length);
    // The first ones were forgotten: derived again, to the same key.
    assert.equal(await tokenProofKey(tokens[0]), expected(tokens[0]));
    assert.equal(await tokenProofKey(tokens[19]), expected(tokens[19]));
  });
});
