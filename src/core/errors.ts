// The one shape of the project's own errors: a class per module, whose errors carry a `code`
// from a closed set and a message for people, and a static `is(e, code?)` that callers branch
// on. Made by codedError, so each such class is one line where it is declared.

/** An error of a codedError class: `code` says which failure, the message says it in words. */
export interface CodedError<C extends string> extends Error {
  readonly code: C;
}

/** A class made by codedError: `new X(code, message, { cause })`, `X.is(e, code?)`, and `instanceof X`. */
export interface CodedErrorClass<C extends string> {
  new (code: C, message: string, options?: { cause?: unknown }): CodedError<C>;
  /**
   * Whether `e` is an error of this class, and of `code` when one is given. Called on a class
   * that extends this one (`HttpError.is(e)`), it narrows `e` to that class's errors, fields and all.
   */
  is<E extends CodedError<C>>(this: abstract new (...args: never[]) => E, e: unknown, code?: C): e is E;
  readonly prototype: CodedError<C>;
}

/**
 * A class of errors named `name` whose codes are `C`. Declare it with a type of the same name,
 * so both the value and the type read as a class's:
 *
 *     export const StoreError = codedError<StoreErrorCode>('StoreError');
 *     export type StoreError = CodedError<StoreErrorCode>;
 *
 * An error that carries more than a code and a message (an HTTP status, headers) is a class
 * that extends the made one, with a constructor that takes its fields:
 *
 *     export class HttpError extends codedError<HttpErrorCode>('HttpError') {
 *       constructor(readonly status: number, code: HttpErrorCode, message: string) { super(code, message); }
 *     }
 */
export function codedError<C extends string>(name: string): CodedErrorClass<C> {
  const Class = class extends Error {
    readonly code: C;
    constructor(code: C, message: string, options?: { cause?: unknown }) {
      super(message, options);
      this.code = code;
      this.name = name;
    }

    static is(this: unknown, e: unknown, code?: C): e is CodedError<C> {
      // The class it is called on: a subclass's is() is true for that subclass's errors alone.
      const Own = typeof this === 'function' ? this : Class;
      return e instanceof Own && (code === undefined || (e as CodedError<C>).code === code);
    }
  };
  Object.defineProperty(Class, 'name', { value: name });
  // The generic is() of CodedErrorClass is this one's, typed by the class it is called on.
  return Class as unknown as CodedErrorClass<C>;
}
