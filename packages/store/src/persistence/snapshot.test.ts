import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { KubeObject } from '@converge/runtime';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreCorruptError } from '../errors.ts';
import { nodeFileSystem } from './file-system.ts';
import { readSnapshot, SNAPSHOT_FILE, writeSnapshot } from './snapshot.ts';
import { removeTempDirs, tempDir } from './test-helpers.ts';

afterAll(removeTempDirs);

const objects = fc.array(
  fc.record({
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/),
    data: fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
  }),
  { maxLength: 8 },
);

function toObjects(specs: { name: string; data: Record<string, string> }[]): KubeObject[] {
  return specs.map(
    (s, i) =>
      ({
        metadata: { name: s.name, namespace: 'default', resourceVersion: String(i + 2) },
        data: s.data,
      }) as KubeObject,
  );
}

function read(dir: string): { revision: number; objects: KubeObject[] } {
  const found: KubeObject[] = [];
  const scan = readSnapshot(nodeFileSystem, dir, (_t, o) => found.push(o));
  return { revision: scan?.revision ?? -1, objects: found };
}

describe('snapshot codec', () => {
  it('reads back every object written, at its revision', () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    fc.assert(
      fc.property(objects, fc.nat({ max: 1e9 }), (specs, revision) => {
        const written = toObjects(specs);
        writeSnapshot(nodeFileSystem, dir, { revision, types: new Map([['/v1/configmaps', written]]) });
        expect(read(dir)).toEqual({ revision, objects: written });
      }),
      { numRuns: 100 },
    );
  });

  it('a snapshot with flipped bytes or cut short is a StoreCorruptError, never other objects', () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    fc.assert(
      fc.property(
        objects,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        (specs, flips, cut) => {
          const written = toObjects(specs);
          writeSnapshot(nodeFileSystem, dir, { revision: 7, types: new Map([['/v1/configmaps', written]]) });
          const file = `${dir}/${SNAPSHOT_FILE}`;
          let bytes = Buffer.from(readFileSync(file));
          if (cut) bytes = bytes.subarray(0, (flips[0]?.[0] ?? 0) % bytes.length);
          else
            for (const [at, mask] of flips)
              bytes[at % bytes.length] = (bytes[at % bytes.length] as number) ^ mask;
          // Flips that cancel out (the same byte, the same mask, twice) damage nothing.
          if (bytes.equals(readFileSync(file))) return;
          writeFileSync(file, bytes);
          const found: KubeObject[] = [];
          try {
            readSnapshot(nodeFileSystem, dir, (_t, o) => found.push(o));
            expect.unreachable('a damaged snapshot was read');
          } catch (error) {
            expect(error).toBeInstanceOf(StoreCorruptError);
          }
          // What was passed on before the damage is a prefix of what was written (repair keeps it).
          expect(written.slice(0, found.length)).toEqual(found);
        },
      ),
      { numRuns: 300 },
    );
  });
});
