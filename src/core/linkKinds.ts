// What each link of a message is for: confirming an address, resetting a password, signing in
// by link, unsubscribing, a tracker, or anything else. Read from three signals, strongest first:
// the List-Unsubscribe header, the words a reader sees (anchor text, in many languages), then
// the words of the URL (its path, query names and short query values, and those of a URL a
// click tracker wraps). A tracker whose text says "Verify" is a verify link: the reader clicks
// it for that, whatever redirect it goes through.
import { type ExtractedLink, type LinkSource, extractLinks } from './links';

export type LinkKind = 'verify-email' | 'reset-password' | 'magic-login' | 'unsubscribe' | 'tracking' | 'other';

interface ClassifiedLink extends ExtractedLink {
  kind: LinkKind;
}

interface LinkKindSource extends LinkSource {
  /** The List-Unsubscribe header as sent (`<https://…>, <mailto:…>`). */
  listUnsubscribe?: string;
}

/** The kinds a person acts on, in the order a conflict is decided (a reset mail often also says "confirm"). */
type ActionKind = Exclude<LinkKind, 'tracking' | 'other'>;
const ACTION_ORDER: readonly ActionKind[] = ['unsubscribe', 'reset-password', 'magic-login', 'verify-email'];

/**
 * Anchor-text words per kind, lowercase, matched as substrings of the lowercased text (stems,
 * so "confirm" covers "confirmation"). English, German, French, Spanish, Portuguese, Italian,
 * Dutch, Chinese (simplified and traditional), Japanese, Korean.
 */
const TEXT_WORDS: Record<ActionKind, readonly string[]> = {
  unsubscribe: [
    'unsubscribe', 'opt out', 'opt-out', 'abmelden', 'abbestellen', 'austragen', 'désabonner', 'désinscri', 'darse de baja', 'darte de baja',
    'cancelar suscripción', 'cancelar a inscrição', 'cancelar inscrição', 'descadastr', 'disiscriv', 'annulla iscrizione', 'afmelden', 'uitschrijven',
    '退订', '退訂', '取消订阅', '取消訂閱', '配信停止', '購読解除', '配信解除', '수신거부', '수신 거부', '구독 취소', '구독취소',
  ],
  'reset-password': [
    'reset', 'forgot', 'new password', 'change password', 'choose a password', 'zurücksetzen', 'neues passwort', 'passwort ändern', 'réinitialiser',
    'nouveau mot de passe', 'restablecer', 'nueva contraseña', 'redefinir', 'nova senha', 'reimposta', 'nuova password', 'herstel', 'wachtwoord',
    '重置', '重设', '重設', '找回密码', '再設定', 'パスワードをリセット', '재설정', '비밀번호 변경',
  ],
  'magic-login': [
    'sign in', 'sign-in', 'log in', 'log-in', 'login', 'magic link', 'einloggen', 'anmeldung bestätigen', 'jetzt anmelden', 'se connecter', 'connexion',
    'iniciar sesión', 'iniciar sessão', 'entrar', 'fazer login', 'accedi', 'accede', 'inloggen', '登录', '登入', '登錄', 'ログイン', 'サインイン', '로그인',
  ],
  'verify-email': [
    'verify', 'verif', 'confirm', 'activate', 'validate', 'bestätig', 'aktivier', 'vérifi', 'valider', 'activer', 'verific', 'confirmar', 'activar',
    'ativar', 'conferma', 'attiva', 'bevestig', 'verifieer', 'activeer', '验证', '驗證', '确认', '確認', '激活', '認証', '有効化', '인증', '확인', '활성화',
  ],
};

/**
 * Anchor-text words of links a person never has to click to go on: the web version of the mail
 * and its settings. A link with such text is `other` whatever its URL says
 * (`/view?campaign=verify-launch` is still "View in browser").
 */
const PASSIVE_TEXT_WORDS: readonly string[] = [
  'in your browser', 'in browser', 'view this email', 'view online', 'web version', 'online version', 'preferences', 'manage subscription', 'email settings',
  'im browser', 'webversion', 'einstellungen', 'navigateur', 'préférences', 'navegador', 'preferencias', 'preferências', 'nel browser', 'preferenze',
  'in je browser', 'voorkeuren', 'ブラウザ', '配信設定', '浏览器', '瀏覽器', '브라우저',
];

/** URL words per kind (path segments, query names and values split into words, camelCase too). */
const URL_WORDS: Record<ActionKind, readonly string[]> = {
  unsubscribe: ['unsubscribe', 'unsub', 'optout', 'opt_out'],
  'reset-password': ['reset', 'resetpassword', 'password', 'forgot', 'recover', 'recovery'],
  'magic-login': ['magic', 'magiclink', 'login', 'signin', 'logon', 'passwordless'],
  'verify-email': ['verify', 'verification', 'verifyemail', 'confirm', 'confirmation', 'activate', 'activation', 'validate', 'validation'],
};

/** Host labels that click-tracking services put first (click.example.com, links.example.com, …). */
const TRACKING_HOST_RE = /^(click|clicks|links?|track|tracking|trk|email|em|e|url\d*|r|go|t|ct|mandrillapp|list-manage|sendgrid|mailchi)\./;
/** Paths of the usual click redirects (SendGrid /ls/click and /wf/click, Mailgun /c/, generic /track, /click, /redirect). */
const TRACKING_PATH_RE = /^\/(ls\/click|wf\/click|c\/|track(ing)?(\/|$)|click(\/|$)|redirect(\/|$)|r\/|ss\/c\/)/i;
/** A query value shorter than this is read for words (longer ones are tokens or payloads). */
const MAX_QUERY_WORD_VALUE = 40;

/** Every link of the message with its kind, in the order extractLinks gives them. */
export function classifyLinks(source: LinkKindSource): ClassifiedLink[] {
  const unsubscribe = listUnsubscribeUrls(source.listUnsubscribe);
  const links = extractLinks(source);
  // A List-Unsubscribe URL that the body does not show is still an unsubscribe link of the message.
  const seen = new Set(links.map((l) => normalize(l.url)));
  for (const url of unsubscribe) if (!seen.has(url)) links.push({ url });
  return links.map((l) => ({ ...l, kind: linkKind(l, unsubscribe) }));
}

/** The kind of one link; `unsubscribe` holds the normalised URLs of the List-Unsubscribe header. */
export function linkKind(link: ExtractedLink, unsubscribe: ReadonlySet<string> = new Set()): LinkKind {
  if (unsubscribe.has(normalize(link.url))) return 'unsubscribe';
  if (link.text !== undefined) {
    const byText = kindOfText(link.text);
    if (byText) return byText;
    const t = link.text.normalize('NFC').toLowerCase();
    if (PASSIVE_TEXT_WORDS.some((w) => t.includes(w))) return 'other';
  }
  const url = parse(link.url);
  if (!url) return 'other';
  const inner = wrappedUrl(url);
  const byUrl = kindOfUrl(url) ?? (inner ? kindOfUrl(inner) : undefined);
  if (byUrl) return byUrl;
  if (inner || TRACKING_HOST_RE.test(url.hostname) || TRACKING_PATH_RE.test(url.pathname)) return 'tracking';
  return 'other';
}

function kindOfText(text: string): ActionKind | undefined {
  const t = text.normalize('NFC').toLowerCase();
  return ACTION_ORDER.find((k) => TEXT_WORDS[k].some((w) => t.includes(w)));
}

function kindOfUrl(url: URL): ActionKind | undefined {
  const words = new Set<string>();
  const add = (s: string) => {
    // camelCase and separators both split words; the joined form is kept too ("verifyEmail" → verify, email, verifyemail).
    const spaced = s.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
    for (const w of spaced.split(/[^a-z0-9_]+|_/)) if (w) words.add(w);
    words.add(s.toLowerCase().replace(/[^a-z0-9_]/g, ''));
  };
  for (const seg of url.pathname.split('/')) add(safeDecode(seg));
  for (const [name, value] of url.searchParams) {
    add(name);
    if (value.length < MAX_QUERY_WORD_VALUE && !/^https?:/i.test(value)) add(value);
  }
  if (url.hash.length > 1 && url.hash.length < MAX_QUERY_WORD_VALUE) add(url.hash.slice(1));
  return ACTION_ORDER.find((k) => URL_WORDS[k].some((w) => words.has(w)));
}

/** The http(s) URL a click tracker carries in a query value, if any. */
function wrappedUrl(url: URL): URL | undefined {
  for (const [, value] of url.searchParams) {
    if (/^https?:\/\//i.test(value)) {
      const inner = parse(value);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** The http(s) URLs of a List-Unsubscribe header (`<…>` entries; mailto: ones are not links). */
export function listUnsubscribeUrls(header: string | undefined): Set<string> {
  const out = new Set<string>();
  if (!header) return out;
  for (const m of header.matchAll(/<([^>]*)>/g)) {
    const u = parse(m[1].trim());
    if (u) out.add(u.href);
  }
  return out;
}

function parse(s: string): URL | undefined {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : undefined;
  } catch {
    return undefined;
  }
}

function normalize(s: string): string {
  return parse(s)?.href ?? s;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
