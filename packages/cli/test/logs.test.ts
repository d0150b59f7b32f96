/**
 * The CLI's logger (pino) under a real Controller, in this process on virtual time: what a failing
 * reconcile, a dropped key and a requeue write, in JSON and in the terminal layout.
 */
import {
  ConflictError,
  Controller,
  ExponentialRateLimiter,
  type Logger,
  Manager,
  maxRetries,
  type ObjectKey,
  requeueAfter,
  type Source,
} from '@converge/runtime';
import { flushMicrotasks, VirtualClock } from '@converge/runtime/testing';
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { cliLogger, commandLogger } from '../src/cli-logger.ts';
import type { LogLevelName } from '../src/log-args.ts';
import { prettyLine } from '../src/pretty.ts';

type Line = Record<string, unknown>;

function capture(level: LogLevelName = 'info') {
  const lines: string[] = [];
  const logger = cliLogger({ level, write: (line) => lines.push(line) });
  return { logger, lines, records: (): Line[] => lines.map((l) => JSON.parse(l) as Line) };
}

/** A source that syncs at once and lets the test push keys. */
function pushSource() {
  let push: (key: ObjectKey) => void = () => {};
  const source: Source<ObjectKey> = {
    name: 'push',
    start(signal, queue) {
      push = (key) => queue.add(key, { cause: { type: 'modified', source: 'push' } });
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
  return { source, push: (key: ObjectKey) => push(key) };
}

/** Runs a controller over one key `default/home` until `ms` of virtual time passed. */
async function runController(
  logger: Logger,
  reconcile: () => Promise<unknown>,
  options: { retries?: number; ms?: number; kindOf?: (r: ObjectKey) => string } = {},
): Promise<void> {
  const clock = new VirtualClock();
  const { source, push } = pushSource();
  const controller = new Controller<ObjectKey>({
    name: 'websites',
    clock,
    logger,
    sources: [source],
    retryPolicy: maxRetries(options.retries ?? 10),
    rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 10 }),
    reconciler: reconcile as () => Promise<undefined>,
    ...(options.kindOf === undefined ? {} : { kindOf: options.kindOf }),
  });
  const abort = new AbortController();
  const run = controller.start(abort.signal);
  await flushMicrotasks();
  push({ namespace: 'default', name: 'home' });
  await clock.advance(options.ms ?? 1_000);
  abort.abort();
  await clock.advance(0);
  await run;
}

describe('reconcile log lines (pino, JSON)', () => {
  it('a failing reconcile logs "Reconciler error" at error level with the key, the reconcile id and the error with its stack and cause', async () => {
    const { logger, records } = capture();
    const cause = new ConflictError('the object has been modified');
    await runController(
      logger,
      async () => {
        throw new Error('cannot update the Deployment', { cause });
      },
      { retries: 0 },
    );
    const error = records().find((r) => r.msg === 'Reconciler error');
    expect(error).toMatchObject({
      level: 'error',
      controller: 'websites',
      namespace: 'default',
      name: 'home',
      reconcileId: expect.stringMatching(/^websites-/),
      err: {
        type: 'Error',
        message: 'cannot update the Deployment',
        stack: expect.stringContaining('logs.test.ts'),
        cause: { type: 'ConflictError', code: cause.code, message: 'the object has been modified' },
      },
    });
    expect(typeof error?.time).toBe('string');
    expect(error).not.toHaveProperty('pid');
  });

  it('a key dropped after its last retry says so at error level, with the error and the failures counted', async () => {
    const { logger, records } = capture();
    let calls = 0;
    await runController(
      logger,
      async () => {
        calls++;
        throw new Error(`attempt ${calls} failed`);
      },
      { retries: 2 },
    );
    expect(calls).toBe(3);
    const errors = records().filter((r) => r.msg === 'Reconciler error');
    expect(errors.map((r) => (r.err as { message: string }).message)).toEqual([
      'attempt 1 failed',
      'attempt 2 failed',
      'attempt 3 failed',
    ]);
    const dropped = records().filter((r) => r.msg === 'Dropping request after retries');
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatchObject({
      level: 'error',
      controller: 'websites',
      namespace: 'default',
      name: 'home',
      failures: 3,
      err: { message: 'attempt 3 failed', stack: expect.stringContaining('logs.test.ts') },
    });
  });

  it('a requeue is a debug line "Reconcile finished" with its delay, absent at info; kindOf adds kind', async () => {
    const debug = capture('debug');
    const info = capture('info');
    for (const { logger } of [debug, info]) {
      await runController(logger, async () => requeueAfter(5_000), { ms: 1_000, kindOf: () => 'Website' });
    }
    expect(debug.records().find((r) => r.msg === 'Reconcile finished')).toMatchObject({
      level: 'debug',
      kind: 'Website',
      namespace: 'default',
      name: 'home',
      result: 'requeue_after',
      requeueAfterMs: 5_000,
    });
    expect(info.records().some((r) => r.level === 'debug' || r.msg === 'Reconcile finished')).toBe(false);
    expect(info.records().find((r) => r.msg === 'Starting controller')).toMatchObject({ level: 'info' });
  });

  it('levels: trace shows everything, silent nothing; level names, not numbers', () => {
    for (const [level, shown] of [
      ['trace', 6],
      ['debug', 5],
      ['info', 4],
      ['warn', 3],
      ['error', 2],
      ['fatal', 1],
      ['silent', 0],
    ] as const) {
      const { logger, records } = capture(level);
      for (const name of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const)
        logger[name]({}, name);
      expect(records().map((r) => r.level)).toEqual(
        ['trace', 'debug', 'info', 'warn', 'error', 'fatal'].slice(6 - shown),
      );
    }
  });

  it('a pino logger is the runtime Logger as it is: new Manager({ logger: pino() })', () => {
    const lines: string[] = [];
    const logger = pino({ base: null }, { write: (chunk: string) => lines.push(chunk) });
    const manager = new Manager({ logger });
    manager.logger.child({ controller: 'c' }).error({ err: new Error('x') }, 'Reconciler error');
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      level: 50,
      controller: 'c',
      msg: 'Reconciler error',
    });
  });
});

describe('terminal layout', () => {
  const line = JSON.stringify({
    level: 'error',
    time: '2026-11-26T12:00:03.123Z',
    controller: 'websites',
    reconcileId: 'websites-1f',
    name: 'home',
    namespace: 'default',
    causes: ['modified'],
    msg: 'Reconciler error',
    err: {
      type: 'Error',
      message: 'boom',
      stack: 'Error: boom\n    at reconcile (operator.ts:10:5)',
      cause: {
        type: 'ConflictError',
        message: 'modified',
        code: 'CONVERGE_ERR_CONFLICT',
        stack: 'ConflictError: modified\n    at x',
      },
    },
  });

  it('one line with the time, the level, the message and the reconcile fields first; the stack and causes below', () => {
    expect(prettyLine(line, false).split('\n')).toEqual([
      '12:00:03.123 ERROR Reconciler error controller=websites namespace=default name=home reconcileId=websites-1f causes=["modified"]',
      '    Error: boom',
      '      at reconcile (operator.ts:10:5)',
      '    caused by:',
      '      ConflictError: modified',
      '        at x',
      '        code: CONVERGE_ERR_CONFLICT',
    ]);
    expect(prettyLine(line, true)).toContain('\x1b[31mERROR\x1b[0m');
    expect(prettyLine(line, false)).not.toContain('\x1b');
  });

  it('never throws and passes through what is not a JSON object', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        (text) => {
          const out = prettyLine(text, true);
          expect(typeof out).toBe('string');
        },
      ),
    );
    expect(prettyLine('not json', false)).toBe('not json');
    expect(prettyLine('[1,2]', false)).toBe('[1,2]');
  });

  it('commandLogger: pretty when stderr is a terminal (coloured unless NO_COLOR), JSON otherwise or when asked', () => {
    const write = (
      terminal: boolean,
      format: 'json' | 'pretty' | undefined,
      env: Record<string, string> = {},
    ) => {
      const lines: string[] = [];
      const io = {
        out: () => {},
        err: (l: string) => lines.push(l),
        errIsTerminal: terminal,
        stopped: Promise.resolve(),
      };
      commandLogger({ logLevel: 'info', logFormat: format }, io, env).info(
        { controller: 'c' },
        'Starting controller',
      );
      return lines[0] as string;
    };
    expect(JSON.parse(write(false, undefined))).toMatchObject({ level: 'info', msg: 'Starting controller' });
    expect(write(true, undefined)).toContain('\x1b[32mINFO \x1b[0m Starting controller');
    expect(write(true, undefined, { NO_COLOR: '1' })).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}Starting controller controller=c$/,
    );
    expect(JSON.parse(write(true, 'json'))).toMatchObject({ controller: 'c' });
    expect(write(false, 'pretty')).toMatch(/ INFO {2}Starting controller controller=c$/);
  });
});
