import assert from 'node:assert/strict';
import { Logger } from '../../src/extension/log';
import { redact, REDACTED } from '../../src/core/redact';

describe('extension log redaction', () => {
  it('strips the user name and password of every URL in a log line', () => {
    const lines: string[] = [];
    const push = (m: string) => void lines.push(m);
    const log = new Logger({ trace: push, debug: push, info: push, warn: push, error: push });
    log.warn('Setting testInbox.server: "https://alice:secret@host.example/x" and ftp://bob@files.example and http://host.example/@a');
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines[0], /alice|secret|bob@/);
    assert.match(lines[0], /https:\/\/\*\*\*@host\.example\/x/);
    assert.match(lines[0], /http:\/\/host\.example\/@a/, 'an @ in the path is not user info');
  });

  it('replaces known secrets wherever they appear', () => {
    assert.equal(redact('token s3cr3t-value used twice: s3cr3t-value', ['s3cr3t-value']), `token ${REDACTED} used twice: ${REDACTED}`);
  });
  it('redacts Authorization headers and token query parameters without knowing the token', () => {
    const out = redact('GET /x?token=abcdef&limit=1 Authorization: rawtok123 whtoken=zzz999');
    assert.doesNotMatch(out, /abcdef|rawtok123|zzz999/);
    assert.match(out, /limit=1/);
  });
  it('redacts tokens in JSON and environment assignments', () => {
    const out = redact('{"apiToken":"aaa111","webhookToken":"bbb222"} TEST_INBOX_API_TOKEN=ccc333');
    assert.doesNotMatch(out, /aaa111|bbb222|ccc333/);
  });
  it('logs through the sink with every added secret removed', () => {
    const lines: string[] = [];
    const sink = { trace: (m: string) => lines.push(m), debug: (m: string) => lines.push(m), info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
    const log = new Logger(sink);
    log.addSecret('my-api-token-1');
    log.info('connected with my-api-token-1');
    log.error('failed: my-api-token-1');
    assert.deepEqual(lines, [`connected with ${REDACTED}`, `failed: ${REDACTED}`]);
  });
});
