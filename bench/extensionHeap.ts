// The extension host's heap with 10,000 messages listed in the Test Inbox tree, in a real
// workbench (code-server in headless Chromium) attached to a local server.
//
//   node --import tsx bench/extensionHeap.ts [--collapsed] [--snapshots DIR]     (run `npm run build` first)
//
// --snapshots writes before.heapsnapshot and after.heapsnapshot of the extension host into DIR
// (bench/heap-summary.ts sums them up by constructor).
//
// How it is measured: the server holds 10,000 messages across INBOXES inboxes. The workbench
// runs a small driver inside the extension host (the extensionTestsPath entry written below):
// it answers the bench over a loopback HTTP port with the host's heap after two full garbage
// collections, and runs commands. The bench opens the view and expands every inbox by clicking
// its row (so the workbench fetches the rows, as when a person looks at them), reads the heap,
// then lists each inbox to its end with the "Load more…" command, checks the tree holds all
// 10,000 messages, lets the tree settle, and reads the heap again. The figure is the growth.
// The heap is the whole extension host's (the built-in extensions are idle meanwhile).
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startWorkbench } from '../scripts/integration/workbench';
import { startDemoServer } from '../scripts/demoServer';
import { expandRow, openTestInboxView, treeRow, UI_TIMEOUT_MS } from '../test/e2e/ui';
import { sendMany } from './lib/smtp-load';
import { DEFAULT_DOMAIN } from '../src/shared/contract';
import { MAX_PAGES, PAGE_SIZE } from '../src/extension/tree/model';
import { writeHostDriver } from './lib/hostDriver';

/** The figure: messages listed across inboxes. */
export const HEAP_MESSAGES = 10_000;
/** Inboxes holding them: each is listed to the tree's cap of MAX_PAGES pages. */
const INBOXES = HEAP_MESSAGES / (MAX_PAGES * PAGE_SIZE);
/** The target (issue 16, point 6): heap growth. */
export const HEAP_TARGET_MB = 30;
/** Small messages: the tree lists summaries; the bodies stay on the server. */
const MESSAGE_BYTES = 1024;
/** After the last page, time for the paced redraw and the workbench's fetch of the rows. */
const SETTLE_MS = 3_000;

export interface HeapResult {
  beforeMb: number;
  afterMb: number;
  growthMb: number;
  listed: number;
  loadMoreCalls: number;
}

interface SnapshotRow {
  id?: string;
  children?: SnapshotRow[];
}

/**
 * `expand: false` leaves the inboxes collapsed: the extension's model holds the 10,000 messages
 * but the workbench asks for no rows, which splits the figure into the model's share and the
 * tree items' (the extension host keeps a TreeItem and its node for every row fetched).
 */
export async function measureExtensionHeap(options: { expand?: boolean; snapshotDir?: string; onProgress?: (message: string) => void } = {}): Promise<HeapResult> {
  const say = options.onProgress ?? (() => {});
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'test-inbox-bench-heap-'));
  const demo = await startDemoServer();
  try {
    const inboxes = Array.from({ length: INBOXES }, (_, i) => `heap${i}`);
    say(`heap: storing ${HEAP_MESSAGES.toLocaleString('en-US')} messages in ${INBOXES} inboxes`);
    await sendMany(demo.smtpHost, demo.smtpPort, 8, HEAP_MESSAGES, (i) => `${inboxes[i % INBOXES]}@${DEFAULT_DOMAIN}`, MESSAGE_BYTES);
    const driverFiles = writeHostDriver(tmp);
    const wb = await startWorkbench({
      settings: demo.extensionSettings,
      viewport: { width: 1400, height: 1000 },
      smokeTestDriver: true,
      extensionTestsPath: driverFiles.entry,
      env: driverFiles.env,
    });
    try {
      const driver = await driverFiles.connect();
      const heapMb = () => driver.heapMb();
      const snapshot = async (name: string) => {
        if (!options.snapshotDir) return;
        await fsp.mkdir(options.snapshotDir, { recursive: true });
        say(`heap: snapshot ${await driver.snapshot(path.resolve(options.snapshotDir, name))}`);
      };
      const page = wb.page;
      await openTestInboxView(page);
      // From the last row up, so expanding one does not move the rows still to click.
      await treeRow(page, new RegExp(`^Inbox ${inboxes[0]}@`)).waitFor({ timeout: UI_TIMEOUT_MS });
      const labels = await page.locator('.sidebar').getByRole('treeitem', { name: /^Inbox heap\d+@/ }).evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label') ?? ''));
      const shownOrder = labels.map((l) => /^Inbox (heap\d+)@/.exec(l)?.[1]).filter((x): x is string => x !== undefined);
      if (shownOrder.length !== INBOXES) throw new Error(`the tree shows ${shownOrder.length} of the ${INBOXES} inboxes`);
      if (options.expand !== false) for (const inbox of shownOrder.reverse()) await expandRow(treeRow(page, new RegExp(`^Inbox ${inbox}@`)));
      await page.waitForTimeout(SETTLE_MS);
      const beforeMb = await heapMb();
      say(`heap: ${beforeMb.toFixed(1)} MB with every inbox expanded (first page each)`);
      await snapshot('before.heapsnapshot');

      let loadMoreCalls = 0;
      const state = await driver.command<{ tree: SnapshotRow[] }>('testInbox._debugState');
      const domain = (state.tree[0]?.id ?? '').replace(/^domain:/, '');
      if (!domain) throw new Error('the tree shows no domain');
      for (const inbox of inboxes) {
        for (let p = 1; p < MAX_PAGES; p++) {
          await driver.command('testInbox._loadMore', { kind: 'loadMore', id: `more:${domain}/${inbox}`, domain, inbox });
          loadMoreCalls++;
        }
        say(`heap: ${inbox} listed to its end (${loadMoreCalls} × Load more)`);
      }
      await page.waitForTimeout(SETTLE_MS);
      // The heap first: the debug state's answer (the whole tree, 10,000 rows) leaves buffers and
      // strings in the host that two GCs do not always free, which added up to ~15 MB.
      const afterMb = await heapMb();
      await snapshot('after.heapsnapshot');
      const after = await driver.command<{ tree: SnapshotRow[] }>('testInbox._debugState');
      const listed = (after.tree[0]?.children ?? []).reduce((n, inbox) => n + (inbox.children ?? []).filter((m) => m.id?.startsWith('msg:') || m.id?.startsWith('message:')).length, 0);
      await driver.done();
      return { beforeMb, afterMb, growthMb: afterMb - beforeMb, listed, loadMoreCalls };
    } finally {
      await wb.stop();
    }
  } finally {
    await demo.stop();
    await fsp.rm(tmp, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const expand = !process.argv.includes('--collapsed');
  const at = process.argv.indexOf('--snapshots');
  const snapshotDir = at > 0 ? process.argv[at + 1] : undefined;
  const r = await measureExtensionHeap({ expand, snapshotDir, onProgress: (m) => process.stdout.write(`  ${m}\n`) });
  process.stdout.write(
    `extension host heap${expand ? '' : ' (inboxes collapsed: the model only)'}: ${r.beforeMb.toFixed(1)} → ${r.afterMb.toFixed(1)} MB, growth ${r.growthMb.toFixed(1)} MB with ${r.listed} messages listed ` +
      `(${r.loadMoreCalls} × Load more) — target ≤ ${HEAP_TARGET_MB} MB: ${r.growthMb <= HEAP_TARGET_MB ? 'PASS' : 'MISS'}\n`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === __filename) {
  main().catch((err: unknown) => {
    process.stderr.write(`extension heap: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
