// The self-signed certificate builder (src/server/tls/selfSigned.ts), read back by Node's
// X509Certificate (OpenSSL's parser). Real TLS handshakes with it are in smtp-tls.test.ts.
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSelfSigned } from '../../src/server/tls/selfSigned';

describe('self-signed certificate', function () {
  this.timeout(30_000);

  it('is a v3 certificate signed by its own key, for every name given', async () => {
    const { cert, key } = await createSelfSigned({ commonName: 'Test Inbox local SMTP', altNames: ['localhost', 'mail.dev.example', '127.0.0.1', '::1', 'fe80::1:2'], notAfter: new Date(Date.now() + 10 * 86_400_000) });
    const x = new X509Certificate(cert);
    assert.equal(x.subject, 'CN=Test Inbox local SMTP');
    assert.equal(x.issuer, x.subject);
    assert.ok(x.verify(x.publicKey));
    assert.ok(x.checkPrivateKey(createPrivateKey(key)));
    assert.ok(x.ca, 'CA:TRUE, so clients can trust it as its own anchor');
    assert.equal(x.checkHost('mail.dev.example'), 'mail.dev.example');
    assert.equal(x.checkHost('other.example'), undefined);
    for (const ip of ['127.0.0.1', '::1', 'fe80::1:2']) assert.equal(x.checkIP(ip), ip);
    assert.equal(x.checkIP('10.0.0.1'), undefined);
    assert.ok(/^[0-9A-F]+$/.test(x.serialNumber) && x.serialNumber.length <= 40, 'a positive serial of at most 20 octets');
  });

  it('writes validity in UTCTime before 2050 and GeneralizedTime after', async () => {
    const notBefore = new Date('2049-12-31T23:59:58Z');
    const notAfter = new Date('2051-06-01T12:00:00Z');
    const x = new X509Certificate((await createSelfSigned({ commonName: 'x', altNames: ['localhost'], notBefore, notAfter })).cert);
    assert.equal(new Date(x.validFrom).toISOString(), '2049-12-31T23:59:58.000Z');
    assert.equal(new Date(x.validTo).toISOString(), '2051-06-01T12:00:00.000Z');
  });

  it('refuses a name that is neither a host name nor an IP address, and an empty validity', async () => {
    await assert.rejects(createSelfSigned({ commonName: 'x', altNames: ['bad name'], notAfter: new Date(Date.now() + 86_400_000) }), /not a host name or IP address/);
    await assert.rejects(createSelfSigned({ commonName: 'x', altNames: [], notBefore: new Date(), notAfter: new Date(Date.now() - 1) }), /notAfter/);
  });
});
