/**
 * Damage at random offsets of a real data directory (log, snapshot, manifest): a flipped bit or a
 * file cut short anywhere. The store either refuses to open with a typed error, or opens with the
 * state after some prefix of the acknowledged writes — never a mixed or invented state. A flipped
 * bit loses at most the last record (only a last record can look torn); a cut loses only what
 * follows the cut.
 */
import {
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isConvergeError } from '@converge/runtime';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../store.ts';
import { CM, type ConfigMap, cm } from '../testdata/fixtures.ts';
import { LOG_FILE } from './data-dir.ts';
import { LOG_MAGIC } from './record-codec.ts';

const WRITES = 40;
const NAMES = ['a', 'b', 'c', 'd', 'e'];
const quiet = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
let root: string;
let pristine: string;
/** `states[k]`: name → value after the first k acknowledged writes. */
const states: Map<string, string>[] = [new Map()];
/** Whether the pristine log holds records beyond the last snapshot (a cut there costs writes). */
let logHoldsWrites = false;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'converge-damage-'));
  pristine = join(root, 'pristine');
  // Snapshots and new logs in between, so both files hold acknowledged writes.
  const store = new Store({ dataDir: pristine, types: [CM], logger: quiet, snapshotEveryRecords: 15 });
  for (let i = 0; i < WRITES; i++) {
    const name = NAMES[i % NAMES.length] as string;
    const current = states[states.length - 1] as Map<string, string>;
    if (current.has(name)) {
      const old = await store.get<ConfigMap>(CM, { namespace: 'default', name });
      await store.update(CM, { ...old, data: { v: String(i) } });
    } else {
      await store.create(CM, cm(name, { v: String(i) }));
    }
    states.push(new Map(current).set(name, String(i)));
  }
  await store.close();
  // Snapshots are taken in the background, so how many acknowledged writes the log holds beyond
  // the last snapshot depends on timing: none when a snapshot caught up with the last write.
  logHoldsWrites = statSync(join(pristine, LOG_FILE)).size > LOG_MAGIC.length;
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function snapshotOf(store: Store): Promise<Map<string, string>> {
  return store
    .list<ConfigMap>(CM)
    .then(({ items }) => new Map(items.map((o) => [o.metadata.name as string, o.data?.['v'] as string])));
}

const sameState = (a: Map<string, string>, b: Map<string, string>): boolean =>
  a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

describe('damage at random offsets', () => {
  it('a flipped bit or a cut anywhere in the log, snapshot or manifest: a typed refusal, or the state after a prefix of the acknowledged writes (a flip loses at most the last record)', async () => {
    const files = readdirSync(pristine).filter((f) => !f.endsWith('.tmp'));
    expect(files).toEqual(expect.arrayContaining(['log', 'snapshot']));
    let run = 0;
    const outcomes = { refused: 0, opened: 0, lostTheLast: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...files),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        fc.integer({ min: 0, max: 7 }),
        fc.boolean(),
        async (file, where, bit, cut) => {
          const dir = join(root, `case-${run++}`);
          cpSync(pristine, dir, { recursive: true });
          try {
            const path = join(dir, file);
            const bytes = readFileSync(path);
            const offset = Math.floor(where * bytes.length);
            if (cut) truncateSync(path, offset);
            else {
              bytes[offset] = (bytes[offset] as number) ^ (1 << bit);
              writeFileSync(path, bytes);
            }
            let store: Store;
            try {
              store = new Store({ dataDir: dir, types: [CM], logger: quiet });
            } catch (error) {
              expect(isConvergeError(error), String(error)).toBe(true);
              outcomes.refused++;
              return;
            }
            const state = await snapshotOf(store);
            await store.close();
            const prefix = states.findLastIndex((s) => sameState(s, state));
            expect(
              prefix,
              `${file} ${cut ? 'cut' : 'flip'} at ${offset}: ${JSON.stringify([...state])}`,
            ).toBeGreaterThanOrEqual(0);
            if (!cut) expect(prefix).toBeGreaterThanOrEqual(WRITES - 1);
            outcomes.opened++;
            if (prefix < WRITES) outcomes.lostTheLast++;
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      // Random offsets lean to the ends of a file (fast-check's doubles): one cut through the middle
      // of the log is always tried.
      { numRuns: 150, examples: [['log', 0.5, 0, true]] },
    );
    // Not vacuous: damage was refused, tolerated, and (cuts, torn tails) cost acknowledged-last writes.
    expect(outcomes.refused).toBeGreaterThan(0);
    expect(outcomes.opened).toBeGreaterThan(0);
    // A cut costs writes only where the log holds some; when a snapshot caught up, it cannot.
    if (logHoldsWrites) expect(outcomes.lostTheLast).toBeGreaterThan(0);
  }, 60_000);
});
