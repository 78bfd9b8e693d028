// Simulate Failures…: a picker of fault-rule presets (docs/chaos.md, "In the editor"), the
// active rules, and Clear all. A preset asks only what it needs, then adds its rule through the
// API client; the server alone checks the rule, and its 400 is shown with a "Try Again".
// From a test or another command: `{ preset, ...answers }` skips the picker and the questions
// it answers; `{ action: 'clear' }` clears.
import * as vscode from 'vscode';
import { ApiError } from '../../api/errors';
import type { ChaosRuleInfo } from '../../core/wire';
import { inert, inertText } from '../../core/inert';
import { describeRule, findPreset, PRESETS, type Preset } from '../chaos/presets';
import { COMMANDS } from '../commandIds';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import { showError, showInfo } from '../ui/shown';

export const id = COMMANDS.simulateFailures.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

const TITLE = 'Simulate Failures';
const TRY_AGAIN = 'Try Again';

type Choice = { kind: 'preset'; preset: Preset } | { kind: 'show' } | { kind: 'clear' };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** The added rule, the number cleared, or undefined when the user left. */
export async function run(s: Services, arg?: unknown): Promise<{ id: string; rule: ChaosRuleInfo } | { removed: number } | undefined> {
  const api = await s.connection.ensure();
  if (!s.connection.testInbox) {
    throw new ExtensionError('not_supported', 'Simulate Failures needs a Test Inbox server (the local one, or a team server): the hosted service has no fault rules.');
  }
  const given = isObject(arg) ? arg : {};
  const choice = await choose(s, given);
  if (!choice) return undefined;
  if (choice.kind === 'clear') {
    const { removed } = await api.clearChaos();
    await s.faults.refresh();
    s.log.info(`Cleared ${removed} fault rule${removed === 1 ? '' : 's'} of ${api.baseUrl}.`);
    void showInfo(inert`Cleared ${String(removed)} failure rule${removed === 1 ? '' : 's'}: the server answers normally again.`);
    return { removed };
  }
  if (choice.kind === 'show') return showRules(s);
  const answers = await ask(choice.preset, given);
  if (!answers) return undefined;
  const rule = choice.preset.rule(answers);
  try {
    const added = await api.addChaosRule(rule);
    await s.faults.refresh();
    s.log.info(`Added fault rule ${added.id} (${choice.preset.label}) on ${api.baseUrl}: ${JSON.stringify(rule)}`);
    void showInfo(inert`${choice.preset.label}: rule ${added.id} is active until ${new Date(added.rule.expires).toLocaleTimeString()}.`);
    return added;
  } catch (e) {
    if (!ApiError.is(e, 'bad_request')) throw e;
    // The server's own words name the field; the user fixes the answer and tries again.
    s.log.warn(`The server refused the fault rule ${JSON.stringify(rule)}: ${e.message}`);
    void showError(inert`${choice.preset.label}: the server refused the rule. ${e.serverMessage ?? e.message}`, TRY_AGAIN).then((c) =>
      c === TRY_AGAIN ? vscode.commands.executeCommand(id, { preset: choice.preset.id }) : undefined,
    );
    return undefined;
  }
}

async function choose(s: Services, given: Record<string, unknown>): Promise<Choice | undefined> {
  if (given.action === 'clear') return { kind: 'clear' };
  if (given.action === 'show') return { kind: 'show' };
  if (typeof given.preset === 'string') {
    const preset = findPreset(given.preset);
    if (!preset) throw new ExtensionError('invalid_input', inertText(`No preset "${given.preset}": ${PRESETS.map((p) => p.id).join(', ')}.`));
    return { kind: 'preset', preset };
  }
  const active = s.faults.rules.length;
  const items: Array<vscode.QuickPickItem & { choice?: Choice }> = [
    ...PRESETS.map((p) => ({ label: `$(${p.icon}) ${p.label}`, description: p.description, choice: { kind: 'preset', preset: p } as Choice })),
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    { label: '$(list-unordered) Show active rules', description: active > 0 ? `${active} active` : 'none', choice: { kind: 'show' } },
    { label: '$(clear-all) Clear all failures', description: 'the server answers normally again', choice: { kind: 'clear' } },
  ];
  const picked = await vscode.window.showQuickPick(items, { title: TITLE, placeHolder: 'Which failure should the server simulate?', matchOnDescription: true });
  return picked?.choice;
}

/** Each question the argument does not answer, one InputBox or QuickPick at a time; undefined when the user leaves. */
async function ask(preset: Preset, given: Record<string, unknown>): Promise<Record<string, string> | undefined> {
  const answers: Record<string, string> = {};
  const steps = preset.questions.length;
  for (const [i, q] of preset.questions.entries()) {
    const g = given[q.key];
    if (typeof g === 'string' || typeof g === 'number') {
      const text = String(g);
      const problem = q.validate(text);
      if (problem !== undefined) throw new ExtensionError('invalid_input', inertText(`${q.prompt}: ${problem}.`));
      answers[q.key] = text;
      continue;
    }
    const title = `${TITLE}: ${preset.label} (${i + 1}/${steps})`;
    if (q.choices) {
      const picked = await vscode.window.showQuickPick(
        q.choices.map((c) => ({ label: c.label, description: c.description, value: c.value })),
        { title, placeHolder: q.prompt },
      );
      if (!picked) return undefined;
      answers[q.key] = picked.value;
      continue;
    }
    const text = await vscode.window.showInputBox({ title, prompt: q.prompt, placeHolder: q.placeHolder, value: q.value, validateInput: (t) => q.validate(t), ignoreFocusOut: true });
    if (text === undefined) return undefined;
    answers[q.key] = text;
  }
  return answers;
}

/** The active rules; picking one offers to remove it. */
async function showRules(s: Services): Promise<{ removed: number } | undefined> {
  const api = await s.connection.ensure();
  const { rules } = await api.chaosRules();
  if (rules.length === 0) {
    void showInfo(inert`No failure rules are active: the server answers normally.`);
    return { removed: 0 };
  }
  const items = rules.map((r) => {
    const d = describeRule(r);
    return { label: inertText(d.label), description: r.id, detail: inertText(`${d.detail} · ends ${new Date(r.expires).toLocaleTimeString()}`), rule: r };
  });
  const picked = await vscode.window.showQuickPick(items, { title: `${TITLE}: ${rules.length} active`, placeHolder: 'Pick a rule to remove it' });
  if (!picked) return undefined;
  const { removed } = await api.removeChaosRule(picked.rule.id);
  await s.faults.refresh();
  void showInfo(inert`Removed failure rule ${picked.rule.id}.`);
  return { removed };
}
