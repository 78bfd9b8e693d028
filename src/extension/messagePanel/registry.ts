// The open message panels (messagePanel.ts builds them): one per message, by panel key
// (server, domain, id), and the one the next opened message replaces, the panel the user has
// not kept. Holds the lookups the palette's commands, Keep Open and the debug state make.
import type * as vscode from 'vscode';
import type { HostMessage } from '../../shared/viewProtocol';
import type { MessageRef } from '../inboxRef';

/** What the registry needs of a panel (messagePanel.ts's MessagePanel). */
export interface RegisteredPanel {
  readonly panel: vscode.WebviewPanel;
  readonly ref: MessageRef;
  readonly kept: boolean;
  keep(): void;
  phase(): HostMessage['type'] | undefined;
  onMessage(data: unknown): Promise<void>;
}

export class PanelRegistry<P extends RegisteredPanel> {
  private readonly byKey = new Map<string, P>();
  /** The one panel the next opened message replaces: not kept by the user. */
  preview: P | undefined;

  get(key: string): P | undefined {
    return this.byKey.get(key);
  }

  set(key: string, panel: P): void {
    this.byKey.set(key, panel);
  }

  delete(key: string): void {
    this.byKey.delete(key);
  }

  values(): IterableIterator<P> {
    return this.byKey.values();
  }

  get size(): number {
    return this.byKey.size;
  }

  /**
   * The open message commands run from the palette act on: the message panel that is active
   * (the focused editor), else the one message panel on screen; undefined when none (or several
   * and none active).
   */
  activeRef(): MessageRef | undefined {
    const all = [...this.byKey.values()];
    const active = all.find((p) => p.panel.active);
    if (active) return active.ref;
    const visible = all.filter((p) => p.panel.visible);
    return visible.length === 1 ? visible[0].ref : undefined;
  }

  /** Each open panel's message and whether it is kept, in opening order. */
  info(): Array<{ id: string; kept: boolean }> {
    return [...this.byKey.values()].map((p) => ({ id: p.ref.id, kept: p.kept }));
  }

  /** Keeps the active message panel: the next message opens in a new panel. False when no message panel is active. */
  keepActive(): boolean {
    const active = [...this.byKey.values()].find((p) => p.panel.active);
    if (!active) return false;
    active.keep();
    return true;
  }

  /** The open panel of a message, if any. */
  ofMessage(messageId: string): P | undefined {
    return [...this.byKey.values()].find((x) => x.ref.id === messageId);
  }

  /** Closes every panel. */
  disposeAll(): void {
    for (const p of [...this.byKey.values()]) p.panel.dispose();
  }
}
