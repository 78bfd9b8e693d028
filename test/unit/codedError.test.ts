import assert from 'node:assert/strict';
import { codedError, type CodedError } from '../../src/core/errors';

describe('core/errors codedError: one shape for the project\'s error classes', () => {
  const DiskError = codedError<'full' | 'gone'>('DiskError');
  type DiskError = CodedError<'full' | 'gone'>;
  const OtherError = codedError<'full'>('OtherError');

  it('makes errors with a code, a message, a cause and the class name', () => {
    const cause = new Error('ENOSPC');
    const e: DiskError = new DiskError('full', 'the disk is full', { cause });
    assert.ok(e instanceof Error && e instanceof DiskError);
    assert.equal(e.code, 'full');
    assert.equal(e.message, 'the disk is full');
    assert.equal(e.name, 'DiskError');
    assert.equal(e.cause, cause);
    assert.equal(DiskError.name, 'DiskError');
    assert.match(String(e.stack), /^DiskError: the disk is full/);
  });

  it('is(e, code?) tells its own errors, of any or of one code, from every other', () => {
    const e = new DiskError('gone', 'x');
    assert.equal(DiskError.is(e), true);
    assert.equal(DiskError.is(e, 'gone'), true);
    assert.equal(DiskError.is(e, 'full'), false);
    assert.equal(OtherError.is(e), false, 'another class with the same codes');
    assert.equal(DiskError.is(new OtherError('full', 'x')), false);
    for (const v of [new Error('x'), { code: 'gone', message: 'x' }, undefined, null, 'gone']) assert.equal(DiskError.is(v), false);
  });

  it('a class that extends it keeps its fields, and its is() narrows to that class', () => {
    class StatusError extends codedError<'full' | 'gone'>('StatusError') {
      constructor(
        readonly status: number,
        code: 'full' | 'gone',
        message: string,
      ) {
        super(code, message);
      }
    }
    const e: unknown = new StatusError(507, 'full', 'the disk is full');
    assert.ok(e instanceof StatusError && e instanceof Error);
    assert.ok(StatusError.is(e, 'full'));
    assert.equal(e.status, 507, 'is() narrowed e to StatusError');
    assert.equal(e.name, 'StatusError');
    assert.equal(StatusError.is(e, 'gone'), false);
    assert.equal(StatusError.is(new DiskError('full', 'x')), false);
  });
});
