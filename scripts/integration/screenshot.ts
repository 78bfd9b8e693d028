// Screenshot of the workbench with the extension loaded (no test run), built on
// startWorkbench; also a working example for browser-level checks.
//
//   npx tsx scripts/integration/screenshot.ts shot.png                      the workbench as it opens
//   npx tsx scripts/integration/screenshot.ts --view "Test Inbox" shot.png  after clicking that activity bar entry
//
// Run `npm run build` first: the extension is loaded from dist/.
import * as path from 'node:path';
import { IntegrationError } from './errors';
import { startWorkbench } from './workbench';

/** How long the clicked view container gets to render before the screenshot. */
const VIEW_TIMEOUT_MS = 30_000;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let view: string | undefined;
  const viewAt = args.indexOf('--view');
  if (viewAt >= 0) {
    view = args[viewAt + 1];
    args.splice(viewAt, 2);
  }
  const file = args[0];
  if (!file || (viewAt >= 0 && !view)) {
    throw new IntegrationError('NO_TESTS', 'Usage: screenshot.ts [--view <activity bar title>] <file.png>');
  }
  const wb = await startWorkbench({ onProgress: (m) => process.stdout.write(`[screenshot] ${m}\n`) });
  try {
    await wb.page.locator('.activitybar').waitFor({ timeout: VIEW_TIMEOUT_MS });
    if (view) {
      await wb.page.locator(`.activitybar [aria-label^="${view.replace(/"/g, '\\"')}"]`).first().click({ timeout: VIEW_TIMEOUT_MS });
      const escaped = view.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      await wb.page.locator('.sidebar .title-label').filter({ hasText: new RegExp(escaped, 'i') }).waitFor({ timeout: VIEW_TIMEOUT_MS });
      await wb.page.locator('.sidebar .pane-body').first().waitFor({ timeout: VIEW_TIMEOUT_MS });
    }
    await wb.page.screenshot({ path: path.resolve(file) });
    process.stdout.write(`[screenshot] wrote ${path.resolve(file)}\n`);
  } finally {
    await wb.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`[screenshot] FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
