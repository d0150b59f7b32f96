import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadRequestError, InvalidError, type JsonPatchOperation } from '../backend/index.ts';
import { deepEqual } from './deep-equal.ts';
import { applyJsonPatch } from './json-patch.ts';

type Tokens = readonly string[];

const pointer = (tokens: Tokens): string =>
  tokens.map((token) => `/${token.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** Every location in a document, the root included. */
function locations(document: unknown, at: Tokens = []): Tokens[] {
  const found: Tokens[] = [at];
  if (Array.isArray(document)) {
    for (const [i, item] of document.entries()) found.push(...locations(item, [...at, String(i)]));
  } else if (typeof document === 'object' && document !== null) {
    for (const [key, value] of Object.entries(document)) found.push(...locations(value, [...at, key]));
  }
  return found;
}

function valueAt(document: unknown, at: Tokens): unknown {
  return at.reduce<unknown>((current, token) => (current as Record<string, unknown>)[token], document);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

const keyArb = fc.constantFrom('a', 'b', 'a/b', 'm~n', '', '-', '0', '__proto__', 'constructor');
const documentArb: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, 0, 7, 'x', ''),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(keyArb, tie('value'), { maxKeys: 4 }),
  ),
})).value;
const valueArb = fc.oneof(documentArb, fc.jsonValue({ maxDepth: 2 }));

/** An add into an existing container of the document: its path and where the value lands. */
const addArb = documentArb.chain((document) => {
  const containers = locations(document).filter((at) => {
    const value = valueAt(document, at);
    return typeof value === 'object' && value !== null;
  });
  if (containers.length === 0) return fc.constant(undefined);
  return fc.tuple(fc.constantFrom(...containers), valueArb, keyArb, fc.nat()).map(([at, value, key, n]) => {
    const container = valueAt(document, at);
    if (!Array.isArray(container)) return { document, value, path: [...at, key], landed: [...at, key] };
    const index = n % (container.length + 2);
    return index > container.length
      ? { document, value, path: [...at, '-'], landed: [...at, String(container.length)] }
      : { document, value, path: [...at, String(index)], landed: [...at, String(index)] };
  });
});

/** Operations aimed at the document's own locations (and some nearby missing ones). */
const operationsArb = documentArb.chain((document) => {
  const paths = locations(document).map(pointer);
  const pathArb = fc.oneof(fc.constantFrom(...paths), fc.constantFrom('/zz', '/a/-', '/0', '/a/b/c', ''));
  const operationArb: fc.Arbitrary<JsonPatchOperation> = fc.oneof(
    fc.record({
      op: fc.constantFrom('add' as const, 'replace' as const, 'test' as const),
      path: pathArb,
      value: valueArb,
    }),
    fc.record({ op: fc.constant('remove' as const), path: pathArb }),
    fc.record({ op: fc.constantFrom('move' as const, 'copy' as const), from: pathArb, path: pathArb }),
  );
  return fc.tuple(fc.constant(document), fc.array(operationArb, { maxLength: 5 }));
});

function attempt(
  document: unknown,
  operations: readonly JsonPatchOperation[],
): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: applyJsonPatch(document, operations) };
  } catch (error) {
    expect(error instanceof InvalidError || error instanceof BadRequestError).toBe(true);
    return { ok: false };
  }
}

describe('json patch properties', () => {
  it('a test of a value just added passes, and the value is where the add put it', () => {
    fc.assert(
      fc.property(addArb, (add) => {
        if (add === undefined) return;
        const result = applyJsonPatch(add.document, [
          { op: 'add', path: pointer(add.path), value: add.value },
          { op: 'test', path: pointer(add.landed), value: add.value },
        ]);
        expect(deepEqual(valueAt(result, add.landed), add.value)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('adding a new member and removing it again gives back the original', () => {
    fc.assert(
      fc.property(
        fc.dictionary(keyArb, valueArb, { maxKeys: 4 }),
        keyArb,
        valueArb,
        (document, key, value) => {
          fc.pre(!Object.hasOwn(document, key));
          const path = pointer([key]);
          const result = applyJsonPatch(document, [
            { op: 'add', path, value },
            { op: 'remove', path },
          ]);
          expect(deepEqual(result, document)).toBe(true);
        },
      ),
    );
  });

  it('on deeply frozen documents it either succeeds or throws a typed error, never mutating the input', () => {
    fc.assert(
      fc.property(operationsArb, ([document, operations]) => {
        const before = JSON.stringify(document);
        attempt(deepFreeze(document), deepFreeze(operations));
        expect(JSON.stringify(document)).toBe(before);
        expect(Object.keys(Object.prototype)).toEqual([]);
      }),
      { numRuns: 3000 },
    );
  });

  it('applying a patch in two parts gives the same result as applying it at once', () => {
    fc.assert(
      fc.property(operationsArb, fc.nat(), ([document, operations], n) => {
        const cut = operations.length === 0 ? 0 : n % operations.length;
        const whole = attempt(document, operations);
        const first = attempt(document, operations.slice(0, cut));
        const second = first.ok ? attempt(first.value, operations.slice(cut)) : first;
        expect(second.ok).toBe(whole.ok);
        if (whole.ok && second.ok) expect(deepEqual(second.value, whole.value)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('arbitrary garbage as a patch gives a result or a typed error, nothing else', () => {
    const garbageOperation = fc.oneof(
      fc.anything(),
      fc.record(
        {
          op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'), fc.anything()),
          path: fc.oneof(fc.string(), fc.anything()),
          from: fc.oneof(fc.string(), fc.anything()),
          value: fc.anything(),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(
        documentArb,
        fc.oneof(fc.anything(), fc.array(garbageOperation, { maxLength: 4 })),
        (document, patch) => {
          attempt(document, patch as JsonPatchOperation[]);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
