// Reference servers for the benchmark, the ceiling of this stack: a bare `smtp-server`
// (the dependency the inbox server uses) whose onData streams the message to nothing and
// acknowledges at its end, and a bare node:http server that reads the JSON body of an
// inject and answers `{status:"ok",id}`, or answers a list with a fixed 50-summary body.
// Nothing is stored. Prints one JSON line `{"smtp":"127.0.0.1:P","http":"http://127.0.0.1:P"}`
// on stdout when both listen; runs until killed.
import http from 'node:http';
import { SMTPServer } from 'smtp-server';

/** Same size cap as a real inbox server would advertise; large enough for any bench message. */
const MAX_MESSAGE_BYTES = 25 * 1024 * 1024;
/** Messages in the fixed list answer: the page size the list benchmark asks for. */
const LIST_PAGE = 50;

// The same smtp-server options as src/server/smtp/smtp.ts, so only the storage differs.
const smtp = new SMTPServer({
  banner: 'bare',
  size: MAX_MESSAGE_BYTES,
  authOptional: true,
  allowInsecureAuth: true,
  disabledCommands: ['STARTTLS'],
  hideSTARTTLS: true,
  disableReverseLookup: true,
  logger: false,
  onAuth(auth, _session, callback) {
    callback(null, { user: auth.username ?? 'anonymous' });
  },
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('error', callback);
    stream.on('end', () => callback(null, 'Message discarded'));
  },
});

// The literal 'inbox.test' (and the ready line's shape below) copy src/shared/contract.ts on
// purpose: this reference server runs as bare `node` with no TypeScript loader, so that its
// start-up and memory stay a baseline without tsx in them.
const now = Date.now();
const listBody = JSON.stringify({
  domain: 'inbox.test',
  to: 'big',
  msgs: Array.from({ length: LIST_PAGE }, (_, i) => ({
    subject: `Your code is ${100000 + i}`,
    domain: 'inbox.test',
    from: 'Bench Sender <sender@bench.test>',
    id: `big-${Math.floor(now / 1000)}-${i}`,
    to: 'big',
    time: now - i * 1000,
    seconds_ago: i,
  })),
});

let counter = 0;
const web = http.createServer((req, res) => {
  if (req.method === 'POST') {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"status":"error","message":"malformed JSON"}');
        return;
      }
      const id = `${String(body.to ?? 'bench')}-${Math.floor(Date.now() / 1000)}-${++counter}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', id }));
    });
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(listBody);
});

await new Promise((resolve) => smtp.listen(0, '127.0.0.1', resolve));
await new Promise((resolve) => web.listen(0, '127.0.0.1', resolve));
process.stdout.write(
  JSON.stringify({ smtp: `127.0.0.1:${smtp.server.address().port}`, http: `http://127.0.0.1:${web.address().port}` }) + '\n',
);
process.on('SIGTERM', () => process.exit(0));
