// The one-answer corpus: messages written for this test, each with the one code and
// the one link a person must click that every surface must answer. Several languages, click
// trackers, several links, several numbers, SMS and email, text-only and HTML-only.
// test/server/one-answer.test.ts runs it through every surface that answers on Node, and
// test/integration/oneAnswer.test.ts through the extension's Copy commands. A new surface (MCP
// tools, provider APIs, search by code) joins by adding one entry to those tests' SURFACES.
import MailComposer from 'nodemailer/lib/mail-composer';

export interface CorpusMessage {
  /** Unique; also the start of the inbox name the tests deliver it to. */
  name: string;
  /** An SMS: delivered to a phone-number inbox. */
  sms?: boolean;
  from: string;
  subject: string;
  text?: string;
  html?: string;
  headers?: Record<string, string>;
  /** The one answer: the code, and the URL of the link a person must click (verify, else sign-in, else reset). */
  expect: { code?: string; link?: string };
}

const FOOTER_TEXT = 'Acme Inc., 1600 Main St, Springfield IL 62701. © 2026 Acme. Call 1-800-555-0199.';
const FOOTER_HTML =
  '<p style="color:#888">Acme Inc., 1600 Main St, Springfield IL 62701 · © 2026<br>' +
  '<a href="https://acme.test/preferences?u=77">Manage preferences</a> · <a href="https://acme.test/u/77?list=news">Unsubscribe</a> · ' +
  '<a href="https://acme.test/view/77?campaign=verify-launch">View this email in your browser</a></p>' +
  '<img src="https://t.acme.test/open.gif?id=77" width="1" height="1" alt="">';
const UNSUB = { 'List-Unsubscribe': '<https://acme.test/u/77?list=news>, <mailto:unsub@acme.test>' };
const TRACK = (inner: string): string => `https://click.acme.test/ls/click?upn=${encodeURIComponent(inner)}`;

export const CORPUS: readonly CorpusMessage[] = [
  {
    name: 'en-code-links',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Verify your email',
    headers: UNSUB,
    text: `Your verification code is 482913.\nOr open https://acme.test/verify?token=V1a\n${FOOTER_TEXT}`,
    html: `<p>Your verification code is <b>482913</b>.</p><p><a href="https://click.acme.test/ls/click?upn=promo1">Our offers</a></p><p><a href="https://acme.test/verify?token=V1a">Verify email</a></p>${FOOTER_HTML}`,
    expect: { code: '482913', link: 'https://acme.test/verify?token=V1a' },
  },
  {
    name: 'reset-before-verify',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Welcome to Acme',
    text: 'Forgot your old password? Reset it: https://acme.test/reset?t=R2b\nVerify your email: https://acme.test/verify?t=V2b',
    html: '<p><a href="https://acme.test/reset?t=R2b">Reset your password</a></p><p><a href="https://acme.test/verify?t=V2b">Verify your email</a></p>',
    expect: { link: 'https://acme.test/verify?t=V2b' },
  },
  {
    name: 'de-code',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Bitte bestätige deine E-Mail-Adresse',
    headers: UNSUB,
    text: `Hallo! Dein Bestätigungscode lautet 739201. Er ist 15 Minuten gültig.\n${FOOTER_TEXT}`,
    html: `<p>Hallo!</p><p>Dein Bestätigungscode lautet <strong>739201</strong>. Er ist 15 Minuten gültig.</p><p><a href="${TRACK('https://acme.test/de/bestaetigen?k=D3')}">E-Mail-Adresse bestätigen</a></p>${FOOTER_HTML}`,
    expect: { code: '739201', link: TRACK('https://acme.test/de/bestaetigen?k=D3') },
  },
  {
    name: 'fr-code',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Confirmez votre adresse',
    html: `<p>Bonjour,</p><p>Votre code de vérification est 551903.</p><p><a href="https://acme.test/fr/c/3f9?x=1">Vérifier mon adresse</a></p>${FOOTER_HTML}`,
    headers: UNSUB,
    expect: { code: '551903', link: 'https://acme.test/fr/c/3f9?x=1' },
  },
  {
    name: 'es-code',
    from: 'Acme <hola@acme.test>',
    subject: 'Tu código de Acme',
    text: `Tu código de verificación es 208417. Pedido 2026-1187.\nConfirmar correo: https://acme.test/es/confirmar?t=E5\n${FOOTER_TEXT}`,
    expect: { code: '208417', link: 'https://acme.test/es/confirmar?t=E5' },
  },
  {
    name: 'pt-code',
    from: 'Acme <ola@acme.test>',
    subject: 'Ative sua conta',
    html: '<p>Olá! Seu código é <b>663012</b>.</p><p><a href="https://acme.test/pt/a/9?z=P6">Ativar conta</a></p><p><a href="https://acme.test/pt/ajuda">Central de ajuda</a></p>',
    expect: { code: '663012', link: 'https://acme.test/pt/a/9?z=P6' },
  },
  {
    name: 'it-code',
    from: 'Acme <ciao@acme.test>',
    subject: 'Conferma il tuo indirizzo',
    text: 'Il tuo codice è 918273.\nConferma indirizzo: https://acme.test/it/k/I7\nAssistenza: +39 02 1234 5678',
    html: '<p>Il tuo codice è 918273.</p><p><a href="https://acme.test/it/k/I7">Conferma indirizzo</a></p><p>Assistenza: +39 02 1234 5678</p>',
    expect: { code: '918273', link: 'https://acme.test/it/k/I7' },
  },
  {
    name: 'nl-code',
    from: 'Acme <hallo@acme.test>',
    subject: 'Bevestig je e-mailadres',
    html: `<p>Je verificatiecode is 447120.</p><p><a href="https://acme.test/nl/b?t=N8">Bevestig je e-mailadres</a></p>${FOOTER_HTML}`,
    headers: UNSUB,
    expect: { code: '447120', link: 'https://acme.test/nl/b?t=N8' },
  },
  {
    name: 'ja-code',
    from: 'Acme <info@acme.test>',
    subject: 'メールアドレスの確認',
    html: '<p>認証コード: 305918</p><p><a href="https://acme.test/ja/x?t=J9">メールアドレスを確認する</a></p><p><a href="https://acme.test/ja/help">ヘルプ</a></p>',
    expect: { code: '305918', link: 'https://acme.test/ja/x?t=J9' },
  },
  {
    name: 'zh-code',
    from: 'Acme <info@acme.test>',
    subject: '验证您的邮箱',
    text: '您的验证码是 620394，10 分钟内有效。\n验证邮箱：https://acme.test/zh/y?t=Z10',
    expect: { code: '620394', link: 'https://acme.test/zh/y?t=Z10' },
  },
  {
    name: 'ko-code',
    from: 'Acme <info@acme.test>',
    subject: '이메일 인증',
    html: '<p>인증번호 [774215]를 입력하세요.</p><p><a href="https://acme.test/ko/z?t=K11">이메일 인증하기</a></p>',
    expect: { code: '774215', link: 'https://acme.test/ko/z?t=K11' },
  },
  {
    name: 'magic-login',
    from: 'Acme <login@acme.test>',
    subject: 'Your sign-in link',
    headers: UNSUB,
    html: `<p>Click below to sign in. The link expires in 15 minutes.</p><p><a href="https://acme.test/auth/m?t=M12">Sign in to Acme</a></p>${FOOTER_HTML}`,
    expect: { link: 'https://acme.test/auth/m?t=M12' },
  },
  {
    name: 'reset-only',
    from: 'Acme <security@acme.test>',
    subject: 'Reset your password',
    text: 'Someone asked to reset your password.\nReset it here: https://acme.test/account/reset-password?t=R13\nIf it was not you, ignore this email.',
    expect: { link: 'https://acme.test/account/reset-password?t=R13' },
  },
  {
    name: 'newsletter',
    from: 'Acme News <news@acme.test>',
    subject: 'Save 20% this week',
    headers: UNSUB,
    html: `<h1>Spring sale</h1><p>Save 20% on 1500 products until 30 April 2026.</p><p><a href="${TRACK('https://acme.test/shop?c=spring')}">Shop now</a></p>${FOOTER_HTML}`,
    expect: {},
  },
  {
    name: 'tracker-text',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Confirm your account',
    html: '<p>Thanks for signing up.</p><p><a href="https://u123.ct.sendgrid.net/ls/click?upn=aGVsbG8td29ybGQtdHJhY2tlcg">Verify email address</a></p><p><a href="https://u123.ct.sendgrid.net/ls/click?upn=b3RoZXI">Read our blog</a></p>',
    expect: { link: 'https://u123.ct.sendgrid.net/ls/click?upn=aGVsbG8td29ybGQtdHJhY2tlcg' },
  },
  {
    name: 'tracker-inner',
    from: 'Acme <no-reply@acme.test>',
    subject: 'One more step',
    html: `<p>One more step to finish.</p><p><a href="https://click.acme.test/track?url=${encodeURIComponent('https://acme.test/account/verify?t=T16')}">Click here</a></p>`,
    expect: { link: `https://click.acme.test/track?url=${encodeURIComponent('https://acme.test/account/verify?t=T16')}` },
  },
  {
    name: 'text-only-confirm',
    from: 'noreply@acme.test',
    subject: 'Please confirm',
    text: 'Welcome!\n\nConfirm your address: https://acme.test/confirm?token=C17.\n\nOur blog: https://acme.test/blog',
    expect: { link: 'https://acme.test/confirm?token=C17' },
  },
  {
    name: 'unsub-in-body',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Activate your account',
    headers: { 'List-Unsubscribe': '<https://acme.test/stop?id=18>' },
    html: '<p><a href="https://acme.test/stop?id=18">Click here</a> to stop these emails.</p><p><a href="https://acme.test/act/18?t=A18">Activate account</a></p>',
    expect: { link: 'https://acme.test/act/18?t=A18' },
  },
  {
    name: 'view-and-prefs-only',
    from: 'Acme <news@acme.test>',
    subject: 'Your March statement is ready',
    headers: UNSUB,
    html: `<p>Your statement for March 2026 is ready: 3 orders, 142.50 EUR.</p>${FOOTER_HTML}`,
    expect: {},
  },
  {
    name: 'sms-code',
    sms: true,
    from: '15550001111',
    subject: 'SMS',
    text: 'Your Acme code is 123456. Don\u2019t share it with anyone.',
    expect: { code: '123456' },
  },
  {
    name: 'sms-code-link',
    sms: true,
    from: '15550001111',
    subject: 'SMS',
    text: 'Acme: your code is 8841, or tap https://acme.test/login/magic?t=S21 to sign in.',
    expect: { code: '8841', link: 'https://acme.test/login/magic?t=S21' },
  },
  {
    name: 'sms-es',
    sms: true,
    from: '15550002222',
    subject: 'SMS',
    text: 'Tu código de Acme es 904512. Válido 10 min.',
    expect: { code: '904512' },
  },
  {
    name: 'sms-distractor',
    sms: true,
    from: '15550003333',
    subject: 'SMS',
    text: 'Acme: 671204 is your verification code. Valid for 10 min. Help: 18005550199',
    expect: { code: '671204' },
  },
  {
    name: 'subject-code',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Your code: 3317',
    html: '<p>Enter the code from the subject line to continue.</p>',
    expect: { code: '3317' },
  },
  {
    name: 'origin-bound',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Acme sign-in',
    text: 'Your Acme code is 135790.\n\n@acme.test #135790',
    expect: { code: '135790' },
  },
  {
    name: 'code-with-address',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Your login code',
    text: `Your Acme login code is 640192. If you did not request it, ignore this email.\n${FOOTER_TEXT}`,
    expect: { code: '640192' },
  },
  {
    name: 'html-only-big-code',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Finish signing up',
    html: '<table><tr><td>Your verification code</td></tr><tr><td style="font-size:32px;letter-spacing:6px">906132</td></tr><tr><td>Expires in 10 minutes.</td></tr></table>',
    expect: { code: '906132' },
  },
  {
    name: 'many-links',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Almost there',
    headers: UNSUB,
    text: 'Forgot password? https://acme.test/forgot\nVerify: https://acme.test/v/M29\nHelp: https://acme.test/help',
    html: `<p><a href="https://acme.test/forgot">Forgot password?</a> <a href="https://acme.test/help">Help</a></p><p><a href="https://acme.test/v/M29">Verify my email</a></p><p><a href="https://acme.test/v/M29">https://acme.test/v/M29</a></p>${FOOTER_HTML}`,
    expect: { link: 'https://acme.test/v/M29' },
  },
  {
    name: 'reset-then-login',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Trouble signing in?',
    html: '<p><a href="https://acme.test/pw/reset?t=R30">Reset password</a></p><p><a href="https://acme.test/auth/link?t=L30">Log in with a magic link</a></p>',
    expect: { link: 'https://acme.test/auth/link?t=L30' },
  },
  {
    name: 'reset-code',
    from: 'Acme <security@acme.test>',
    subject: 'Password reset',
    html: '<p>Your password reset code is <b>370021</b>.</p><p><a href="https://acme.test/pw/new?t=R31">Choose a new password</a></p>',
    expect: { code: '370021', link: 'https://acme.test/pw/new?t=R31' },
  },
  {
    name: 'image-button',
    from: 'Acme <no-reply@acme.test>',
    subject: 'Confirm \u202Egnp.exe\u202C your address',
    html: '<p><a href="https://acme.test/go/I32"><img src="https://acme.test/btn.png" alt="Confirm email"></a></p>',
    expect: { link: 'https://acme.test/go/I32' },
  },
  {
    name: 'unsubscribe-confirm',
    from: 'Acme News <news@acme.test>',
    subject: 'Sorry to see you go',
    html: '<p><a href="https://acme.test/u/confirm?id=33">Confirm unsubscribe</a></p>',
    expect: {},
  },
  {
    name: 'no-links-no-code',
    from: 'Acme <hello@acme.test>',
    subject: 'Thanks for your order',
    html: '<p>Thanks! Visit <a href="https://acme.test/">acme.test</a> or write to <a href="mailto:help@acme.test">help@acme.test</a>.</p>',
    expect: {},
  },
  {
    name: 'tr-code',
    from: 'Acme <info@acme.test>',
    subject: 'Hesabınızı doğrulayın',
    text: 'Doğrulama kodunuz: 582046\nHesabı doğrula: https://acme.test/tr/verify?t=T34',
    expect: { code: '582046', link: 'https://acme.test/tr/verify?t=T34' },
  },
];

/** The message as the raw bytes a sender delivers, addressed to `to`. */
export function rawOf(m: CorpusMessage, to: string): Promise<Buffer> {
  return new MailComposer({ from: m.from, to, subject: m.subject, text: m.text, html: m.html, headers: m.headers }).compile().build();
}
