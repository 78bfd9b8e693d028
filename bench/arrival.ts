// Arrival latency: from the SMTP server's 250 reply to DATA until the message's row is in the
// Test Inbox tree's DOM, in a real workbench (code-server in headless Chromium, see
// scripts/integration/workbench.ts) attached to a local server (scripts/demoServer.ts).
//
//   node --import tsx bench/arrival.ts [--samples N]     prints p50/p95 (builds nothing: run `npm run build` first)
//
// How it is measured: messages are sent one at a time over a raw SMTP socket into an inbox
// whose row is expanded in the tree. Before each send, a MutationObserver in the workbench page
// waits for a tree row whose accessible label holds the message's unique subject and records
// Date.now() in the page at the mutation that added it; Node records Date.now() right when the
// 250 arrives. Both read the same system clock (1 ms resolution), so no polling or CDP round
// trip is inside the figure. Each message waits for the previous one to show, so the push
// stream's path (server event → extension host → tree refresh → render) is what is timed.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { startWorkbench } from '../scripts/integration/workbench';
import { startDemoServer } from '../scripts/demoServer';
import { expandRow, openTestInboxView, treeRow } from '../test/e2e/ui';
import { buildMessage, sendOne } from './lib/smtp-load';
import { percentile } from './lib/stats';
import { DEFAULT_DOMAIN } from '../src/server/contract';

/** Enough for a stable median and a meaningful p95 in well under a minute. */
export const DEFAULT_ARRIVAL_SAMPLES = 15;
/** The issue's target for the push stream. */
export const ARRIVAL_TARGET_MS = 300;
/** Small message, like a sign-up email: the figure is about the path, not the size. */
const MESSAGE_BYTES = 2048;
/** A message that takes longer than this to show counts as lost and fails the run. */
const ARRIVAL_TIMEOUT_MS = 30_000;
/** Messages sent (and shown) before measuring: the inbox row exists, caches and JIT are warm. */
const WARMUP_MESSAGES = 2;
const INBOX = 'arrival';
const DOMAIN = DEFAULT_DOMAIN;

export interface ArrivalResult {
  p50: number;
  p95?: number;
  samples: number;
  min?: number;
  max?: number;
}

/**
 * Watches the page for a tree row whose aria-label contains `token`; records the page's
 * Date.now() when it appears. Passed as source text: tsx would wrap the helpers of a function
 * literal in its `__name` calls, which do not exist in the page.
 */
async function watchFor(page: Page, token: string): Promise<void> {
  await page.evaluate(`(() => {
    const t = ${JSON.stringify(token)};
    const seen = (window.__arrivalSeen ??= {});
    const selector = '.sidebar [role="treeitem"][aria-label*=' + JSON.stringify(t) + ']';
    if (document.querySelector(selector)) { seen[t] = Date.now(); return; }
    const observer = new MutationObserver(() => {
      if (!document.querySelector(selector)) return;
      seen[t] = Date.now();
      observer.disconnect();
    });
    observer.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['aria-label'] });
  })()`);
}

/** The page's timestamp for `token` (the wait's polling only fetches it; it is not in the figure). */
async function seenAt(page: Page, token: string): Promise<number> {
  const handle = await page.waitForFunction(`window.__arrivalSeen && window.__arrivalSeen[${JSON.stringify(token)}]`, undefined, { timeout: ARRIVAL_TIMEOUT_MS });
  return (await handle.jsonValue()) as number;
}

/** Sends one message; resolves with Date.now() at the 250 reply to its data. */
async function sendAt(host: string, port: number, subject: string): Promise<number> {
  const to = `${INBOX}@${DOMAIN}`;
  const reply = await sendOne(host, port, to, buildMessage(MESSAGE_BYTES, 'sender@bench.test', to, subject));
  if (reply.code !== 250) throw new Error(`the server answered ${reply.code} to the message data`);
  return reply.at;
}

/** Measures arrival latency `samples` times; resolves with the percentiles in ms. */
export async function measureArrival(options: { samples?: number; onProgress?: (message: string) => void } = {}): Promise<ArrivalResult> {
  const samples = options.samples ?? DEFAULT_ARRIVAL_SAMPLES;
  const say = options.onProgress ?? (() => {});
  const demo = await startDemoServer();
  try {
    const wb = await startWorkbench({ settings: demo.extensionSettings, viewport: { width: 1400, height: 1000 } });
    try {
      const page = wb.page;
      await openTestInboxView(page);
      const runId = randomBytes(4).toString('hex');
      const latencies: number[] = [];
      for (let i = -WARMUP_MESSAGES; i < samples; i++) {
        const subject = `arrival ${runId} ${i < 0 ? `warmup${-i}` : `n${i}`} ok`;
        await watchFor(page, subject);
        const sent = await sendAt(demo.smtpHost, demo.smtpPort, subject);
        if (i === -WARMUP_MESSAGES) {
          // The first message creates the inbox; open it so its messages are rows in the DOM.
          await expandRow(treeRow(page, new RegExp(`^Inbox ${INBOX}@`)));
        }
        const shown = await seenAt(page, subject);
        if (i >= 0) {
          latencies.push(Math.max(0, shown - sent));
          say(`arrival ${i + 1}/${samples}: ${shown - sent} ms`);
        }
      }
      latencies.sort((a, b) => a - b);
      return {
        p50: percentile(latencies, 50),
        p95: latencies.length >= 10 ? percentile(latencies, 95) : undefined,
        samples: latencies.length,
        min: latencies[0],
        max: latencies[latencies.length - 1],
      };
    } finally {
      await wb.stop();
    }
  } finally {
    await demo.stop();
  }
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--samples');
  const samples = at >= 0 ? Number(process.argv[at + 1]) : DEFAULT_ARRIVAL_SAMPLES;
  if (!Number.isInteger(samples) || samples < 1) throw new Error('--samples needs a positive whole number');
  const r = await measureArrival({ samples, onProgress: (m) => process.stdout.write(`  ${m}\n`) });
  const p95 = r.p95 !== undefined ? `, p95 ${r.p95} ms` : '';
  process.stdout.write(
    `arrival latency p50 ${r.p50} ms${p95} (min ${r.min} ms, max ${r.max} ms, ${r.samples} samples; target ≤ ${ARRIVAL_TARGET_MS} ms) — ` +
      `SMTP 250 → tree row in the DOM, push stream\n`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === __filename) {
  main().catch((err: unknown) => {
    process.stderr.write(`arrival: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
