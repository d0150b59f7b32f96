import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ResourceType, resourceType } from '../backend/index.ts';
import { InvalidFinalizerError } from './errors.ts';
import {
  defaultFinalizerSupplier,
  finalizerNameProblem,
  inProgressFinalizerSupplier,
  resolveFinalizer,
} from './finalizer-supplier.ts';

const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
const group = fc.oneof(
  fc.constant(''),
  fc.array(label, { minLength: 1, maxLength: 5 }).map((l) => l.join('.')),
);
const version = fc.stringMatching(/^v[1-9][0-9]?((alpha|beta)[1-9])?$/);
const kind = fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,30}$/);

function typeOf(g: string, v: string, k: string): ResourceType {
  return resourceType({ group: g, version: v, kind: k, plural: `${k.toLowerCase()}s`, namespaced: true });
}

describe('finalizer names (H1)', () => {
  it('the default is operator.<version>.<kind>[.<group>], kind case kept, accepted exactly when at most 63 characters', () => {
    fc.assert(
      fc.property(group, version, kind, (g, v, k) => {
        const type = typeOf(g, v, k);
        const name = defaultFinalizerSupplier(type);
        expect(name).toBe(g === '' ? `operator.${v}.${k}` : `operator.${v}.${k}.${g}`);
        expect(inProgressFinalizerSupplier(type)).toBe(name.replace(/^operator\./, 'wip.'));
        if (name.length <= 63) {
          expect(resolveFinalizer('finalizer', undefined, type, defaultFinalizerSupplier)).toBe(name);
        } else {
          expect(() => resolveFinalizer('finalizer', undefined, type, defaultFinalizerSupplier)).toThrow(
            InvalidFinalizerError,
          );
        }
      }),
    );
  });

  it('follows Kubernetes IsQualifiedName: one optional DNS-subdomain prefix, a 1–63 character name part', () => {
    const ok = [
      'operator.v1.Widget.example.com',
      'example.com/cleanup',
      'a',
      'A_b-c.d',
      `${'n'.repeat(63)}`,
      `example.com/${'n'.repeat(63)}`,
    ];
    const bad = [
      '',
      'operator.v1.ConfigMap.',
      '.leading',
      'has space',
      'n'.repeat(64),
      '/name',
      'Example.com/name',
      'example.com/',
      'a/b/c',
      `${'a'.repeat(254)}/name`,
    ];
    for (const name of ok) expect(finalizerNameProblem(name), name).toBeUndefined();
    for (const name of bad) expect(finalizerNameProblem(name), name).toBeTypeOf('string');
  });

  it('a supplier that returns something other than a string is refused', () => {
    const type = typeOf('example.com', 'v1', 'Widget');
    expect(() => resolveFinalizer('finalizer', (() => 42) as never, type, defaultFinalizerSupplier)).toThrow(
      /it is not a string/,
    );
  });
});
