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
  /** Whether `e` is an error of this class, and of `code` when one is given. */
  is(e: unknown, code?: C): e is CodedError<C>;
  readonly prototype: CodedError<C>;
}

/**
 * A class of errors named `name` whose codes are `C`. Declare it with a type of the same name,
 * so both the value and the type read as a class's:
 *
 *     export const StoreError = codedError<StoreErrorCode>('StoreError');
 *     export type StoreError = CodedError<StoreErrorCode>;
 */
export function codedError<C extends string>(name: string): CodedErrorClass<C> {
  const Class = class extends Error {
    readonly code: C;
    constructor(code: C, message: string, options?: { cause?: unknown }) {
      super(message, options);
      this.code = code;
      this.name = name;
    }

    static is(e: unknown, code?: C): e is CodedError<C> {
      return e instanceof Class && (code === undefined || e.code === code);
    }
  };
  Object.defineProperty(Class, 'name', { value: name });
  return Class;
}
