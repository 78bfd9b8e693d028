// The current settings in the host: read once, read again on every change of the
// `testInbox` section, problems logged, the server-kind context key kept up to date, and
// the change's effects (config/changePolicy.ts) handed to whoever listens.
import * as vscode from 'vscode';
import type { Logger } from '../log';
import { Emitter } from '../util/emitter';
import { settingsChangeEffects, type SettingsChangeEffects } from './changePolicy';
import { ContextKey } from './contextKeys';
import { readSettings, SETTINGS_SECTION, SettingKey, type Settings } from './settings';

export class SettingsWatcher implements vscode.Disposable {
  private value: Settings;
  private readonly changeEmitter = new Emitter<SettingsChangeEffects>();
  /** Fires after the settings were read again, with what the change sets off. */
  readonly onDidChange = this.changeEmitter.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly log: Logger) {
    this.value = this.load();
    this.sub = vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SETTINGS_SECTION)) return;
      const before = this.value;
      this.value = this.load();
      this.changeEmitter.fire(settingsChangeEffects(before, this.value, (key) => e.affectsConfiguration(`${SETTINGS_SECTION}.${key}`)));
    });
  }

  get current(): Settings {
    return this.value;
  }

  private load(): Settings {
    const cfg = vscode.workspace.getConfiguration(SETTINGS_SECTION);
    const { settings, problems } = readSettings(cfg);
    if (settings.server.kind === 'remote') {
      // In effect and set by the workspace (in an untrusted one VS Code ignores it: a restricted setting).
      const i = cfg.inspect<string>(SettingKey.server);
      const ws = i?.workspaceFolderValue ?? i?.workspaceValue;
      if (ws !== undefined && ws === cfg.get<string>(SettingKey.server)) settings.server.fromWorkspace = true;
    }
    for (const p of problems) this.log.warn(`Setting ${p.key}: ${p.message}; using the default.`);
    void vscode.commands.executeCommand('setContext', ContextKey.serverKind, settings.server.kind);
    return settings;
  }

  dispose(): void {
    this.sub.dispose();
    this.changeEmitter.dispose();
  }
}
