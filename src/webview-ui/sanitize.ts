// Email HTML → a document for the message view's sandboxed `srcdoc` frame. Runs in the view
// (a browser), so DOMPurify parses the mail with the browser's own HTML parser, the engine
// that then renders it, and CSS is read through the browser's CSSOM: what is checked is what
// the browser will act on. Three layers: this sanitizer, the frame's empty `sandbox` with its
// own CSP (core/csp.ts frameCsp), and the view's CSP around it (viewCsp).
//
// Policy: an allowlist of formatting elements and attributes; links lose their href (the
// Links tab opens them, through the host, after a confirmation) and show the URL as a
// tooltip; images only as data: rasters, `cid:` parts the host sent, or, once the user allows
// remote images, http(s). The same rule applies to every `url()` and image function in style
// attributes and `<style>` elements; a declaration that refers to anything else is dropped.
import DOMPurify from 'dompurify';
import { isDataImageUrl, isRemoteUrl, safeLinkTarget, urlForSchemeCheck } from '../core/urls';
import { frameCsp } from '../core/csp';

export interface SanitizeOptions {
  /** Keep http(s) images and CSS `url()`s (the user allowed remote images). */
  allowRemoteImages: boolean;
  /** `cid:` content id (bare, lowercase) → `data:image/…` URL of the inline part. */
  inlineImages?: ReadonlyMap<string, string>;
}

export interface SanitizeResult {
  /** Body markup, as DOMPurify serialized it. */
  html: string;
  /** Remote images and CSS urls held back because remote images are not allowed. */
  blockedRemote: number;
  /** Elements and attributes removed as unsafe or not allowed. */
  removed: number;
}

/** Elements kept (with the allowed attributes). Others lose their tags; script-like ones lose their content too. */
const ALLOWED_TAGS = [
  'a', 'abbr', 'acronym', 'address', 'article', 'aside', 'b', 'bdi', 'bdo', 'big', 'blockquote', 'br',
  'caption', 'center', 'cite', 'code', 'col', 'colgroup', 'dd', 'del', 'details', 'dfn', 'div', 'dl', 'dt',
  'em', 'figcaption', 'figure', 'font', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'i',
  'img', 'ins', 'kbd', 'li', 'main', 'mark', 'nav', 'ol', 'p', 'pre', 'q', 'rp', 'rt', 'ruby', 's', 'samp',
  'section', 'small', 'span', 'strike', 'strong', 'style', 'sub', 'summary', 'sup', 'table', 'tbody', 'td',
  'tfoot', 'th', 'thead', 'time', 'tr', 'tt', 'u', 'ul', 'var', 'wbr',
];

/** Presentational attributes kept as text, plus the ones the hooks below rewrite (style, href, src, background). */
const ALLOWED_ATTR = [
  'abbr', 'align', 'alt', 'bgcolor', 'border', 'cellpadding', 'cellspacing', 'class', 'clear', 'color', 'cols',
  'colspan', 'datetime', 'dir', 'face', 'frame', 'headers', 'height', 'hspace', 'id', 'lang', 'nowrap', 'open',
  'reversed', 'role', 'rows', 'rowspan', 'rules', 'scope', 'size', 'span', 'start', 'summary', 'title',
  'translate', 'type', 'valign', 'vspace', 'width', 'style', 'href', 'src', 'background',
];

/** Removed with everything inside them (on top of DOMPurify's own list: script, style outside the allowlist, svg, math…). */
const FORBID_CONTENTS_EXTRA = ['select', 'textarea', 'canvas', 'map', 'object', 'embed', 'applet', 'frameset', 'frame', 'portal', 'fencedframe', 'dialog', 'button'];

/** Elements whose `background` attribute is an image. */
const BACKGROUND_TAGS = new Set(['table', 'td', 'th', 'tr']);

/** Attributes that fetch or point somewhere; outside the cases the policy allows they are dropped. */
const URL_ATTRIBUTES = new Set(['src', 'srcset', 'background', 'poster', 'lowsrc', 'dynsrc', 'data', 'action', 'formaction', 'xlink:href', 'href', 'ping', 'cite', 'longdesc', 'imagesrcset', 'manifest', 'codebase', 'archive']);

/**
 * CSS functions that take a string as an image URL. Matched on the CSSOM serialization, where
 * names appear unescaped and lowercase, after something that cannot continue an identifier.
 */
const IMAGE_FUNCTION = /(?:^|[^a-z0-9_-])(?:-webkit-)?(?:image-set|image|cross-fade|element|src)\(/i;
/**
 * A `url()` as the CSSOM serializes it: always `url("…")`, with `"` and `\` escaped inside.
 * A raw `url("` cannot occur inside a serialized string (its quote would be escaped), so a
 * match is a real URL token, never text inside `content: "…"`.
 */
const SERIALIZED_URL = /url\("((?:[^"\\]|\\[\s\S])*)"\)/g;
/** Functions whose arguments are substituted later, unparsed: their URLs cannot be checked here. */
const DEFERRED = /(?:^|[^a-z0-9_-])(?:var|env|attr)\(/i;

/** The string a CSSOM-serialized CSS string body stands for. */
function cssStringValue(serialized: string): string {
  return serialized.replace(/\\([0-9a-fA-F]{1,6}) ?|\\([\s\S])/g, (_m, hex: string | undefined, ch: string | undefined) => {
    if (hex === undefined) return ch ?? '';
    const cp = parseInt(hex, 16);
    return cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? '\ufffd' : String.fromCodePoint(cp);
  });
}

/** `s` as a CSS string in double quotes, with everything that could end it escaped. */
function cssString(s: string): string {
  return `"${s.replace(/["\\\n\r\f<>]/g, (c) => `\\${c.charCodeAt(0).toString(16)} `)}"`;
}

function escapeAttribute(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

type Decision = { keep: string } | { drop: 'remote' | 'unsafe' };

/** Sanitizes one email. Never throws on any input string; each call uses its own DOMPurify instance and counters. Exported for the tests, which bundle this module for Chromium and call it as `TestInboxSanitize.sanitizeEmailHtml`. */
export function sanitizeEmailHtml(input: string, opts: SanitizeOptions): SanitizeResult {
  const allowRemote = opts.allowRemoteImages;
  let blockedRemote = 0;
  let removed = 0;
  const drop = (why: 'remote' | 'unsafe'): void => {
    if (why === 'remote') blockedRemote++;
    else removed++;
  };

  /** Where an image may come from: data: rasters, cid: parts (resolved when the host sent them), http(s) once allowed. */
  const decideImage = (raw: string): Decision => {
    const url = raw.trim();
    const bare = urlForSchemeCheck(url);
    if (bare.startsWith('cid:')) {
      const id = url.slice(url.indexOf(':') + 1).trim().replace(/^<|>$/g, '');
      const inline = opts.inlineImages?.get(id.toLowerCase());
      if (inline !== undefined && isDataImageUrl(inline)) return { keep: inline };
      // An unresolved cid: loads nothing (no such scheme in the frame); kept so the layout stays.
      return /^[^\s"'()\\<>]+$/.test(id) ? { keep: `cid:${id}` } : { drop: 'unsafe' };
    }
    if (isDataImageUrl(url)) return { keep: url };
    if (isRemoteUrl(url)) {
      if (!allowRemote) return { drop: 'remote' };
      if (bare.startsWith('http:') || bare.startsWith('https:')) return { keep: url };
      return { keep: `https://${url.replace(/^[\s/\\]+/, '')}` };
    }
    // Relative URLs would resolve against the view; other schemes are never images.
    return { drop: 'unsafe' };
  };

  /** The value a declaration may keep, or undefined to drop it (counted). Works on CSSOM serializations only. */
  const cleanValue = (name: string, value: string): string | undefined => {
    const lower = value.toLowerCase();
    const looksRemote = /\/\/|\\\\|http/.test(lower);
    if (name.startsWith('--')) {
      // A custom property is an unparsed token stream that the CSSOM writes back verbatim
      // (strings left open, at-keywords and all): nothing in it can be checked, so it goes,
      // whatever it holds. Email clients hardly support them anyway.
      drop(looksRemote ? 'remote' : 'unsafe');
      return undefined;
    }
    if (!lower.includes('(') && !lower.includes('\\')) return value;
    if (!allowRemote && (DEFERRED.test(lower) || lower.includes('\\'))) {
      // Values with var()/env()/attr() or escapes keep their tokens unparsed until used:
      // nothing in them can be checked now, so they go.
      drop(looksRemote ? 'remote' : 'unsafe');
      return undefined;
    }
    if (!allowRemote && IMAGE_FUNCTION.test(lower)) {
      drop('remote');
      return undefined;
    }
    let failed: Decision | undefined;
    const out = value.replace(SERIALIZED_URL, (match, body: string) => {
      const d = decideImage(cssStringValue(body));
      if ('keep' in d) return `url(${cssString(d.keep)})`;
      failed ??= d;
      return match;
    });
    if (failed && 'drop' in failed) {
      drop(failed.drop);
      return undefined;
    }
    // `url(` left over is not a URL token the CSSOM wrote (text in a string, an unknown form): not kept.
    if (/url\(/i.test(value.replace(SERIALIZED_URL, ''))) {
      drop(looksRemote ? 'remote' : 'unsafe');
      return undefined;
    }
    return out;
  };

  const cleanDeclarations = (style: CSSStyleDeclaration): void => {
    const names: string[] = [];
    for (let i = 0; i < style.length; i++) names.push(style.item(i));
    for (const name of names) {
      const value = style.getPropertyValue(name);
      if (value === '') {
        // A longhand of a shorthand written with var(): the CSSOM keeps the shorthand's text
        // unparsed ("pending substitution") and reads each longhand as empty. Nothing in it can
        // be checked, so every such longhand, and with them the shorthand's text, goes.
        style.removeProperty(name);
        drop('unsafe');
        continue;
      }
      const next = cleanValue(name, value);
      if (next === value) continue;
      const priority = style.getPropertyPriority(name);
      style.removeProperty(name);
      // A value the browser will not take stays removed.
      if (next !== undefined) style.setProperty(name, next, priority);
    }
  };

  const cleanRules = (list: CSSStyleSheet | CSSGroupingRule): void => {
    for (let i = list.cssRules.length - 1; i >= 0; i--) {
      const rule = list.cssRules[i];
      if (rule instanceof CSSStyleRule) {
        cleanDeclarations(rule.style);
        cleanRules(rule); // nested rules
      } else if (rule instanceof CSSMediaRule || rule instanceof CSSSupportsRule || (typeof CSSContainerRule !== 'undefined' && rule instanceof CSSContainerRule) || (typeof CSSLayerBlockRule !== 'undefined' && rule instanceof CSSLayerBlockRule)) {
        cleanRules(rule);
      } else if (rule instanceof CSSFontFaceRule || rule instanceof CSSPageRule) {
        cleanDeclarations(rule.style);
      } else if (rule instanceof CSSKeyframesRule) {
        for (let k = 0; k < rule.cssRules.length; k++) cleanDeclarations((rule.cssRules[k] as CSSKeyframeRule).style);
      } else {
        // @import, @namespace, @property, @counter-style (its symbols may be images), anything newer: not kept.
        list.deleteRule(i);
        removed++;
      }
    }
  };

  /** A `<style>` element's text, parsed by the CSSOM, cleaned, and written back as the CSSOM serializes it. */
  const cleanStylesheet = (css: string): string => {
    const sheet = new CSSStyleSheet();
    try {
      // Parses without fetching anything; @import is not allowed in a constructed sheet.
      sheet.replaceSync(css);
    } catch {
      removed++;
      return '';
    }
    cleanRules(sheet);
    // `<` only in strings and selectors' attribute values; escaped so the text can never close its element.
    return Array.from(sheet.cssRules, (r) => r.cssText)
      .join('\n')
      .replace(/</g, '\\3c ');
  };

  const purify = DOMPurify(window);
  const links = new WeakMap<Element, string>();
  const blockedImages = new WeakSet<Element>();

  purify.addHook('uponSanitizeElement', (node, data) => {
    if (data.tagName === 'style' && node.nodeType === 1) node.textContent = cleanStylesheet(node.textContent ?? '');
  });

  purify.addHook('uponSanitizeAttribute', (node, data) => {
    const name = data.attrName;
    if (!URL_ATTRIBUTES.has(name)) return;
    const tag = node.nodeName.toLowerCase();
    if (name === 'href' && tag === 'a') {
      data.keepAttr = false;
      const target = safeLinkTarget(data.attrValue);
      if (target !== undefined) links.set(node, target);
      else if (data.attrValue.trim() !== '' && !data.attrValue.trim().startsWith('#')) removed++;
      return;
    }
    if ((name === 'src' && tag === 'img') || (name === 'background' && BACKGROUND_TAGS.has(tag))) {
      const d = decideImage(data.attrValue);
      if ('keep' in d) {
        data.attrValue = d.keep;
        return;
      }
      data.keepAttr = false;
      drop(d.drop);
      if (tag === 'img' && d.drop === 'remote') blockedImages.add(node);
      return;
    }
    // srcset, poster, lowsrc… and URL attributes anywhere else: never kept.
    data.keepAttr = false;
    drop(!allowRemote && /\/\/|\\\\/.test(data.attrValue) ? 'remote' : 'unsafe');
  });

  purify.addHook('afterSanitizeAttributes', (node) => {
    const el = node as HTMLElement;
    const target = links.get(el);
    if (target !== undefined) {
      if (!el.hasAttribute('title')) el.setAttribute('title', target);
      el.setAttribute('data-link', '');
    }
    if (blockedImages.has(el)) el.setAttribute('data-blocked-image', '');
    if (el.hasAttribute?.('style') && el.style) {
      cleanDeclarations(el.style);
      const css = el.style.cssText;
      if (css.trim() === '') el.removeAttribute('style');
      else el.setAttribute('style', css);
    }
  });

  let html = '';
  try {
    html = purify.sanitize(input, {
      ALLOWED_TAGS,
      ALLOWED_ATTR,
      ADD_URI_SAFE_ATTR: ['background'],
      ALLOW_DATA_ATTR: false,
      ALLOW_ARIA_ATTR: true,
      ADD_FORBID_CONTENTS: FORBID_CONTENTS_EXTRA,
      // Head styles of a full document are kept: everything is parsed as body content.
      FORCE_BODY: true,
      RETURN_TRUSTED_TYPE: false,
    });
  } catch {
    // What DOMPurify could not handle is not shown.
    html = '';
    removed++;
  }
  removed += purify.removed.length;
  purify.removeAllHooks();
  return { html, blockedRemote, removed };
}

/** Base look inside the frame: readable defaults that do not fight the email's own styles. */
const SRCDOC_BASE_CSS =
  'html{color-scheme:light}body{margin:8px;background:#fff;color:#000;font:14px/1.4 system-ui,sans-serif;word-wrap:break-word}' +
  'img{max-width:100%;height:auto}img[data-blocked-image]{outline:1px dashed #999;min-width:16px;min-height:16px}' +
  'a[data-link]{color:#0b57d0;text-decoration:underline;cursor:default}';

export interface SrcdocResult extends SanitizeResult {
  /** A whole document for `iframe.srcdoc`: its CSP first, no referrer, base styles, then the sanitized body. */
  srcdoc: string;
  /** Whether the frame shows the mail in the theme's colours (asked for, and the mail is simple). */
  themed: boolean;
}

/** The theme's colours for simple mail (the `testInbox.themeSimpleMail` setting). */
export interface FrameTheme {
  background: string;
  foreground: string;
  link: string;
  /** `dark` or `light`: the frame's scroll bars and form controls follow it. */
  scheme: 'dark' | 'light';
}

/** A colour as the theme variables give it: hex or rgb()/rgba(), nothing else reaches the frame's CSS. */
const SAFE_COLOR = /^(?:#[0-9a-f]{3,8}|rgba?\(\s*[\d.]+%?\s*(?:,\s*[\d.]+%?\s*){2,3}\))$/i;

/** Whether `value` is a colour the frame's base CSS may hold. */
function isSafeColor(value: string): boolean {
  return SAFE_COLOR.test(value.trim());
}

/**
 * Simple mail sets no background of its own: no `bgcolor` or `background` attribute and no
 * `background` in any style. Anything else keeps the white sheet it was designed on.
 */
function hasOwnBackground(sanitizedBody: string): boolean {
  const doc = new DOMParser().parseFromString(`<!DOCTYPE html><html><body>${sanitizedBody}</body></html>`, 'text/html');
  if (doc.querySelector('[bgcolor], [background]')) return true;
  for (const el of doc.querySelectorAll('[style]')) if (/background/i.test(el.getAttribute('style') ?? '')) return true;
  for (const style of doc.querySelectorAll('style')) if (/background/i.test(style.textContent ?? '')) return true;
  return false;
}

function themeCss(t: FrameTheme): string | undefined {
  if (![t.background, t.foreground, t.link].every(isSafeColor)) return undefined;
  return `html{color-scheme:${t.scheme}}body{background:${t.background.trim()};color:${t.foreground.trim()}}a[data-link]{color:${t.link.trim()}}`;
}

export function buildSrcdoc(input: string, opts: SanitizeOptions, theme?: FrameTheme): SrcdocResult {
  const r = sanitizeEmailHtml(input, opts);
  const themed = theme && !hasOwnBackground(r.html) ? themeCss(theme) : undefined;
  const srcdoc =
    '<!DOCTYPE html><html><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(frameCsp(opts.allowRemoteImages))}">` +
    '<meta name="referrer" content="no-referrer">' +
    `<style>${SRCDOC_BASE_CSS}${themed ?? ''}</style></head><body>${r.html}</body></html>`;
  return { ...r, srcdoc, themed: themed !== undefined };
}
