// The figures of issue 14 that this server must hold under hostile load, each measured against
// the built CLI in a child process (bench/lib/ours.ts):
//   bigmail     10 concurrent 24 MB SMTP messages: RSS idle, peak, and 30 s later
//   stall       GET …/links of an 18 MB HTML message with 200k links: /healthz p99 meanwhile,
//               and how long an SMTP delivery takes meanwhile
//   recipients  one 100 KB message to 1,000 recipients: bytes the server wrote
// Run from bench/run.ts (`npm run bench -- --only bigmail,stall,recipients`); no test asserts
// any figure printed here.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { DEFAULT_DOMAIN } from '../src/shared/contract';
import type { Ours } from './lib/ours';
import { rssMb } from './lib/procs';
import { figure, type Figure } from './lib/report';
import { buildMessage, SmtpConnection, sendOne } from './lib/smtp-load';

/** Issue 14 point 4: ten senders of 24 MB at once. */
export const BIG_MESSAGES = 10;
export const BIG_MESSAGE_BYTES = 24 * 1024 * 1024;
/** How long after the big messages the RSS is read again. */
export const SETTLE_MS = 30_000;
/** RSS is sampled this often while the big messages arrive. */
const RSS_SAMPLE_MS = 50;
/** Issue 14 point 7: an 18 MB HTML body with 200,000 links. */
export const HUGE_HTML_BYTES = 18 * 1024 * 1024;
export const HUGE_HTML_LINKS = 200_000;
/** /healthz is asked this often (one at a time) while the links of the huge message are read. */
const HEALTH_GAP_MS = 5;
/** Issue 14 point 5: one 100 KB message to 1,000 recipients. */
export const FANOUT_RECIPIENTS = 1_000;
export const FANOUT_BYTES = 100 * 1024;

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** Bytes a process has handed to write() so far (Linux /proc/<pid>/io `wchar`); NaN elsewhere. */
export function writtenBytes(pid: number): number {
  try {
    const m = /^wchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

function get(base: string, path: string, token: string): Promise<{ status: number; body: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { headers: { authorization: token }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - t0 }));
    });
    req.on('error', reject);
  });
}

/** An HTML message of about `bytes` bytes with `links` distinct links, lines under 1,000 bytes. */
export function hugeHtmlMessage(to: string, bytes = HUGE_HTML_BYTES, links = HUGE_HTML_LINKS): Buffer {
  const head = `From: <big@bench.test>\r\nTo: <${to}>\r\nSubject: huge html\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html><body>\r\n`;
  const parts: string[] = [head];
  let size = head.length;
  for (let i = 0; i < links; i++) {
    const line = `<p><a href="https://example.com/page/${i}">link ${i}</a></p>\r\n`;
    parts.push(line);
    size += line.length;
  }
  const filler = `<p>${'lorem ipsum dolor sit amet '.repeat(30)}</p>\r\n`;
  while (size + filler.length + 20 < bytes) {
    parts.push(filler);
    size += filler.length;
  }
  parts.push('</body></html>\r\n');
  return Buffer.from(parts.join(''), 'latin1');
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function sendBig(port: number, to: string, message: Buffer): Promise<number> {
  const c = await SmtpConnection.open('127.0.0.1', port);
  try {
    await c.expect(c.command('EHLO bench.test'), 250, 'EHLO');
    await c.expect(c.command('MAIL FROM:<big@bench.test>'), 250, 'MAIL FROM');
    await c.expect(c.command(`RCPT TO:<${to}>`), 250, 'RCPT TO');
    await c.expect(c.command('DATA'), 354, 'DATA');
    return (await c.data(message)).code;
  } finally {
    await c.quit();
  }
}

/** Point 4: RSS idle, at the peak of ten concurrent 24 MB messages, and SETTLE_MS later. */
export async function measureBigMail(ours: Ours): Promise<Figure[]> {
  const pid = ours.child.pid ?? 0;
  await new Promise((r) => setTimeout(r, 1_000));
  const idle = rssMb(pid);
  const message = buildMessage(BIG_MESSAGE_BYTES, 'big@bench.test', `big@${DEFAULT_DOMAIN}`, 'big');
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), RSS_SAMPLE_MS);
  log(`bigmail: ${BIG_MESSAGES} × ${BIG_MESSAGE_BYTES / 1024 / 1024} MB over SMTP at once`);
  let firstError: string | undefined;
  const codes = await Promise.all(
    Array.from({ length: BIG_MESSAGES }, () =>
      sendBig(ours.ready.smtp.port, `big@${DEFAULT_DOMAIN}`, message).catch((e: Error) => {
        firstError ??= e.message;
        return 0;
      }),
    ),
  );
  clearInterval(sampler);
  peak = Math.max(peak, rssMb(pid));
  const accepted = codes.filter((c) => c === 250).length;
  log(`bigmail: ${accepted}/${BIG_MESSAGES} accepted; waiting ${SETTLE_MS / 1000} s`);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const after = rssMb(pid);
  const note = `idle ${idle.toFixed(0)} MB; ${accepted}/${BIG_MESSAGES} answered 250${firstError ? `; first failure: ${firstError}` : ''}`;
  return [
    figure({ name: `RSS rise at the peak, ${BIG_MESSAGES} × 24 MB over SMTP`, unit: 'MB', value: peak - idle, target: { op: '<=', value: 100, label: '≤ 100 MB' }, note }),
    figure({ name: `RSS over idle ${SETTLE_MS / 1000} s after them`, unit: 'MB', value: after - idle, target: { op: '<=', value: 20, label: '≤ 20 MB' } }),
  ];
}

/** Point 7: /healthz latency (and an SMTP delivery) while the links of a huge message are read. */
export async function measureStall(ours: Ours): Promise<Figure[]> {
  const to = `huge@${DEFAULT_DOMAIN}`;
  const reply = await sendOne('127.0.0.1', ours.ready.smtp.port, to, hugeHtmlMessage(to));
  if (reply.code !== 250) throw new Error(`the huge message was refused: ${reply.text}`);
  const id = /stored as (\S+)/.exec(reply.text)?.[1];
  if (!id) throw new Error(`no id in ${reply.text}`);
  const base = ours.ready.http;
  log('stall: GET …/links of the 18 MB message while /healthz is asked');
  let done = false;
  const linksCall = get(base, `/api/v2/domains/${DEFAULT_DOMAIN}/messages/${id}/links`, ours.apiToken).finally(() => (done = true));
  const health: number[] = [];
  const smtpMs: number[] = [];
  const healthLoop = (async () => {
    while (!done) {
      health.push((await get(base, '/healthz', '')).ms);
      await new Promise((r) => setTimeout(r, HEALTH_GAP_MS));
    }
  })();
  const smtpLoop = (async () => {
    while (!done) {
      const t0 = performance.now();
      const r = await sendOne('127.0.0.1', ours.ready.smtp.port, `during@${DEFAULT_DOMAIN}`);
      if (r.code === 250) smtpMs.push(performance.now() - t0);
    }
  })();
  const links = await linksCall;
  await Promise.all([healthLoop, smtpLoop]);
  const count = links.status === 200 ? (JSON.parse(links.body) as { links: string[] }).links.length : 0;
  health.sort((a, b) => a - b);
  return [
    figure({ name: '/links of an 18 MB HTML message with 200k links', unit: 'ms', value: links.ms, note: `status ${links.status}, ${count} links` }),
    figure({
      name: '/healthz p99 meanwhile',
      unit: 'ms',
      value: percentile(health, 99),
      target: { op: '<=', value: 50, label: '≤ 50 ms' },
      note: `${health.length} requests, max ${health[health.length - 1]?.toFixed(0)} ms`,
    }),
    figure({ name: 'SMTP delivery meanwhile (slowest)', unit: 'ms', value: smtpMs.length ? Math.max(...smtpMs) : undefined, note: `${smtpMs.length} deliveries` }),
  ];
}

/** Point 5: bytes written for one 100 KB message to 1,000 recipients. */
export async function measureRecipients(ours: Ours): Promise<Figure[]> {
  const pid = ours.child.pid ?? 0;
  const message = buildMessage(FANOUT_BYTES, 'fan@bench.test', `r0@${DEFAULT_DOMAIN}`, 'fanout');
  const c = await SmtpConnection.open('127.0.0.1', ours.ready.smtp.port);
  let accepted = 0;
  let code = 0;
  const before = writtenBytes(pid);
  try {
    await c.expect(c.command('EHLO bench.test'), 250, 'EHLO');
    await c.expect(c.command('MAIL FROM:<fan@bench.test>'), 250, 'MAIL FROM');
    for (let i = 0; i < FANOUT_RECIPIENTS; i++) if ((await c.command(`RCPT TO:<r${i}@${DEFAULT_DOMAIN}>`)).code === 250) accepted++;
    await c.expect(c.command('DATA'), 354, 'DATA');
    code = (await c.data(message)).code;
  } finally {
    await c.quit();
  }
  // Let the checkpoint that follows a commit run (it writes nothing of its own but may rotate the log).
  await new Promise((r) => setTimeout(r, 3_000));
  const written = writtenBytes(pid) - before;
  return [
    figure({
      name: `bytes written, ${FANOUT_BYTES / 1024} KB to ${FANOUT_RECIPIENTS} RCPT`,
      unit: 'MB',
      value: written / 1024 / 1024,
      note: `${accepted} recipients accepted, DATA answered ${code}; wchar of the server process`,
    }),
  ];
}

export const HARDEN_FIGURES = ['bigmail', 'stall', 'recipients'] as const;

export function measureHarden(name: (typeof HARDEN_FIGURES)[number], ours: Ours): Promise<Figure[]> {
  switch (name) {
    case 'bigmail':
      return measureBigMail(ours);
    case 'stall':
      return measureStall(ours);
    case 'recipients':
      return measureRecipients(ours);
  }
}
