// multipart/form-data and URL-encoded forms (Mailgun's API takes both), read by busboy from a
// body already held within the byte budget. A body busboy cannot read is a MultipartError.
import type { IncomingHttpHeaders } from 'node:http';
import busboy from 'busboy';
import { codedError, type CodedError } from '../../../core/errors';

interface FormFile {
  field: string;
  filename: string;
  mimeType: string;
  content: Buffer;
}

export interface ParsedForm {
  /** Fields in the order sent; a name may repeat. */
  fields: Array<[string, string]>;
  files: FormFile[];
}

/** A body busboy cannot read, or one past its limits: its one code. */
export const MultipartError = codedError<'bad_form'>('MultipartError');
export type MultipartError = CodedError<'bad_form'>;

/** Fields and files of one form; more is not a mail. */
const LIMITS = { fields: 10_000, files: 1_000, parts: 11_000, fieldSize: 25 * 1024 * 1024, fieldNameSize: 1024 };

export function parseFormBody(headers: IncomingHttpHeaders, body: Buffer): Promise<ParsedForm> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers, limits: LIMITS, defParamCharset: 'utf8' });
    } catch (e) {
      reject(new MultipartError('bad_form', (e as Error).message));
      return;
    }
    const out: ParsedForm = { fields: [], files: [] };
    let failed: MultipartError | undefined;
    const failWith = (message: string): void => {
      failed ??= new MultipartError('bad_form', message);
    };
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated || info.nameTruncated) failWith(`the field ${JSON.stringify(name.slice(0, 60))} is too large`);
      out.fields.push([name, value]);
    });
    bb.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => failWith(`the file ${JSON.stringify(info.filename ?? field)} is too large`));
      stream.on('close', () => out.files.push({ field, filename: info.filename ?? field, mimeType: info.mimeType, content: Buffer.concat(chunks) }));
    });
    bb.on('fieldsLimit', () => failWith('the form has too many fields'));
    bb.on('filesLimit', () => failWith('the form has too many files'));
    bb.on('partsLimit', () => failWith('the form has too many parts'));
    bb.on('error', (e: Error) => reject(new MultipartError('bad_form', e.message)));
    bb.on('close', () => (failed ? reject(failed) : resolve(out)));
    bb.end(body);
  });
}
