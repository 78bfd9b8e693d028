// The message panel's webview document: the view's script and styles under a Content Security
// Policy that allows scripts by nonce only and remote images only once the message may load them.
import * as vscode from 'vscode';
import { viewCsp } from '../../core/csp';

/** The document of a message panel's view; `remote`: this message may load remote images. */
export function viewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, remote: boolean): string {
  const nonce = crypto.randomUUID().replace(/-/g, '');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview.js'));
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'messageView.css'));
  const codicons = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'codicons', 'codicon.css'));
  const csp = viewCsp({ source: webview.cspSource, nonce, remoteImages: remote });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${codicons.toString()}">
<link rel="stylesheet" href="${css.toString()}">
<title>Message</title>
</head>
<body>
<main id="root" aria-busy="true"></main>
<div id="status" class="status" role="status" aria-live="polite"></div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
