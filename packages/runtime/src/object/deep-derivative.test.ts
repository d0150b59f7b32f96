import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deepDerivative } from './deep-derivative.ts';

const json = fc.jsonValue({ maxDepth: 4 });

/** `value` with extra fields added to every object in it (what a server's defaulting does). */
function withDefaults(value: unknown, extra: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((v) => withDefaults(v, extra));
  if (typeof value !== 'object' || value === null) return value;
  // fromEntries defines own properties, so even a `__proto__` key stays a plain field.
  return Object.fromEntries([
    ...Object.entries(extra),
    ...Object.entries(value).map(([k, v]) => [k, withDefaults(v, extra)] as const),
  ]);
}

describe('deepDerivative', () => {
  it('ignores fields only the actual object has, such as server defaults', () => {
    const wanted = {
      spec: { replicas: 2, template: { spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
    };
    const actual = {
      metadata: { uid: 'u', resourceVersion: '7' },
      spec: {
        replicas: 2,
        strategy: { type: 'RollingUpdate' },
        template: {
          spec: {
            containers: [
              {
                name: 'web',
                image: 'nginx',
                imagePullPolicy: 'Always',
                terminationMessagePath: '/dev/termination-log',
              },
            ],
            restartPolicy: 'Always',
          },
        },
      },
    };
    expect(deepDerivative(wanted, actual)).toBe(true);
  });

  it('sees a changed value, a missing field, a type change and a changed array length', () => {
    const actual = { spec: { replicas: 2, ports: [{ port: 80 }], selector: { app: 'web' } } };
    expect(deepDerivative({ spec: { replicas: 3 } }, actual)).toBe(false);
    expect(deepDerivative({ spec: { paused: false } }, actual)).toBe(false);
    expect(deepDerivative({ spec: { replicas: '2' } }, actual)).toBe(false);
    expect(deepDerivative({ spec: { selector: ['app'] } }, actual)).toBe(false);
    expect(deepDerivative({ spec: { ports: [{ port: 80 }, { port: 443 }] } }, actual)).toBe(false);
    expect(deepDerivative({ spec: { ports: [] } }, actual)).toBe(false);
    expect(deepDerivative({ spec: { replicas: undefined } }, { spec: {} })).toBe(true);
  });

  it('holds for any value against itself and against itself with defaults added, and fails once a leaf the desired value sets changes', () => {
    fc.assert(
      fc.property(json, fc.dictionary(fc.string({ minLength: 1 }), json, { maxKeys: 3 }), (value, extra) => {
        expect(deepDerivative(value, value)).toBe(true);
        const defaulted = withDefaults(value, extra);
        // Extra keys may shadow keys of the value only where the value set them: the value's win.
        expect(deepDerivative(value, defaulted)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }), fc.integer(), { minKeys: 1 }), (value) => {
        const [key] = Object.keys(value) as [string];
        expect(deepDerivative(value, { ...value, [key]: (value[key] as number) + 1 })).toBe(false);
      }),
    );
  });
});
