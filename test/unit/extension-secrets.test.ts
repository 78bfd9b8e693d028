import assert from 'node:assert/strict';
import { parseSecretKey, secretKey, TokenStore, tokenProblem } from '../../src/extension/config/secrets';
import { memorySecrets } from '../support/memory';

describe('extension token store', () => {
  it('keys tokens by kind and server URL', async () => {
    const secrets = memorySecrets();
    const store = new TokenStore(secrets);
    await store.set('api', 'https://api.mailinator.com', 'abc123');
    await store.set('webhook', 'http://127.0.0.1:2580', 'wh-token');
    assert.equal(await store.get('api', 'https://api.mailinator.com'), 'abc123');
    assert.equal(await store.get('api', 'http://127.0.0.1:2580'), undefined);
    assert.deepEqual([...secrets.data.keys()].sort(), [
      'testInbox.apiToken:https://api.mailinator.com',
      'testInbox.webhookToken:http://127.0.0.1:2580',
    ]);
  });

  it('round-trips its keys', () => {
    assert.deepEqual(parseSecretKey(secretKey('webhook', 'http://x:1')), { kind: 'webhook', baseUrl: 'http://x:1' });
    assert.equal(parseSecretKey('other.key'), undefined);
  });

  it('refuses empty tokens and tokens with spaces, storing nothing', async () => {
    const secrets = memorySecrets();
    const store = new TokenStore(secrets);
    await assert.rejects(store.set('api', 'https://h', '   '), /empty/);
    await assert.rejects(store.set('api', 'https://h', 'two words'), /no spaces/);
    assert.equal(secrets.data.size, 0);
    assert.equal(tokenProblem('ok-token_1'), undefined);
  });

  it('trims pasted whitespace around a token', async () => {
    const store = new TokenStore(memorySecrets());
    await store.set('api', 'https://h', '  tok\n');
    assert.equal(await store.get('api', 'https://h'), 'tok');
  });

  it('clears a token and tells listeners which server changed', async () => {
    const store = new TokenStore(memorySecrets());
    const seen: string[] = [];
    store.onDidChange((c) => seen.push(`${c.kind}:${c.baseUrl}`));
    await store.set('api', 'https://h', 'tok');
    await store.clear('api', 'https://h');
    assert.equal(await store.get('api', 'https://h'), undefined);
    assert.deepEqual(seen, ['api:https://h', 'api:https://h']);
  });
});
