import * as vscode from 'vscode';
import { webhookUrlPreviews, webhookUrls } from '../../api/webhooks';
import type { WebhookForm } from '../../api/types';
import { PRIVATE_DOMAIN } from '../../core/ids';
import { inert, inertMessage, inertText, MAX_MESSAGE_LENGTH } from '../../core/inert';
import { TOKENS_FILE } from '../../shared/contract';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import { resolveInbox } from '../ui/pick';
import { pickDomain } from '../ui/pickDomain';
import { showInfo, showWarning } from '../ui/shown';
import * as setWebhookToken from './setWebhookToken';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.copyWebhookUrl.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

interface Args {
  domain?: string;
  inbox?: string;
  form?: WebhookForm;
}

/** The four forms of docs/api.md §4.5, in the order the picker offers them, and what each must name. */
export const WEBHOOK_FORMS: ReadonlyArray<{ form: WebhookForm; label: string; note?: string; needs: 'inbox' | 'domain' | 'nothing' }> = [
  { form: 'tokenInPath', label: 'Token in path, inbox in path', note: 'writes to the default domain', needs: 'inbox' },
  { form: 'namedDomain', label: 'Named domain, token in query', note: 'the inbox comes from the payload\'s "to"', needs: 'domain' },
  { form: 'privateQuery', label: 'Private domain, token in query', note: 'the inbox comes from the payload\'s "to"', needs: 'nothing' },
  { form: 'privateInboxQuery', label: 'Private domain, inbox in path, token in query', needs: 'inbox' },
];

/**
 * Says why there is no webhook token, and what helps. A remote server's token is the user's to
 * set (Set Webhook Token). The local server's tokens come only from its data folder: there is
 * none only when that server was started with a webhook token of its own (`--webhook-token`),
 * which Set Webhook Token cannot change.
 */
function noWebhookToken(s: Services): void {
  if (s.connection.isLocal) {
    const st = s.connection.state;
    const where = st.kind === 'ready' ? ` at ${st.server.baseUrl}${st.server.pid !== undefined ? ` (pid ${st.server.pid})` : ''}` : '';
    const folder = st.kind === 'ready' && st.server.dataDir ? ` ${st.server.dataDir}` : '';
    void showWarning(
      inertMessage`The local server${where} was started with a webhook token that is not in ${TOKENS_FILE} of its data folder${folder}, so Test Inbox cannot name it. Start that server without --webhook-token (it then uses the folder's tokens), or stop it and let Test Inbox start its own.`,
    );
    return;
  }
  const set = 'Set Webhook Token';
  void showWarning(inert`No webhook token is set for ${s.connection.describe()}. Set the webhook token from the team settings first.`, set).then((c) => {
    if (c === set) void vscode.commands.executeCommand(setWebhookToken.id);
  });
}

function isForm(v: unknown): v is WebhookForm {
  return WEBHOOK_FORMS.some((f) => f.form === v);
}

/**
 * Copies one of the four webhook URL forms. From an inbox or domain node it offers the forms
 * for that inbox or domain; from the palette it offers all four and then asks for the inbox or
 * the domain the chosen form names.
 */
export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  const a = (typeof arg === 'object' && arg !== null ? arg : {}) as Args;
  if (a.form !== undefined && !isForm(a.form)) throw new ExtensionError('invalid_input', `"${String(a.form)}" is not a webhook URL form (${WEBHOOK_FORMS.map((f) => f.form).join(', ')}).`);
  // Connect first: a server that cannot be reached is said as such (with Retry), not as a missing token.
  await s.connection.ensure();
  const token = await s.connection.webhookToken();
  if (!token) {
    noWebhookToken(s);
    return undefined;
  }
  const st = s.connection.state;
  const base = st.kind === 'ready' ? st.server.baseUrl : s.connection.tokenKey();
  let inbox = typeof a.inbox === 'string' && a.inbox !== '' ? a.inbox : undefined;
  let domain = typeof a.domain === 'string' && a.domain !== '' ? a.domain : undefined;

  let form = a.form;
  if (!form) {
    // Every form as a full URL, with <inbox>, <domain> and <webhook token> where they are not known yet.
    const preview = webhookUrlPreviews(base, { domain, inbox });
    const picked = await vscode.window.showQuickPick(
      WEBHOOK_FORMS.map((f) => {
        const url = preview.find((u) => u.form === f.form)!.url;
        const asks = f.needs === 'inbox' && inbox === undefined ? ' (asks for the inbox)' : f.needs === 'domain' && (domain === undefined || domain.toLowerCase() === PRIVATE_DOMAIN) ? ' (asks for the domain)' : '';
        return { label: inertText(f.label + asks), description: inertText(f.note ?? ''), detail: inertText(url, MAX_MESSAGE_LENGTH), form: f.form };
      }),
      { title: 'Copy Webhook URL', placeHolder: inbox ? `Webhook URL forms for inbox ${inbox}` : 'Pick a webhook URL form' },
    );
    if (!picked) return undefined;
    form = picked.form;
  }
  const needs = WEBHOOK_FORMS.find((f) => f.form === form)!.needs;
  if (needs === 'inbox' && inbox === undefined) {
    const ref = await resolveInbox(s, undefined, `Copy Webhook URL: the inbox the webhook writes to`);
    if (!ref) return undefined;
    inbox = ref.inbox;
  }
  if (needs === 'domain' && (domain === undefined || domain.toLowerCase() === PRIVATE_DOMAIN)) {
    domain = await pickDomain(s, 'Copy Webhook URL: the domain the webhook writes to');
    if (!domain) return undefined;
  }
  const chosen = webhookUrls(base, { token, domain, inbox }).find((u) => u.form === form);
  if (!chosen) throw new ExtensionError('invalid_input', `The webhook form "${form}" needs ${needs === 'domain' ? 'a named domain' : 'an inbox'}.`);
  await vscode.env.clipboard.writeText(chosen.url);
  void showInfo(inert`Copied the webhook URL (${chosen.label}). It contains the webhook token.`);
  return chosen.url;
}
