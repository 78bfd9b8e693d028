// `application/x-www-form-urlencoded` bodies, read strictly: the Twilio Messages API and
// Twilio's inbound webhook send them. A body that is not a form (bad percent-encoding, bytes
// that are not UTF-8) is refused rather than guessed at.
import type { IncomingMessage } from 'node:http';
import { codedError, type CodedError } from '../../../core/errors';

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** The fields of a form in the order sent; a name may repeat. */
export type FormFields = Array<[string, string]>;

type FormErrorCode = 'not_form' | 'bad_encoding';

export const FormError = codedError<FormErrorCode>('FormError');
export type FormError = CodedError<FormErrorCode>;

/** True when the request says its body is a URL-encoded form. */
export function isForm(req: IncomingMessage): boolean {
  return (req.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase() === FORM_TYPE;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function decode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw new FormError('bad_encoding', `the form has a bad percent-encoding in ${JSON.stringify(part.slice(0, 40))}`);
  }
}

/** The fields of a form body; FormError when it cannot be read. */
export function parseForm(body: Buffer): FormFields {
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw new FormError('bad_encoding', 'the form is not UTF-8 text');
  }
  const fields: FormFields = [];
  if (text === '') return fields;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decode(eq < 0 ? pair : pair.slice(0, eq));
    if (name === '') throw new FormError('bad_encoding', 'the form has a field without a name');
    fields.push([name, eq < 0 ? '' : decode(pair.slice(eq + 1))]);
  }
  return fields;
}

/** The first value of a field, or undefined. */
export function field(fields: FormFields, name: string): string | undefined {
  return fields.find(([n]) => n === name)?.[1];
}
