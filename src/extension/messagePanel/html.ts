// The message panel's webview document: the view's script and styles under a Content Security
// Policy that allows scripts by nonce only and remote images only once the message may load them.
import * as vscode from 'vscode';

/** The document of a message panel's view; `remote`: this message may load remote images. */
export function viewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, remote: boolean): string {
  const nonce = crypto.randomUUID().replace(/-/g, '');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview.js'));
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'messageView.css'));
  const codicons = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'codicons', 'codicon.css'));
  // The sandboxed srcdoc frame inherits this policy on top of its own: inline styles are
  // needed by email HTML (scripts stay nonce-only), and remote images only once allowed.
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:${remote ? ' https: http:' : ''}`,
    `style-src ${webview.cspSource} 'unsafe-inline'`,
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
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
