// A QuickPick of the domains a webhook or a command can name: those the tree shows, the
// `testInbox.domains` setting, the local server's default and its list; a typed name is offered
// too (checked before it can be accepted).
import * as vscode from 'vscode';
import { domainProblem, PRIVATE_DOMAIN } from '../../core/ids';
import { errorText } from '../log';
import type { Services } from '../services';

type Item = vscode.QuickPickItem & { domain?: string };

/** The named domains known without asking the user (never `private`), the default first. */
async function knownDomains(s: Services, signal?: AbortSignal): Promise<string[]> {
  const settings = s.settings();
  const names = [...s.model.shownDomains, ...settings.domains];
  const own = s.connection.defaultDomain();
  if (own) names.unshift(own);
  if (s.connection.testInbox) {
    try {
      names.push(...((await s.connection.serverDomains(await s.connection.ensure(), signal)?.list()) ?? []));
    } catch (e) {
      // The picker still offers the other names and typing one.
      s.log.warn(`Domain picker: the server's domain list could not be read: ${errorText(e)}`);
    }
  }
  const seen = new Set<string>();
  return names.filter((d) => {
    const key = d.toLowerCase();
    if (key === PRIVATE_DOMAIN || seen.has(key) || domainProblem(d)) return false;
    seen.add(key);
    return true;
  });
}

/** Asks for a named domain; undefined when dismissed. */
export async function pickDomain(s: Services, title: string, placeholder = 'Pick a domain or type one'): Promise<string | undefined> {
  const known = await knownDomains(s);
  const items: Item[] = known.map((d) => ({ label: d, iconPath: new vscode.ThemeIcon('globe'), domain: d }));
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = title;
  qp.placeholder = placeholder;
  qp.items = items;
  return new Promise<string | undefined>((resolve) => {
    let done = false;
    const finish = (v: string | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
      qp.dispose();
    };
    qp.onDidChangeValue((value) => {
      const typed = value.trim().toLowerCase();
      const extra: Item[] = [];
      if (typed && !known.includes(typed)) {
        const problem = typed === PRIVATE_DOMAIN ? 'a named domain is needed here, not "private"' : domainProblem(typed);
        // QuickPick has no validation message in 1.97: the problem is an item that cannot be accepted.
        extra.push(problem ? { label: `$(error) "${typed}" is not a usable domain: ${problem}`, alwaysShow: true } : { label: typed, description: '(typed)', alwaysShow: true, domain: typed });
      }
      qp.items = [...extra, ...items];
    });
    qp.onDidAccept(() => {
      const sel = qp.selectedItems[0];
      if (sel?.domain) finish(sel.domain);
    });
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}
