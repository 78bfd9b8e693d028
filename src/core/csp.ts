// The Content Security Policies of the message view, for both of its hosts: the editor's
// message panel (a webview) and the server's web UI (a page). Email HTML is shown in a
// sandboxed srcdoc frame under two policies at once: the host document's (viewCsp) and the
// frame's own (frameCsp), which the frame inherits on top.

/** What differs between the two hosts: where their own scripts, styles and fonts come from, and what the document may fetch. */
export interface ViewCspOptions {
  /** The host's own origin as a source expression: the webview's `cspSource`, or `'self'` for the page. */
  source: string;
  /** The nonce of the host's script. */
  nonce: string;
  /**
   * Whether the document may show remote images. The panel makes a document per message, so it
   * says what that message may load. The page is one document for many messages, so it allows
   * them, and each message's frame (frameCsp) and the sanitizer decide.
   */
  remoteImages: boolean;
  /** The page talks to its server (its API calls and push stream); the panel talks only to its host. */
  connect?: boolean;
  /** Sent as a header (the page): no framing of it. A policy in a meta element cannot say this. */
  header?: boolean;
}

/** The policy of the document that hosts the message view: scripts by nonce only, no frames of its own, no forms. */
export function viewCsp(o: ViewCspOptions): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${o.nonce}'`,
    // Email HTML needs inline styles (the frame inherits them); scripts stay nonce-only.
    `style-src ${o.source} 'unsafe-inline'`,
    `img-src ${o.source} data:${o.remoteImages ? ' https: http:' : ''}`,
    `font-src ${o.source}`,
    ...(o.connect ? [`connect-src ${o.source}`] : []),
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
    ...(o.header ? ["frame-ancestors 'none'"] : []),
  ].join('; ');
}

/** The policy of the frame that shows a message's HTML: inline styles, data: and cid: images, remote images only when allowed. */
export function frameCsp(allowRemoteImages: boolean): string {
  return `default-src 'none'; style-src 'unsafe-inline'; img-src data: cid:${allowRemoteImages ? ' https: http:' : ''}; form-action 'none'; base-uri 'none'`;
}
