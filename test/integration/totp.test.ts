// Copy TOTP Code… in a real extension host: a secret pasted as base32 or as an otpauth:// URI is
// kept under a name in SecretStorage (never in settings or state), and the copied code is the
// one RFC 6238 gives for now, computed here independently with node:crypto.
import * as assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import * as vscode from 'vscode';
import { answering, clipboard, debugState } from './support/state';

/** RFC 6238 §4 with RFC 4226 §5.3's dynamic truncation: the reference, not the extension's library. */
function rfc6238(base32: string, atMs: number, digits = 6, algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1', period = 30): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of base32.replace(/[\s=-]/g, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 1000 / period)));
  const h = createHmac(algorithm, key).update(counter).digest();
  const o = h[h.length - 1] & 0xf;
  const n = ((h[o] & 0x7f) << 24) | (h[o + 1] << 16) | (h[o + 2] << 8) | h[o + 3];
  return String(n % 10 ** digits).padStart(digits, '0');
}

/** The code for now, or for the step just before or after when the copy straddled a boundary. */
function plausible(code: string, base32: string, digits?: number, algorithm?: 'sha1' | 'sha256' | 'sha512', period = 30): boolean {
  const now = Date.now();
  return [now - period * 1000, now, now + 1000].some((t) => rfc6238(base32, t, digits, algorithm, period) === code);
}

describe('Copy TOTP Code', function () {
  this.timeout(60_000);
  const SECRET = 'JBSWY3DPEHPK3PXP';

  after(async () => {
    for (const name of ['it base32', 'Acme (qa@acme.test)']) await vscode.commands.executeCommand('testInbox.copyTotpCode', { remove: name });
  });

  it('stores a base32 secret under a name and copies the current code with the seconds left', async () => {
    const r = await vscode.commands.executeCommand<{ name: string; code: string; secondsLeft: number }>('testInbox.copyTotpCode', { name: 'it base32', secret: 'jbsw y3dp ehpk 3pxp' });
    assert.equal(r?.name, 'it base32');
    assert.match(r.code, /^\d{6}$/);
    assert.ok(plausible(r.code, SECRET), `${r.code} is the RFC 6238 code of now`);
    assert.ok(r.secondsLeft >= 1 && r.secondsLeft <= 30);
    assert.equal(await clipboard(), r.code);
    const st = await debugState();
    assert.ok(st.shown.some((x) => x.where === 'status' && x.text.includes(`${r.code}, valid`)), 'the status bar says the seconds left');
    // The secret is in secret storage only: nowhere in settings or in the extension's state.
    assert.ok(!JSON.stringify(st.mementos).includes(SECRET) && !JSON.stringify(vscode.workspace.getConfiguration('testInbox')).includes(SECRET));
  });

  it('takes an otpauth:// URI with its algorithm, digits and period', async () => {
    const uri = `otpauth://totp/Acme:qa%40acme.test?secret=${SECRET}&issuer=Acme&algorithm=SHA256&digits=8&period=60`;
    const r = await vscode.commands.executeCommand<{ code: string; secondsLeft: number }>('testInbox.copyTotpCode', { name: 'Acme (qa@acme.test)', secret: uri });
    assert.match(r!.code, /^\d{8}$/);
    assert.ok(plausible(r!.code, SECRET, 8, 'sha256', 60));
    assert.ok(r!.secondsLeft <= 60);
  });

  it('from the palette, picking a stored name copies its code', async () => {
    await vscode.env.clipboard.writeText('before');
    // Sorted names: "Acme (qa@acme.test)" first, then "it base32".
    const r = await answering(vscode.commands.executeCommand<{ name: string; code: string }>('testInbox.copyTotpCode'), { next: 1 });
    assert.equal(r?.name, 'it base32');
    assert.ok(plausible(r.code, SECRET));
    assert.equal(await clipboard(), r.code);
  });

  it('refuses a secret that is not base32 or a TOTP URI, saying why, and stores nothing', async () => {
    await vscode.env.clipboard.writeText('unchanged');
    for (const bad of ['not base32!', 'otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1']) {
      assert.equal(await vscode.commands.executeCommand('testInbox.copyTotpCode', { name: 'bad one', secret: bad }), undefined);
    }
    assert.equal(await clipboard(), 'unchanged');
    const st = await debugState();
    const errors = st.shown.filter((x) => x.where === 'error').map((x) => x.text).join('\n');
    assert.match(errors, /not a base32 character/);
    assert.match(errors, /HOTP/);
    assert.equal(await vscode.commands.executeCommand('testInbox.copyTotpCode', { name: 'bad one' }), undefined, 'nothing was stored under the name');
  });
});
