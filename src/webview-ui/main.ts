// The message view in the editor: the browser-side script of the message panel (bundled to
// dist/webview.js). Every message from the host is validated before use (src/shared/viewProtocol.ts); the view
// itself is ./view.ts, shared with the server's web UI.
import { isFromHost, parseHostMessage } from '../shared/viewProtocol';
import { handleHostMessage, initView } from './view';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
initView({ post: (m) => vscode.postMessage(m), getState: () => vscode.getState(), setState: (s) => vscode.setState(s) });

window.addEventListener('message', (event: MessageEvent) => {
  const received = Date.now();
  // The email's frame (sandboxed, no scripts) must never be able to speak for the host.
  const emailFrames = Array.from(document.querySelectorAll('iframe'), (f) => f.contentWindow);
  if (!isFromHost(event, window, emailFrames)) {
    console.warn('Test Inbox message view ignored a message that did not come from the editor.');
    return;
  }
  const parsed = parseHostMessage(event.data);
  if (!parsed.ok) {
    console.warn(`Test Inbox message view ignored a message: ${parsed.error}`);
    return;
  }
  handleHostMessage(parsed.value, received);
});

vscode.postMessage({ type: 'ready' });
