import { ConflictError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { consoleLogger } from '../src/console-logger.ts';

function capture() {
  const lines: string[] = [];
  const logger = consoleLogger((line) => lines.push(line));
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { lines, logger, records };
}

describe('consoleLogger', () => {
  it('writes an error field with its class, message, code, stack and cause', () => {
    const { logger, records } = capture();
    const cause = new ConflictError('the object has been modified');
    const error = new Error('update failed', { cause });
    logger.child({ controller: 'websites' }).error({ err: error, name: 'home' }, 'Reconciler error');
    const [record] = records();
    expect(record).toMatchObject({
      level: 'error',
      msg: 'Reconciler error',
      controller: 'websites',
      name: 'home',
      err: {
        type: 'Error',
        message: 'update failed',
        cause: { type: 'ConflictError', message: 'the object has been modified', code: cause.code },
      },
    });
    const err = record?.err as { stack: string; cause: { stack: string } };
    expect(err.stack).toBe(error.stack);
    expect(err.stack).toContain('console-logger.test.ts');
    expect(err.cause.stack).toBe(cause.stack);
  });

  it('never throws on what it is given: bigints, cycles, errors in nested fields', () => {
    const { logger, records } = capture();
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const shared = { x: 1 };
    logger.info(
      { big: 10n, cyclic, pair: [shared, shared], nested: { e: new TypeError('t') } },
      'odd fields',
    );
    const [record] = records();
    expect(record).toMatchObject({
      big: '10',
      cyclic: { a: 1, self: '[Circular]' },
      pair: [{ x: 1 }, { x: 1 }],
      nested: { e: { type: 'TypeError', message: 't' } },
    });
  });

  it('still writes a line when a field cannot be serialized at all', () => {
    const { logger, records } = capture();
    const hostile = {
      get boom(): never {
        throw new Error('getter threw');
      },
    };
    logger.warn({ hostile }, 'Hostile field');
    expect(records()).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'Hostile field', logError: 'Error: getter threw' }),
    ]);
  });
});
