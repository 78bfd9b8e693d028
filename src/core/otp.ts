// One-time-code extraction: the code the "Copy code" button copies.
//
// Rules, strongest first (each candidate keeps its best score):
//   1. origin-bound  The last line of an SMS is `@host #code` (WebOTP / origin-bound one-time
//                    code format, optionally followed by ` @host` or Apple's ` %host`).
//   2. keyword       A code bound to a keyword (code, OTP, passcode, PIN, verification,
//                    Bestätigungscode, código, 验证码, 認証番号, 인증번호, رمز, קוד…): right after it with
//                    only filler between ("code is", "Code :", "验证码为"), right before it
//                    ("482913 is your … code"), or alone on its line just below it.
//   3. keyword-near  A digit code within a few lines of a keyword but not bound to it.
//   4. subject       The subject's only number, when it is a 4–8 digit run.
//   5. sole-number   An SMS (or, when the kind is not given, a short body without HTML) whose
//                    only remaining number is a 4–8 digit run, or which is nothing but one word
//                    of letters and digits in one case (`7K4QW2`).
// Digit codes are 4–8 digits; grouped codes (`123 456`, `12 34 56`, `123-456`) are joined;
// leading zeros are kept. Right after a keyword with only filler between (and only there),
// these are codes too: a 9–10 digit run (bank one-time passwords), a 3+4 or 4+3 pair
// (`337-1337`, otherwise a local phone number), equal hyphen groups running into letters
// (`1337-1337XX` → 13371337).
// A short message's only number is not a code when a noun that merely contains a keyword names
// it ("your barcode is 123456", "123456 is your footpath", "barcode 123456").
// Alphanumeric codes count only when bound to a keyword (rule 2), and not when they stand right
// before it as its modifier ("858365 is your 98point6 security code": a brand). A word of
// letters only in one case is a code only as the value of a `keyword:` label ("code: QGFDAE";
// lower case after a label in capitals: "PASSCODE: mifsuc"). A code written character by
// character (`7 0 4 1 2 8`, `TAN a u 8 k u f`) is joined when it follows a keyword.
// Never codes: years, dates, times, phone numbers, money, order/invoice/ticket and similar
// numbers, postcodes and street numbers, "card ending in 1234", masked cards (`603799*1234`),
// digits glued to a word of a spaced script (`اول0000`), `#` colours and references,
// digits in URLs, e-mail addresses and HTML attributes (HTML is reduced to its visible text).
//
// Linear-time string processing; HTML is reduced to its visible text by html.ts (htmlparser2).

import { htmlToText } from './html';

export type CodeReason = 'origin-bound' | 'keyword' | 'keyword-near' | 'subject' | 'sole-number';

interface CodeCandidate {
  code: string;
  /** 0–100; higher is more certain. Candidates are returned best first. */
  score: number;
  reason: CodeReason;
}

export interface CodeSource {
  subject?: string;
  text?: string;
  html?: string;
  /**
   * What the message is, when the caller knows (a phone inbox holds SMS). Without it, a body
   * of at most SHORT_MESSAGE_MAX characters and no HTML counts as an SMS.
   */
  kind?: 'email' | 'sms';
}

/** Fewest and most digits of a numeric code (4-digit PINs to 8-digit bank codes). */
const MIN_CODE_DIGITS = 4;
const MAX_CODE_DIGITS = 8;
/** Most digits of a code written right after a keyword (banks send 9–10 digit one-time passwords). */
const MAX_TIGHT_CODE_DIGITS = 10;
/** Length bounds of an alphanumeric code (Steam's 5 characters to long tokens). */
const MIN_ALNUM_CODE = 4;
const MAX_ALNUM_CODE = 12;
/** A body at most this long with no HTML is a short message (two SMS segments). */
const SHORT_MESSAGE_MAX = 320;
/** Input beyond this many characters is not scanned: no real message puts its code later. */
const MAX_SCAN_CHARS = 200_000;
/** Longest origin-bound last line looked at (host names are at most 253 characters). */
const MAX_ORIGIN_LINE = 600;

const SCORE = {
  originBound: 100,
  keywordAfter: 92,
  keywordBefore: 90,
  keywordLine: 86,
  /** Alone on its line below a keyword line that does not announce it. */
  keywordLineLoose: 80,
  /** Weak binding: starts here and loses a point per few characters of distance. */
  keywordNear: 70,
  keywordNearMin: 45,
  subject: 40,
  soleNumber: 30,
} as const;

/** How far (characters) a keyword may be from a code it is near but not bound to. */
const NEAR_AFTER_KEYWORD = 120;
const NEAR_BEFORE_KEYWORD = 60;
/** Lines between a keyword and a code standing alone on its line. */
const LINE_BINDING_LINES = 3;
/** How far back (characters, same line) a label such as "Order" or "ending in" disqualifies a number. */
const LABEL_REACH = 28;
/** Farthest back (characters) a keyword is looked for from a code; beyond the standalone-line reach. */
const KEYWORD_REACH_BACK = 320;
/** Longest filler between a keyword and the code after it ("code is", "Code lautet:"). */
const MAX_FILLER = 40;
/** Longest text between a code and the keyword after it ("482913 is your Google verification code"). */
const MAX_VERB_GAP = 48;
/** Bound on the text looked at around a keyword for its sentence (promo markers). */
const SENTENCE_REACH = 200;

// ---------------------------------------------------------------- vocabulary

interface Keyword {
  text: string;
  /** Needs non-letters on both sides (Latin, Cyrillic words); CJK keywords do not. */
  word: boolean;
  /** "confirmation code" also names booking references: ignored in messages about a trip. */
  booking?: boolean;
  /** Match case as written (TAN would otherwise match "tan"). */
  exactCase?: boolean;
}

const WORD_KEYWORDS = [
  // English
  'code', 'codes', 'otp', 'passcode', 'pin', 'verification', 'verify', 'one-time', 'one time', '2fa', 'two-factor',
  'authentication', 'temporary password', 'security code', 'one-time password', 'one time password',
  // German
  'bestätigungscode', 'sicherheitscode', 'verifizierungscode', 'verifikationscode', 'einmalcode', 'anmeldecode',
  'zugangscode', 'prüfcode', 'freigabecode', 'aktivierungscode', 'einmalpasswort', 'einmalkennwort', 'mtan', 'smstan', 'pushtan',
  // French
  'vérification', 'authentification', 'usage unique', 'mot de passe temporaire',
  // Spanish
  'código', 'codigo', 'clave', 'verificación', 'contraseña temporal', 'un solo uso',
  // Portuguese
  'senha', 'verificação', 'senha temporária',
  // Italian, Dutch, Polish, Turkish, Russian
  'codice', 'verificatiecode', 'kod', 'kodu', 'код',
  // Persian and Arabic (رمز: password, رمز پویا: dynamic password, رمز دوم: second password, کد تایید: confirmation code)
  'رمز', 'رمز پویا', 'رمز پويا', 'رمز دوم', 'رمزدوم', 'کد', 'کد تایید', 'کد تأیید', 'كود', 'رمز التحقق',
  // Hebrew (קוד: code, סיסמה: password, with the article ה or a possessive ending)
  'קוד', 'הקוד', 'קוד אימות', 'קוד האימות', 'סיסמה', 'הסיסמה', 'סיסמא', 'סיסמתך',
  // Greek, Georgian, Hindi
  'κωδικός', 'κωδικό', 'კოდი', 'कोड', 'ओटीपी',
];
const CJK_KEYWORDS = [
  // Chinese (simplified and traditional)
  '验证码', '驗證碼', '校验码', '校驗碼', '动态码', '動態碼', '动态密码', '動態密碼', '认证码', '認證碼', '安全码', '安全碼',
  '一次性密码', '一次性密碼', '登录码', '登入碼', '确认码',
  // Japanese
  '認証コード', '確認コード', '認証番号', 'ワンタイムパスワード', 'ワンタイムコード', 'セキュリティコード', '暗証番号', 'パスコード',
  '検証コード', 'ログインコード', '承認コード', '認証キー',
  // Korean
  '인증번호', '인증 번호', '인증코드', '인증 코드', '확인코드', '확인 코드', '보안코드', '보안 코드', '일회용 비밀번호', '승인코드',
];
const BOOKING_KEYWORDS = ['confirmation code', 'código de confirmación', 'code de confirmation', '確認番号', '예약번호'];

const KEYWORDS: Keyword[] = [
  ...WORD_KEYWORDS.map((text) => ({ text, word: true })),
  ...CJK_KEYWORDS.map((text) => ({ text, word: false })),
  ...BOOKING_KEYWORDS.map((text) => ({ text, word: !/[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]/.test(text), booking: true })),
  { text: 'TAN', word: true, exactCase: true },
];

/** Words right before "code" (or right after "código"/"code") that make it not a one-time code. */
const CODE_QUALIFIERS_BEFORE = new Set([
  'promo', 'promotional', 'discount', 'coupon', 'voucher', 'gift', 'referral', 'invite', 'invitation', 'qr', 'bar',
  'area', 'country', 'source', 'error', 'status', 'product', 'tracking', 'zip', 'postal', 'post', 'dress', 'swift',
  'sort', 'tax', 'reward', 'offer', 'sale', 'sales', 'redemption', 'activation', 'license', 'licence', 'access', 'door',
  'purchase', 'card',
]);
const CODE_QUALIFIERS_AFTER = new Set([
  'promo', 'promocional', 'postal', 'de barras', 'de rastreio', 'de rastreamento', 'de descuento', 'de desconto',
  'de réduction', 'promotionnel', 'sconto', 'de seguimiento', 'de envío',
]);
/** A sentence with one of these advertises: its "code" is a promo code. */
const PROMO_MARKERS = ['% off', 'sale', 'discount', 'coupon', 'promo', 'voucher', 'rabatt', 'gutschein', 'réduction', 'descuento', 'desconto', 'cupom', 'cupón', '优惠', '折扣', '割引', 'クーポン', '할인', '쿠폰'];
/** Words that make a message about a trip, where "confirmation code" is a booking reference. */
const BOOKING_MARKERS = ['flight', 'booking', 'reservation', 'itinerary', 'boarding', 'check-in', 'hotel', 'vuelo', 'reserva', 'réservation', 'vol ', 'flug', 'buchung', '航班', '予約', '예약'];

/** Labels of numbers that are not codes, looked for shortly before a number on its line. */
const WORD_LABELS = [
  'order', 'orders', 'invoice', 'inv', 'ticket', 'case', 'reference', 'ref', 'booking', 'reservation', 'tracking',
  'shipment', 'parcel', 'package', 'account number', 'acct', 'customer number', 'customer no', 'customer id',
  'member id', 'member number', 'membership number', 'transaction',
  'receipt', 'policy', 'claim', 'flight', 'seat', 'gate', 'room', 'suite', 'ste', 'apt', 'unit', 'floor', 'box',
  'item', 'sku', 'model', 'serial', 'version', 'build', 'page', 'step', 'rx', 'id', 'hrb', 'hra', 'rcs', 'vat', 'cnpj',
  'cpf', 'siret', 'siren', 'ust-idnr', 'iban', 'bic', 'tel', 'phone', 'call', 'fax', 'hotline', 'mobile', 'telefon',
  'téléphone', 'appelez', 'llama', 'llámanos', 'ligue', 'ouvidoria', 'sac', 'ending in',
  'ending with', 'ends in', 'endet auf', 'endend auf', 'terminant par', 'terminée par', 'se terminant par',
  'terminada en', 'terminado em', 'final', 'last 4', 'last four', 'card', 'carte', 'tarjeta', 'cartão', 'karte',
  'bestellung', 'bestellnummer', 'auftrag', 'rechnung', 'kundennummer', 'sendung', 'sendungsnummer', 'commande',
  'facture', 'dossier', 'pedido', 'factura', 'fatura', 'reserva', 'rastreio', 'postcode', 'zip', 'plz', 'cep',
  'postal', 'no.', 'nr.', 'nº', 'n°', 'art.', 'vol.', 'flight', 'store', 'route', 'bus', 'line', 'platform', 'gleis',
  // Persian (document/reference number, account, tracking, order), Hebrew (order, account)
  'مستند', 'حساب', 'پیگیری', 'سفارش', 'הזמנה', 'חשבון',
];
const CJK_LABELS = [
  '订单', '單號', '单号', '运单', '快递', '发票', '尾号', '尾號', '卡号', '客服', '电话', '電話', '热线', '邮编', '郵遞區號',
  '注文', '請求', '予約', '問い合わせ', '〒', '会員番号', 'カード', '주문', '송장', '운송장', '예약', '카드', '고객센터',
  '전화', '사업자등록번호', '끝자리', '계좌',
];

/** Filler between a keyword and its code ("code is", "Code lautet:", "código es", "验证码为"). */
const FILLER_WORDS = new Set([
  'is', 'was', 'are', 'will', 'be', 'below', 'here', 'follows', 'following', 'as', 'this', 'the', 'your', 'our', 'a',
  'code', 'number', 'no', 'ist', 'lautet', 'lauten', 'dein', 'deine', 'ihr', 'ihre', 'der', 'die', 'das', 'für', 'for',
  'est', 'voici', 'votre', 'ton', 'le', 'la', 'de', 'du', 'es', 'son', 'tu', 'su', 'el', 'é', 'e', 'o', 'seu', 'sua',
  'do', 'da', 'otp', 'pin', 'tan', 'one-time', 'sms', 'e-mail', 'email', 'login', 'sign-in', 'signup', 'sign', 'in',
  'up', 'use', 'enter', 'new', 'your', 'to', 'now', 'please', 'di', 'il', 'jest', 'twój', 'ваш', 'is:',
]);
/** Verbs that follow a code written before its keyword ("482913 is your … code"). */
const BEFORE_VERBS = new Set(['is', 'est', 'es', 'é', 'ist', 'as', 'als', 'como', 'comme', 'to', 'zu', 'para', 'pour', 'は', 'が', '是', '为', '為', '이', '가', '는', '은']);

/** Copulas by which a short text names a number: "<noun> is 123456", "123456 is your <noun>". */
const COPULAS = new Set(['is', 'was', 'ist', 'est', 'es', 'é', 'è', 'lautet', 'هو', 'است', 'הוא', 'היא']);
/** Words between a copula and the noun it names ("is your", "ist Ihre"). */
const DETERMINERS = new Set(['your', 'the', 'a', 'an', 'my', 'our', 'this', 'dein', 'deine', 'ihr', 'ihre', 'votre', 'ton', 'le', 'la', 'su', 'tu', 'seu', 'sua', 'il']);

/** Suffixes that make a number a quantity, a date part or an amount. */
const UNIT_SUFFIXES = new Set([
  '%', '‰', '€', '$', '£', '¥', '円', '元', '원', '年', '月', '日', '時', '分', '秒', '点', '号', '件', '个', '人', '名', '次', '호', '번지', '년',
  'km', 'kg', 'mb', 'gb', 'tb', 'px', 'pt', 'pts', 'points', 'miles', 'meilen', 'punkte', 'users', 'customers', 'items',
  'eur', 'usd', 'gbp', 'jpy', 'cny', 'krw', 'brl', 'chf', 'euro', 'euros', 'dollars', 'reais', 'yuan', 'yen', 'kr', 'pln',
  'rmb', 'ms', 'mhz', 'ghz', 'mah', 'am', 'pm', 'uhr', 'h',
]);
const CURRENCY_PREFIX = new Set(['$', '€', '£', '¥', '￥', '₩', '₹', '₽', '₺', '₪', '฿']);
/** Street-type words: a number followed by `Capitalised … <street>` is a street number. */
const STREET_WORDS = new Set([
  'st', 'street', 'ave', 'avenue', 'rd', 'road', 'blvd', 'boulevard', 'parkway', 'pkwy', 'way', 'drive', 'dr', 'lane',
  'ln', 'plaza', 'pl', 'place', 'ct', 'court', 'sq', 'square', 'hwy', 'highway', 'terrace', 'circle', 'allee', 'straße',
  'strasse', 'str', 'weg', 'platz', 'gasse', 'ring', 'rue', 'quai', 'calle', 'rua', 'via',
]);

// ---------------------------------------------------------------- text preparation

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
/** Letters of scripts written without spaces between words (Chinese, Japanese, Thai) or with glued particles (Korean). */
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;
/** Letters of scripts that separate words with spaces (unlike Chinese, Japanese, Korean particles, Thai). */
const SPACED_SCRIPT_LETTER = /[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Armenian}\p{Script=Georgian}]/u;
const UPPER = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;

function isLetterOrDigit(ch: string | undefined): boolean {
  return ch !== undefined && ch !== '' && LETTER_OR_DIGIT.test(ch);
}

function isAsciiDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Whether a UTF-16 code unit is an ASCII letter or digit (the project's one copy of this check). */
function isAsciiAlnum(c: number): boolean {
  return isAsciiDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Lowercases code unit by code unit so indexes stay aligned with the original. */
function lowerAligned(s: string): string {
  // ASCII lowercases one unit to one unit: the whole string at once is the same, and quicker.
  if (ASCII_ONLY.test(s)) return s.toLowerCase();
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    const low = ch.toLowerCase();
    out += low.length === 1 ? low : ch;
  }
  return out;
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * Blanks out (with spaces, keeping every index) URLs, web addresses, e-mail addresses and
 * `@host` tokens, whose digits are never codes. Works chunk by chunk between whitespace.
 */
function blankAddresses(s: string): string {
  // Every address form below has a dot or a colon: only the chunks with one are looked at (the
  // match of ADDRESS_CANDIDATE_RE is always a whole chunk between whitespace).
  return s.replace(ADDRESS_CANDIDATE_RE, (chunk) => {
    const lower = chunk.toLowerCase();
    const isAddress =
      lower.includes('://') || lower.startsWith('www.') || /[a-z0-9]@[a-z0-9-]+\./.test(lower) ||
      /^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\/\S/.test(lower) || (chunk.startsWith('@') && chunk.includes('.'));
    return isAddress ? ' '.repeat(chunk.length) : chunk;
  });
}

/** A chunk between whitespace with a dot or a colon in it. */
const ADDRESS_CANDIDATE_RE = /(?<!\S)[^\s.:]*[.:]\S*/g;

function prepare(text: string): string {
  const limited = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  // NFKC folds full-width digits and letters (１２３４, ＡＢＣ) and full-width colons into ASCII.
  // Full-width commas and stops end a clause (`验证码123456，5分钟`): they become `, ` and `. `
  // first so that NFKC does not glue the code to the next number as `123456,5`.
  const clauses = limited.replace(/\uff0c/g, ', ').replace(/\uff0e/g, '. ');
  return blankAddresses(clauses.normalize('NFKC').replace(/\r\n?/g, '\n'));
}

// ---------------------------------------------------------------- keywords and labels

interface Span {
  start: number;
  end: number;
}

/** Characters that end a word: any but letters and digits, and the letters of scripts written without spaces. */
function wordBoundary(ch: string | undefined): boolean {
  return !isLetterOrDigit(ch) || UNSPACED_SCRIPT.test(ch ?? '');
}

/** Whether an occurrence of `needle` at [at, end) of `hay` stands as a word (when `word` asks for one). */
function standsAlone(hay: string, needle: string, at: number, word: boolean): boolean {
  // `OTP密碼1234567`: a Latin keyword may touch Chinese or Japanese text without a space.
  return !word || (wordBoundary(hay[at - 1]) && (!isLetterOrDigit(needle[needle.length - 1]) || wordBoundary(hay[at + needle.length])));
}

interface Needle {
  text: string;
  /** Needs a word boundary on both sides (standsAlone). */
  word: boolean;
}

/**
 * A fixed list of strings found in a text in one pass: every occurrence of every entry, the
 * overlapping ones included, as a search of the text for each entry in turn would find them.
 * One regular expression finds where any entry starts (searched again from the next character,
 * so overlapping entries are all seen); only there are the entries with that
 * first character compared. A search per entry cost most of a short message's scan (each of
 * some 200 keywords and labels read the whole text).
 */
class Needles {
  private readonly starts: RegExp;
  private readonly byFirst = new Map<string, Needle[]>();

  constructor(readonly entries: readonly Needle[]) {
    for (const e of entries) {
      const list = this.byFirst.get(e.text[0]) ?? [];
      list.push(e);
      this.byFirst.set(e.text[0], list);
    }
    const alternatives = [...new Set(entries.map((e) => e.text))].map((t) => t.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'));
    this.starts = new RegExp(alternatives.join('|'), 'g');
  }

  /** Calls `found` for each occurrence (that stands as a word where its entry asks), in order of position, then of entry. */
  each(hay: string, found: (entry: Needle, at: number) => void): void {
    const re = this.starts;
    re.lastIndex = 0;
    for (let m = re.exec(hay); m !== null; m = re.exec(hay)) {
      const at = m.index;
      for (const e of this.byFirst.get(hay[at]) ?? []) if (hay.startsWith(e.text, at) && standsAlone(hay, e.text, at, e.word)) found(e, at);
      re.lastIndex = at + 1;
    }
  }

  /** Whether any entry occurs in `hay`. */
  any(hay: string): boolean {
    let seen = false;
    this.each(hay, () => (seen = true));
    return seen;
  }
}

/** What ends a sentence (sentenceAround). */
const SENTENCE_STOP_RE = /[.!?\n。！？]/g;

/** The sentence (bounded to SENTENCE_REACH each side) around a position, from the sorted stop positions. */
function sentenceAround(stops: number[], at: number, length: number): [number, number] {
  let lo = 0;
  let hi = stops.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (stops[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  const from = lo > 0 ? stops[lo - 1] + 1 : 0;
  const to = lo < stops.length ? stops[lo] : length;
  return [Math.max(from, at - SENTENCE_REACH), Math.min(to, at + SENTENCE_REACH)];
}

function previousWord(lower: string, at: number): string {
  let e = at;
  while (e > 0 && at - e < 4 && (lower[e - 1] === ' ' || lower[e - 1] === '-')) e--;
  let s = e;
  while (s > 0 && e - s < 40 && isLetterOrDigit(lower[s - 1])) s--;
  return lower.slice(s, e);
}

const KEYWORD_NEEDLES = new Needles(KEYWORDS.filter((k) => !k.booking && !k.exactCase));
const EXACT_CASE_NEEDLES = new Needles(KEYWORDS.filter((k) => !k.booking && k.exactCase));
const BOOKING_KEYWORD_NEEDLES = new Needles(KEYWORDS.filter((k) => k.booking));
const BOOKING_MARKER_NEEDLES = new Needles(BOOKING_MARKERS.map((text) => ({ text, word: false })));
const PROMO_NEEDLES = new Needles(PROMO_MARKERS.map((text) => ({ text, word: false })));
const CODE_QUALIFIERS_AFTER_LIST = [...CODE_QUALIFIERS_AFTER];

/** Keyword occurrences that really announce a one-time code, merged where they overlap. */
function findKeywords(text: string, lower: string): Span[] {
  const spans: Span[] = [];
  // In a message about a trip, "confirmation code" is a booking reference: its words announce no code.
  const suppressed: Span[] = [];
  if (BOOKING_MARKER_NEEDLES.any(lower)) {
    BOOKING_KEYWORD_NEEDLES.each(lower, (k, at) => suppressed.push({ start: at, end: at + k.text.length }));
    suppressed.sort((a, b) => a.start - b.start);
  }
  const promos: Span[] = [];
  PROMO_NEEDLES.each(lower, (m, at) => promos.push({ start: at, end: at + m.text.length }));
  const stops: number[] = [];
  for (const m of lower.matchAll(SENTENCE_STOP_RE)) stops.push(m.index);
  const found: Span[] = [];
  KEYWORD_NEEDLES.each(lower, (k, at) => found.push({ start: at, end: at + k.text.length }));
  EXACT_CASE_NEEDLES.each(text, (k, at) => found.push({ start: at, end: at + k.text.length }));
  for (const sp of found) {
    if (spansStartingIn(suppressed, sp.start - 40, sp.end).some((b) => sp.start < b.end && sp.end > b.start)) continue;
    if (CODE_QUALIFIERS_BEFORE.has(previousWord(lower, sp.start))) continue;
    const after = lower.slice(sp.end, sp.end + 20).trimStart();
    if (CODE_QUALIFIERS_AFTER_LIST.some((q) => after.startsWith(q))) continue;
    const [from, to] = sentenceAround(stops, sp.start, lower.length);
    if (spansStartingIn(promos, from, to).length > 0) continue;
    spans.push(sp);
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Span[] = [];
  for (const sp of spans) {
    const last = merged[merged.length - 1];
    if (last && sp.start <= last.end) last.end = Math.max(last.end, sp.end);
    else merged.push({ ...sp });
  }
  return merged;
}

const LABEL_NEEDLES = new Needles([...WORD_LABELS.map((text) => ({ text, word: true })), ...CJK_LABELS.map((text) => ({ text, word: false }))]);

/** The longest label, for the window labelsStartingIn searches. */
const MAX_LABEL_LENGTH = Math.max(...WORD_LABELS.map((l) => l.length), ...CJK_LABELS.map((l) => l.length));

/**
 * Labels (sorted) starting in [from, to): only that stretch of the text is searched, with a
 * character either side for the word boundaries, so the result is that of a whole-text search.
 * A label matters only shortly before a number (rejection), and a search of the whole text for
 * every label was most of the cost of scanning a long message.
 */
function labelsStartingIn(lower: string, from: number, to: number): Span[] {
  const lo = Math.max(0, from - 1);
  const window = lower.slice(lo, Math.min(lower.length, to + MAX_LABEL_LENGTH + 1));
  const spans: Span[] = [];
  LABEL_NEEDLES.each(window, (l, at) => {
    const start = at + lo;
    if (start >= from && start < to) spans.push({ start, end: start + l.text.length });
  });
  return spans;
}

// ---------------------------------------------------------------- numbers and words

interface Candidate {
  code: string;
  start: number;
  end: number;
  alnum: boolean;
  /** A year-like 4-digit number: only accepted when bound to a keyword. */
  yearLike: boolean;
  /**
   * A shape that is a code only right after a keyword with nothing but filler between
   * ("code: 1234567890"), never by nearness or alone: a 9–10 digit run, for instance.
   */
  tight?: boolean;
  /** Letters only: a code only as the value of a `keyword:` label (see lettersAfterLabel). */
  letters?: boolean;
}

interface Run {
  start: number;
  end: number;
  kind: 'digits' | 'alnum' | 'alpha';
}

/** Maximal runs of ASCII letters and digits, in order. */
function asciiRuns(s: string): Run[] {
  const runs: Run[] = [];
  let i = 0;
  while (i < s.length) {
    if (!isAsciiAlnum(s.charCodeAt(i))) { i++; continue; }
    const start = i;
    let digits = 0;
    while (i < s.length && isAsciiAlnum(s.charCodeAt(i))) { if (isAsciiDigit(s.charCodeAt(i))) digits++; i++; }
    const len = i - start;
    runs.push({ start, end: i, kind: digits === len ? 'digits' : digits === 0 ? 'alpha' : 'alnum' });
  }
  return runs;
}

const HARD_SEPARATORS = new Set(['.', '/', ':', ',', '-']);
const SOFT_SEPARATORS = new Set([' ', '\u00a0', '\u2009', '\u202f']);

function isYear(digits: string): boolean {
  if (digits.length !== 4) return false;
  const y = Number(digits);
  return y >= 1900 && y <= 2099;
}

/** How far back identifierTail looks: longer than any real prefix of an id. */
const IDENTIFIER_LOOKBACK = 64;

/**
 * Whether the digits at `start` end an identifier: glued by `-` or `_` to a word that mixes
 * letters and digits (`e2e-1171283`, `build2_583920`), or by `_` to any word. A letters-only
 * prefix joined by a hyphen (`G-284619`, Google's format) is left to the other rules.
 */
function identifierTail(s: string, start: number): boolean {
  const glue = s[start - 1];
  if (glue !== '-' && glue !== '_') return false;
  let i = start - 1;
  let letters = false;
  let digits = false;
  // Bounded, so a long run of glued numbers stays linear.
  for (; i > 0 && start - i < IDENTIFIER_LOOKBACK; i--) {
    const c = s.charCodeAt(i - 1);
    if (isAsciiDigit(c)) digits = true;
    else if (isAsciiAlnum(c)) letters = true;
    else if (s[i - 1] !== '_' && s[i - 1] !== '-') break;
  }
  if (!letters && !digits) return false;
  return glue === '_' || (letters && digits);
}

/**
 * Digit candidates: clusters of digit runs joined by single separators are classified as a
 * grouped code (`123 456`, `12-34-56`), a composite (dates, times, amounts, versions, phone
 * numbers: all rejected) or separate numbers.
 */
function numericCandidates(s: string, runs: Run[]): Candidate[] {
  const out: Candidate[] = [];
  let i = 0;
  while (i < runs.length) {
    const r = runs[i];
    if (r.kind !== 'digits') { i++; continue; }
    const group = [r];
    const seps: string[] = [];
    let j = i + 1;
    while (j < runs.length && runs[j].kind === 'digits') {
      const prev = group[group.length - 1];
      const gap = s.slice(prev.end, runs[j].start);
      const next = runs[j];
      // Brackets join only a phone area code: `1 (800) 555-0100`, `(617) 555-0123`.
      const areaCode = (x: Run): boolean => s[x.start - 1] === '(' && s[x.end] === ')' && x.end - x.start <= 4;
      const joins =
        (gap.length === 1 && (HARD_SEPARATORS.has(gap) || SOFT_SEPARATORS.has(gap))) ||
        (gap === ' (' && areaCode(next)) ||
        ((gap === ') ' || gap === ')') && areaCode(prev));
      if (!joins) break;
      group.push(runs[j]);
      seps.push(gap);
      j++;
    }
    i = j;
    const digits = group.map((g) => s.slice(g.start, g.end));
    const total = digits.reduce((a, d) => a + d.length, 0);
    const start = group[0].start;
    const end = group[group.length - 1].end;
    // `1337-1337XXX`: equal hyphen groups whose last one runs into letters; the digits are the code.
    const tail = runs[j];
    const tailDigits = tail && tail.kind === 'alnum' && tail.start === end + 1 && s[end] === '-' ? /^([0-9]{3,4})[A-Za-z]+$/.exec(s.slice(tail.start, tail.end))?.[1] : undefined;
    if (tailDigits && seps.every((x) => x === '-') && digits.every((d) => d.length === tailDigits.length) && total + tailDigits.length <= MAX_CODE_DIGITS) {
      out.push({ code: digits.join('') + tailDigits, start, end: tail.start + tailDigits.length, alnum: false, yearLike: false, tight: true });
      continue;
    }
    const plus = s[start - 1] === '+' || s[start - 1] === '(' || (s[start - 2] === '+' && s[start - 1] === ' ');
    if (group.length === 1) {
      // `+4915…` is a phone number; `(582031)` is a code in brackets.
      if (s[start - 1] === '+' || (s[start - 2] === '+' && s[start - 1] === ' ')) continue;
      // `e2e-1171283`, `run_7_583920`: the tail of an identifier, not a code (`G-284619` still is).
      if (identifierTail(s, start) || s[end] === '_') continue;
      if (digits[0].length >= MIN_CODE_DIGITS && digits[0].length <= MAX_CODE_DIGITS) {
        out.push({ code: digits[0], start, end, alnum: false, yearLike: isYear(digits[0]) });
      } else if (digits[0].length > MAX_CODE_DIGITS && digits[0].length <= MAX_TIGHT_CODE_DIGITS) {
        out.push({ code: digits[0], start, end, alnum: false, yearLike: false, tight: true });
      }
      continue;
    }
    const sep = seps[0];
    // `388-941-`: a hyphen dangling at either end makes the group a fragment of a longer number.
    if (seps.includes('-') && (s[end] === '-' || s[start - 1] === '-')) continue;
    const uniform = seps.every((x) => x === sep) && (sep === '-' || SOFT_SEPARATORS.has(sep));
    const len = digits[0].length;
    const equal = digits.every((d) => d.length === len) && len >= 2 && len <= 4;
    if (!plus && uniform && equal && total >= 6 && total <= MAX_CODE_DIGITS && !(sep === '-' && digits.every(isYear))) {
      out.push({ code: digits.join(''), start, end, alnum: false, yearLike: false });
      continue;
    }
    // `337-1337`, `1337 337`: a 3+4 or 4+3 pair is also a local phone number, so only a code right after a keyword.
    if (!plus && uniform && group.length === 2 && total === 7 && Math.abs(digits[0].length - digits[1].length) === 1) {
      out.push({ code: digits.join(''), start, end, alnum: false, yearLike: false, tight: true });
      if (sep === '-') continue;
    }
    const onlySoft = seps.every((x) => SOFT_SEPARATORS.has(x));
    if (onlySoft && !plus && total <= MAX_CODE_DIGITS) {
      // Separate numbers that happen to be written next to each other ("4821 10").
      for (const g of group) {
        const d = s.slice(g.start, g.end);
        if (d.length >= MIN_CODE_DIGITS && d.length <= MAX_CODE_DIGITS) out.push({ code: d, start: g.start, end: g.end, alnum: false, yearLike: isYear(d) });
      }
    }
    // Otherwise a phone number, date, time, amount, version or address: no candidate.
  }
  return out;
}

/**
 * Words of letters only, in one case (`QGFDAE`, `mifsuc`), that could be codes: tight, and the
 * binding asks more of them (see lettersAfterLabel).
 */
function letterCandidates(s: string, runs: Run[], keywords: Span[]): Candidate[] {
  const out: Candidate[] = [];
  for (const r of runs) {
    if (r.kind !== 'alpha' || r.end - r.start < MIN_ALNUM_CODE || r.end - r.start > MAX_ALNUM_CODE) continue;
    // Tight: only a word a keyword stands just before can come to something (scanText).
    if (!anySpanStartingIn(keywords, r.start - MAX_FILLER, r.start)) continue;
    if (isLetterOrDigit(s[r.start - 1]) || isLetterOrDigit(s[r.end]) || s[r.start - 1] === '_' || s[r.end] === '_') continue;
    const word = s.slice(r.start, r.end);
    if (word !== word.toUpperCase() && word !== word.toLowerCase()) continue;
    out.push({ code: word, start: r.start, end: r.end, alnum: true, yearLike: false, tight: true, letters: true });
  }
  return out;
}

/**
 * Codes written character by character with a space (or hyphen) between each (`7 0 4 1 2 8`,
 * `a u 8 k u f`), joined: tight. Letters need a digit among them; digits alone count up to
 * MAX_CODE_DIGITS.
 */
function spacedCandidates(s: string, runs: Run[]): Candidate[] {
  const out: Candidate[] = [];
  let i = 0;
  while (i < runs.length) {
    if (runs[i].end - runs[i].start !== 1) { i++; continue; }
    const sep = s[runs[i].end];
    let j = i + 1;
    if (sep === ' ' || sep === '-') {
      while (j < runs.length && runs[j].end - runs[j].start === 1 && runs[j].start === runs[j - 1].end + 1 && s[runs[j - 1].end] === sep) j++;
    }
    const chain = runs.slice(i, j);
    i = j;
    const code = chain.map((r) => s[r.start]).join('');
    const letters = /[a-z]/i.test(code);
    if (chain.length < MIN_CODE_DIGITS || !/[0-9]/.test(code) || chain.length > (letters ? MAX_ALNUM_CODE : MAX_CODE_DIGITS)) continue;
    const start = chain[0].start;
    const end = chain[chain.length - 1].end;
    if (isLetterOrDigit(s[start - 1]) || isLetterOrDigit(s[end])) continue;
    out.push({ code, start, end, alnum: letters, yearLike: false, tight: true });
  }
  return out;
}

/** Alphanumeric words (letters and digits) that could be codes, hyphen groups joined (`A7K-9PX`). */
function alnumCandidates(s: string, runs: Run[]): Candidate[] {
  const out: Candidate[] = [];
  for (let i = 0; i < runs.length; i++) {
    const r = runs[i];
    if (r.kind === 'alpha') continue;
    let end = r.end;
    let code = s.slice(r.start, r.end);
    let k = i;
    // Join `ABC-123` style groups of equal length.
    while (k + 1 < runs.length && s[runs[k].end] === '-' && runs[k + 1].start === runs[k].end + 1 && runs[k + 1].end - runs[k + 1].start === r.end - r.start && r.end - r.start >= 3 && r.end - r.start <= 4 && runs[k + 1].kind !== 'alpha') {
      k++;
      code += s.slice(runs[k].start, runs[k].end);
      end = runs[k].end;
    }
    const hasDigit = /[0-9]/.test(code);
    const hasLetter = /[a-z]/i.test(code);
    if (k === i && r.kind !== 'alnum') continue;
    if (!hasDigit || !hasLetter) continue;
    if (code.length < MIN_ALNUM_CODE || code.length > MAX_ALNUM_CODE) continue;
    // Words glued to other word characters (non-ASCII letters, `_` of an identifier) are not codes.
    if (isLetterOrDigit(s[r.start - 1]) || isLetterOrDigit(s[end]) || s[r.start - 1] === '_' || s[end] === '_') continue;
    out.push({ code, start: r.start, end, alnum: true, yearLike: false });
    i = k;
  }
  return out;
}

// ---------------------------------------------------------------- rejection

function nextWord(lower: string, at: number): string {
  let s = at;
  while (s < lower.length && s - at < 4 && (lower[s] === ' ' || lower[s] === '\u00a0')) s++;
  let e = s;
  while (e < lower.length && e - s < 40 && isLetterOrDigit(lower[e])) e++;
  if (e === s && s < lower.length) return lower[s];
  return lower.slice(s, e);
}

/** Why a number is not a code (a label, money, a unit, a postcode…), or undefined when it may be. */
function rejection(text: string, lower: string, c: Candidate, keywords: Span[], lineStarts: number[]): string | undefined {
  const ls = lineStarts[lineIndexAt(lineStarts, c.start)];
  const before = text.slice(Math.max(ls, c.start - 6), c.start);
  if (before.endsWith('#') || before.endsWith('# ')) return 'reference or colour';
  // `**** 4821`, `•••• 4821`, `DE12…4711`; but `**482913**` is Markdown bold.
  if (/(?:[*•●…]|\.\.\.)\s?$/.test(before) && text[c.end] !== '*') return 'masked number';
  // `603799*1234`: the visible head of a masked card number.
  if (text[c.end] === '*' && isAsciiDigit(text.charCodeAt(c.end + 1))) return 'masked number';
  // `اول0000`: digits glued to a letter of a script that spaces its words belong to that word.
  // (ASCII letters glued to digits already make one word of letters and digits, or a tail such as `1337-1337XXX`.)
  const glued = (ch: string | undefined): boolean => ch !== undefined && ch.charCodeAt(0) > 127 && SPACED_SCRIPT_LETTER.test(ch);
  if (!c.alnum && (glued(text[c.start - 1]) || glued(text[c.end]))) return 'part of a word';
  const b2 = before.replace(/\s+$/, '');
  if (CURRENCY_PREFIX.has(b2[b2.length - 1] ?? '')) return 'money';
  if (/(?:^|[^a-z])(?:eur|usd|gbp|chf|brl|jpy|cny|krw|rmb)\s?$/i.test(before)) return 'money';
  const after = lower.slice(c.end, c.end + 12);
  const nxt = nextWord(lower, c.end);
  if (UNIT_SUFFIXES.has(nxt) || UNIT_SUFFIXES.has(after[0] ?? '')) return 'quantity, amount or date';
  if (!c.alnum && c.code.length <= 5 && /^[.,][0-9]{2}(?![0-9])/.test(after)) return 'amount';
  // Copyright years and ranges.
  const back = lower.slice(Math.max(0, c.start - 14), c.start);
  if (c.yearLike && (back.includes('©') || back.includes('(c)') || back.includes('copyright'))) return 'copyright year';
  // A label shortly before the number on its line, with no keyword in between.
  for (const l of labelsStartingIn(lower, c.start - LABEL_REACH - 40, c.start)) {
    if (l.end > c.start || l.end < Math.max(ls, c.start - LABEL_REACH)) continue;
    if (spansStartingIn(keywords, l.end, c.start).some((k) => k.end <= c.start)) continue;
    // The label names this number only if nothing but a few words stands between them
    // ("Order number: 123", "card ending in 4821"), not another number ("order 12345 is 482913").
    const between = text.slice(l.end, c.start);
    // A clause break ends the label: "Dear Customer, 4829 is your OTP".
    if (/[0-9,;!?]|\.\s/.test(between) || wordsBetween(between).length > 3) continue;
    return 'labelled number';
  }
  if (!c.alnum) {
    // Uppercase state or register abbreviation before it: `CA 94043`, `NSW 2000`, `HRB 183920`, `UA 1532`.
    const m = /(?:^|[^\p{L}])(\p{Lu}{2,3}) $/u.exec(text.slice(Math.max(ls, c.start - 5), c.start));
    if (m && !spansStartingIn(keywords, c.start - 5, c.start).some((k) => k.end === c.start - 1)) return 'postcode or register number';
    // Street number: `1600 Amphitheatre Parkway`, `548 Market St`.
    const words = text.slice(c.end, c.end + 48).split('\n')[0].split(/[\s,]+/).filter((w) => w !== '');
    if (words.length > 0 && (UPPER.test(words[0][0]) || /^[0-9]+(?:st|nd|rd|th)$/i.test(words[0]))) {
      for (const w of words.slice(0, 4)) if (STREET_WORDS.has(w.toLowerCase().replace(/\.$/, ''))) return 'street address';
      // European postcode: `, 10117 Berlin`, `· 80331 München`.
      const lead = text.slice(Math.max(ls, c.start - 2), c.start);
      const city = words[0];
      const place = text.slice(c.end, c.end + 48).split(/[\n,·|.]/)[0].trim().split(/\s+/);
      const leadOk = lead === ', ' || lead === '· ' || lead === '| ' || c.start === ls || /[A-Z]-$/.test(lead);
      if (leadOk && place.length <= 3 && city.length > 1 && LOWER.test(city[1] ?? '')) return 'postcode';
    }
  }
  return undefined;
}

// ---------------------------------------------------------------- numbers named as something else

/** The word ending shortly before `at` (skipping spaces and a colon), with its start. */
function wordBefore(lower: string, at: number): [string, number] {
  let e = at;
  while (e > 0 && at - e < 4 && (lower[e - 1] === ' ' || lower[e - 1] === ':' || lower[e - 1] === '\u00a0')) e--;
  let s = e;
  while (s > 0 && e - s < 40 && isLetterOrDigit(lower[s - 1])) s--;
  return [lower.slice(s, e), s];
}

/** The word starting shortly after `at` (skipping spaces), with its end. */
function wordAfter(lower: string, at: number): [string, number] {
  let s = at;
  while (s < lower.length && s - at < 4 && (lower[s] === ' ' || lower[s] === '\u00a0')) s++;
  let e = s;
  while (e < lower.length && e - s < 40 && isLetterOrDigit(lower[e])) e++;
  return [lower.slice(s, e), e];
}

/** Keywords that are single words, looked for inside longer words ("barcode" holds "code"). */
const KEYWORD_STEMS = WORD_KEYWORDS.filter((k) => k.length >= 3 && !/[\s-]/.test(k));
/** Starts of compounds that still name a one-time code ("VerifyCode", "verifikasiekode", "authcode"). */
const CODE_COMPOUND_STARTS = ['verif', 'auth', 'confirm', 'secur', 'login', 'signin', 'access', 'activ'];

/**
 * Whether a noun merely contains a keyword: "barcode", "unicode", "vscode", "codex", "footpath"
 * hold "code" or "otp" but name something else. Compounds of a verification word stay keywords.
 */
function merelyContainsKeyword(word: string): boolean {
  if (KEYWORD_STEMS.includes(word) || CODE_COMPOUND_STARTS.some((p) => word.startsWith(p))) return false;
  return KEYWORD_STEMS.some((k) => word.includes(k));
}

/**
 * Whether a number no keyword binds is named as something else: "your vscode is: 123456", "barcode 123456",
 * "some barcode is 123456", "123456 is your footpath" (a copula ties it to a noun that merely
 * contains a keyword). The sole-number rule skips it. A noun of no known language is left
 * alone: "verifikasiekode is: 123456" may well be a code.
 */
function namedAsOther(lower: string, c: Candidate): boolean {
  const [w1, w1Start] = wordBefore(lower, c.start);
  if (COPULAS.has(w1) && merelyContainsKeyword(wordBefore(lower, w1Start)[0])) return true;
  // Right after such a word and a space, the number is what the word names ("barcode 123456");
  // after a colon it may be the value of a label in an unknown language, so it is left alone.
  if (lower[c.start - 1] === ' ' && w1Start + w1.length === c.start - 1 && merelyContainsKeyword(w1)) return true;
  let [w2, at] = wordAfter(lower, c.end);
  if (!COPULAS.has(w2)) return false;
  for (let i = 0; i < 2; i++) {
    [w2, at] = wordAfter(lower, at);
    if (!DETERMINERS.has(w2)) break;
  }
  return merelyContainsKeyword(w2);
}

// ---------------------------------------------------------------- binding to keywords

function wordsBetween(s: string): string[] {
  return s.split(/[\s:：,，、.。!！?？()（）[\]【】「」『』<>《》"'“”‘’*=→»|~—–-]+/u).filter((w) => w !== '');
}

/** Text between a keyword and the code after it is filler: at most `maxOthers` words that are not, no sentence end. */
function fillerOnly(between: string, maxOthers = 1): boolean {
  if (between.length > MAX_FILLER || between.split('\n').length > 3) return false;
  if (/[.!?](?:\s|$)|[。！？]/u.test(between)) return false;
  let others = 0;
  for (const w of wordsBetween(between)) {
    if (FILLER_WORDS.has(w.toLowerCase())) continue;
    // CJK filler glued together: 为, 是, は, です, 는…
    if (/^[为為是はのを를을:]+$/u.test(w)) continue;
    if (++others > maxOthers) return false;
  }
  return true;
}

/** Text between a code and a keyword after it starts with a verb and is short ("is your Google verification"). */
function verbThenKeyword(between: string, alnum: boolean): boolean {
  if (between.length > MAX_VERB_GAP || between.includes('\n')) return false;
  const trimmed = between.replace(/^[\s,、，:：-]+/u, '');
  const words = trimmed.split(/[\s,、，]+/u).filter((w) => w !== '');
  if (words.length > 5) return false;
  // A word of letters and digits right before a keyword is its modifier, a brand ("your 98point6 security code").
  if (words.length === 0) return !alnum;
  const first = words[0].toLowerCase();
  if (BEFORE_VERBS.has(first)) return true;
  // Japanese/Korean particles glued to the next word: `は、お客様の`, `를`.
  return BEFORE_VERBS.has(first[0]);
}

/** Spans (sorted by start) whose start lies in [from, to), found by binary search. */
function spansStartingIn(spans: Span[], from: number, to: number): Span[] {
  const out: Span[] = [];
  for (let i = firstStartingFrom(spans, from); i < spans.length && spans[i].start < to; i++) out.push(spans[i]);
  return out;
}

/** Whether any of the sorted `spans` starts in [from, to). */
function anySpanStartingIn(spans: Span[], from: number, to: number): boolean {
  const i = firstStartingFrom(spans, from);
  return i < spans.length && spans[i].start < to;
}

/** Index of the first of the sorted `spans` starting at or after `from`. */
function firstStartingFrom(spans: Span[], from: number): number {
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (spans[mid].start < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function lineIndexAt(lineStarts: number[], at: number): number {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid] <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Words by which a line announces the code on the lines below it. */
const INTRODUCERS = ['below', 'following', 'here is', "here's", 'unten', 'folgende', 'ci-dessous', 'suivant', 'abajo', 'siguiente', 'abaixo', 'seguinte', '以下', '下面', '如下', '아래', '다음'];

/** Characters that may surround a code standing alone on its line. */
const STANDALONE_WRAPPERS = new Set([...' \t\u00a0[]()【】「」《》<>"\'*`']);

/** Whether text from `from` (inclusive) stepping by `step` to `to` (exclusive) holds only wrapper characters. */
function onlyWrappers(text: string, from: number, to: number, step: 1 | -1): boolean {
  for (let i = from; i !== to; i += step) if (!STANDALONE_WRAPPERS.has(text[i])) return false;
  return true;
}

/**
 * A word of letters is a code only as the value of a label (`verification code: QGFDAE`,
 * `验证码: QGFDAE`): a colon and nothing else between. Upper case sets it off from prose; a
 * lower-case word counts only after a label in capitals (`PASSCODE: mifsuc`), since
 * "code: expired" is prose.
 */
function lettersAfterLabel(text: string, k: Span, c: Candidate): boolean {
  if (k.end > c.start || text.slice(k.end, c.start).trim() !== ':') return false;
  // "Verification: PASSED", "2FA: ENABLED" report a state; a code follows a noun such as "code" or "password".
  if (STATE_KEYWORDS.has(text.slice(k.start, k.end).toLowerCase())) return false;
  if (c.code === c.code.toUpperCase()) return true;
  const label = text.slice(k.start, k.end);
  return label === label.toUpperCase() && label !== label.toLowerCase();
}

/** Keywords that name a check rather than a code: after them a word of letters is a state. */
const STATE_KEYWORDS = new Set([
  'verification', 'verify', 'authentication', 'one-time', 'one time', '2fa', 'two-factor', 'vérification',
  'authentification', 'verificación', 'verificação', 'usage unique', 'un solo uso',
]);

interface Binding {
  score: number;
  reason: CodeReason;
}

function bindToKeyword(text: string, c: Candidate, keywords: Span[], lineStarts: number[]): Binding | undefined {
  let best: Binding | undefined;
  const take = (score: number, reason: CodeReason): void => {
    if (!best || score > best.score) best = { score, reason };
  };
  const line = lineIndexAt(lineStarts, c.start);
  const lineEnd = line + 1 < lineStarts.length ? lineStarts[line + 1] - 1 : text.length;
  const standalone = onlyWrappers(text, c.start - 1, lineStarts[line] - 1, -1) && onlyWrappers(text, c.end, lineEnd, 1);
  if (c.tight) {
    // Only right after a keyword, with filler words at most ("رمز 1122334455", "code: 337-1337").
    for (const k of spansStartingIn(keywords, c.start - MAX_FILLER, c.start)) {
      if (c.letters && !lettersAfterLabel(text, k, c)) continue;
      if (k.end <= c.start && fillerOnly(text.slice(k.end, c.start), 0)) take(SCORE.keywordAfter - Math.min(5, Math.floor((c.start - k.end) / 10)), 'keyword');
    }
    return best;
  }
  for (const k of spansStartingIn(keywords, c.start - KEYWORD_REACH_BACK, c.end + NEAR_BEFORE_KEYWORD + 1)) {
    if (k.end <= c.start) {
      const gap = c.start - k.end;
      if (gap <= MAX_FILLER && fillerOnly(text.slice(k.end, c.start))) {
        take(SCORE.keywordAfter - Math.min(5, Math.floor(gap / 10)), 'keyword');
      } else if (standalone && gap <= KEYWORD_REACH_BACK && line - lineIndexAt(lineStarts, k.start) <= LINE_BINDING_LINES) {
        // The keyword's line introduces what follows ("…code below", "…code:"): a firm binding.
        const kLine = lineIndexAt(lineStarts, k.start);
        const kLineEnd = kLine + 1 < lineStarts.length ? lineStarts[kLine + 1] - 1 : text.length;
        const kLineText = text.slice(Math.max(lineStarts[kLine], k.start - 200), Math.min(kLineEnd, k.end + 300));
        const introduces = /[:：]\s*$/.test(kLineText) || INTRODUCERS.some((w) => kLineText.toLowerCase().includes(w));
        if (introduces) take(SCORE.keywordLine, 'keyword');
        else if (!c.alnum) take(SCORE.keywordLineLoose, 'keyword');
      } else if (!c.alnum && gap <= NEAR_AFTER_KEYWORD) {
        take(Math.max(SCORE.keywordNearMin, SCORE.keywordNear - Math.floor(gap / 4)), 'keyword-near');
      }
    } else if (k.start >= c.end) {
      const gap = k.start - c.end;
      if (gap <= MAX_VERB_GAP && verbThenKeyword(text.slice(c.end, k.start), c.alnum)) {
        take(SCORE.keywordBefore - Math.min(5, Math.floor(gap / 10)), 'keyword');
      } else if (!c.alnum && gap <= NEAR_BEFORE_KEYWORD) {
        take(Math.max(SCORE.keywordNearMin, SCORE.keywordNear - 5 - Math.floor(gap / 4)), 'keyword-near');
      }
    }
  }
  return best;
}

// ---------------------------------------------------------------- origin-bound

const ORIGIN_BOUND_RE = /^@([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?) #([^\s#@%]{1,32})(?: [@%][^\s]+){0,2}$/i;

/** The code of an origin-bound last line (`@example.com #123456`), if the text ends with one. */
export function originBoundCode(text: string): string | undefined {
  const trimmed = text.trimEnd();
  const nl = trimmed.lastIndexOf('\n');
  const last = trimmed.slice(nl + 1).trim();
  if (last.length > MAX_ORIGIN_LINE) return undefined;
  return ORIGIN_BOUND_RE.exec(last)?.[2];
}

// ---------------------------------------------------------------- scanning

/** A whole message that is one word of letters and digits, as long as an alphanumeric code. */
const WHOLE_MESSAGE_CODE = new RegExp(`^[A-Za-z0-9]{${MIN_ALNUM_CODE},${MAX_ALNUM_CODE}}$`);

interface Found {
  code: string;
  score: number;
  reason: CodeReason;
  order: number;
}

interface Scan {
  /** Candidates bound to keywords. */
  bound: Found[];
  /** Digit codes not rejected, whatever their binding. */
  plainNumbers: string[];
  /** Those of plainNumbers that no keyword binds and the text names as something else. */
  namedNumbers: Set<string>;
}

function scanText(raw: string, orderBase: number): Scan {
  const text = prepare(raw);
  const lower = lowerAligned(text);
  const keywords = findKeywords(text, lower);
  const runs = asciiRuns(text);
  const lineStarts = [0];
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', nl + 1)) lineStarts.push(nl + 1);
  // Words of letters and spelled-out codes are tight shapes only: with no keyword they come to nothing.
  const tightOnly = keywords.length > 0 ? [...letterCandidates(text, runs, keywords), ...spacedCandidates(text, runs)] : [];
  const candidates = [...numericCandidates(text, runs), ...alnumCandidates(text, runs), ...tightOnly];
  const bound: Found[] = [];
  const plainNumbers: string[] = [];
  const namedNumbers = new Set<string>();
  for (const c of candidates) {
    // A tight shape counts only when a keyword stands just before it (bindToKeyword), and never
    // as a plain number: without one in reach it can come to nothing, so it is not weighed. Most
    // words of prose are such candidates (letterCandidates), and weighing each cost most of a scan.
    if (c.tight && !anySpanStartingIn(keywords, c.start - MAX_FILLER, c.start)) continue;
    if (rejection(text, lower, c, keywords, lineStarts) !== undefined) continue;
    const binding = bindToKeyword(text, c, keywords, lineStarts);
    if (c.yearLike && (!binding || binding.reason !== 'keyword')) continue;
    // A tight shape (a 10-digit account number) is not a number the sole-number rule weighs.
    if (!c.alnum && !c.tight) plainNumbers.push(c.code);
    if (!c.alnum && !c.tight && !binding && namedAsOther(lower, c)) namedNumbers.add(c.code);
    if (binding) bound.push({ code: c.code, score: binding.score, reason: binding.reason, order: orderBase + c.start });
  }
  return { bound, plainNumbers, namedNumbers };
}

/**
 * Ranked one-time-code candidates of a message, best first (the first is what "Copy code"
 * copies). Empty when the message has no code.
 */
export function extractCodes(input: CodeSource): CodeCandidate[] {
  const found: Found[] = [];
  const bodies: string[] = [];
  if (input.text) bodies.push(input.text);
  if (input.html) bodies.push(htmlToText(input.html));

  for (const body of bodies) {
    const code = originBoundCode(body);
    if (code !== undefined) found.push({ code, score: SCORE.originBound, reason: 'origin-bound', order: -1 });
  }

  const subject = input.subject ? scanText(input.subject.replace(/\n/g, ' '), 0) : undefined;
  if (subject) found.push(...subject.bound);
  const bodyScans = bodies.map((b, i) => scanText(b, (i + 1) * (MAX_SCAN_CHARS + 1)));
  for (const s of bodyScans) found.push(...s.bound);

  if (subject && subject.bound.length === 0) {
    const distinct = new Set(subject.plainNumbers);
    if (distinct.size === 1) found.push({ code: subject.plainNumbers[0], score: SCORE.subject, reason: 'subject', order: 0 });
  }

  const shortMessage = input.kind === 'sms' || (input.kind === undefined && !input.html && bodies.length === 1 && bodies[0].trim().length <= SHORT_MESSAGE_MAX);
  if (shortMessage && bodyScans.length > 0 && found.length === 0) {
    // A message that is nothing but one word of letters and digits in one case (`7K4QW2`) is that code.
    const whole = bodies[0].trim();
    if (WHOLE_MESSAGE_CODE.test(whole) && /[0-9]/.test(whole) && /[a-z]/i.test(whole) && (whole === whole.toUpperCase() || whole === whole.toLowerCase())) {
      found.push({ code: whole, score: SCORE.soleNumber, reason: 'sole-number', order: 0 });
    }
    const distinct = new Set(bodyScans[0].plainNumbers);
    if (distinct.size === 1 && !bodyScans[0].namedNumbers.has(bodyScans[0].plainNumbers[0])) found.push({ code: bodyScans[0].plainNumbers[0], score: SCORE.soleNumber, reason: 'sole-number', order: 0 });
  }

  const byCode = new Map<string, Found>();
  for (const f of found) {
    const prev = byCode.get(f.code);
    if (!prev || f.score > prev.score || (f.score === prev.score && f.order < prev.order)) byCode.set(f.code, f);
  }
  return [...byCode.values()]
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .map(({ code, score, reason }) => ({ code, score, reason }));
}

/** The code "Copy code" copies, or undefined when the message has none. */
export function bestCode(input: CodeSource): string | undefined {
  return extractCodes(input)[0]?.code;
}
