import { describe, expect, it } from 'vitest';
import { FaultError, FaultErrorCodes } from './fault-errors.ts';
import { delaySpec, failRatioSpec, pathMatcher, stallSpec } from './fault-rules.ts';

function rejection(run: () => unknown): FaultError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FaultError);
    return error as FaultError;
  }
  throw new Error('expected a FaultError');
}

describe('fault path patterns', () => {
  it('matches a glob against the whole path, * within one segment and ** across segments', () => {
    const one = pathMatcher('/api/v1/namespaces/*/configmaps');
    expect(one.test('/api/v1/namespaces/default/configmaps')).toBe(true);
    expect(one.test('/api/v1/namespaces/default/configmaps/x')).toBe(false);
    expect(one.test('/api/v1/namespaces/a/b/configmaps')).toBe(false);
    const deep = pathMatcher('/api/v1/**');
    expect(deep.test('/api/v1')).toBe(true);
    expect(deep.test('/api/v1/namespaces/default/configmaps/x')).toBe(true);
    expect(deep.test('/api/v10')).toBe(false);
    expect(pathMatcher('/api/v?/pods').test('/api/v1/pods')).toBe(true);
    expect(pathMatcher('**/configmaps/**').test('/api/v1/namespaces/a/configmaps/b')).toBe(true);
  });

  it('takes glob characters other than *, ? literally', () => {
    const dotted = pathMatcher('/apis/example.com/v1/widgets');
    expect(dotted.test('/apis/example.com/v1/widgets')).toBe(true);
    expect(dotted.test('/apis/exampleXcom/v1/widgets')).toBe(false);
    expect(pathMatcher('/a+(b)').test('/a+(b)')).toBe(true);
  });

  it('tests a RegExp unanchored and keeps no state between requests even with the g flag', () => {
    const re = pathMatcher(/configmaps/g);
    expect(re.test('/api/v1/namespaces/a/configmaps')).toBe(true);
    expect(re.test('/api/v1/namespaces/a/configmaps')).toBe(true);
    expect(re.info).toEqual({ pathRegExp: 'configmaps' });
  });

  it('matches every path without a pattern and rejects globs that cannot match a path', () => {
    expect(pathMatcher(undefined).test('/anything')).toBe(true);
    expect(rejection(() => pathMatcher('api/v1')).code).toBe(FaultErrorCodes.INVALID_RULE);
    expect(rejection(() => pathMatcher(42 as unknown as string)).message).toMatch(/pathPattern/);
  });
});

describe('fault rule validation', () => {
  it('rejects out-of-range and wrongly typed values, naming the field in a 400', () => {
    const cases: [() => unknown, string][] = [
      [() => delaySpec({ ms: -1 }), 'ms'],
      [() => delaySpec({ ms: 1.5 }), 'ms'],
      [() => delaySpec({ ms: '5' as unknown as number }), 'ms'],
      [() => delaySpec({ ms: 5, times: 0 }), 'times'],
      [() => delaySpec({ ms: 5, methods: [] }), 'methods'],
      [() => delaySpec({ ms: 5, methods: ['get' as 'GET'] }), 'methods'],
      [() => failRatioSpec({ pathPattern: '/**', ratio: 1.5, status: 500 }), 'ratio'],
      [() => failRatioSpec({ pathPattern: '/**', ratio: Number.NaN, status: 500 }), 'ratio'],
      [() => failRatioSpec({ pathPattern: '/**', ratio: 1, status: 404 as 500 }), 'status'],
      [
        () => failRatioSpec({ pathPattern: '/**', ratio: 1, status: 500, retryAfterSeconds: 3 }),
        'retryAfterSeconds',
      ],
      [
        () => failRatioSpec({ pathPattern: '/**', ratio: 1, status: 429, retryAfterSeconds: -1 }),
        'retryAfterSeconds',
      ],
      [
        () => failRatioSpec({ pathPattern: '/**', ratio: 1, status: 500, phase: 'during' as 'after' }),
        'phase',
      ],
      [
        () => failRatioSpec({ ratio: 1, status: 500 } as unknown as Parameters<typeof failRatioSpec>[0]),
        'pathPattern',
      ],
      [() => stallSpec(null as unknown as object), 'options'],
    ];
    for (const [run, field] of cases) {
      const error = rejection(run);
      expect(error.status).toBe(400);
      expect(error.reason).toBe('BadRequest');
      expect(error.message).toContain(`invalid fault rule: ${field}:`);
      expect(error.details.causes?.[0]?.field).toBe(field);
    }
  });

  it('defaults a 429 to Retry-After 1 and the phase to before', () => {
    const spec = failRatioSpec({ pathPattern: '/**', ratio: 0.5, status: 429 });
    expect(spec.retryAfterSeconds).toBe(1);
    expect(spec.phase).toBe('before');
    expect(failRatioSpec({ pathPattern: '/**', ratio: 0.5, status: 503 }).retryAfterSeconds).toBeUndefined();
  });
});
