/**
 * The order vitest starts test files in: longest first within each project (vitest's own rule),
 * but with the durations of `test/durations.json` where vitest has no results of its own.
 *
 * vitest orders by the durations it cached from the last run, and without a cache (a fresh clone:
 * CI, a new contributor) by file size, which says little about time: the suite's two longest files
 * (packing and installing the tarballs, the small benchmark run) are short files that started
 * minutes in and ran last, on a 2-core machine that had nothing else left to run beside them. Any
 * file the list does not know starts first (vitest's rule for files without a result). `npm run
 * test:durations -- REPORT.json` rewrites the list from a JSON report of a whole run.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const root = fileURLToPath(new URL('..', import.meta.url));
export const DURATIONS_FILE = fileURLToPath(new URL('../test/durations.json', import.meta.url));

/** Seconds each test file took in a whole run, by its path from the repository's root. */
export function readDurations(file = DURATIONS_FILE): ReadonlyMap<string, number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return new Map();
  }
  const out = new Map<string, number>();
  if (typeof parsed !== 'object' || parsed === null) return out;
  for (const [path, seconds] of Object.entries(parsed))
    if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0) out.set(path, seconds);
  return out;
}

interface Known {
  readonly failed: boolean;
  /** Milliseconds; undefined when neither vitest's cache nor the list knows the file. */
  readonly ms: number | undefined;
}

export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const listed = readDurations();
    const known = new Map<TestSpecification, Known>();
    for (const spec of files) {
      const cached = this.ctx.cache.getTestSpecificationResult(spec);
      const seconds = listed.get(relative(root, spec.moduleId));
      known.set(spec, {
        failed: cached?.failed === true,
        ms: cached?.duration ?? (seconds === undefined ? undefined : seconds * 1000),
      });
    }
    return [...files].sort((a, b) => {
      const order = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (order !== 0) return order;
      // One project's files after another's: a worker that keeps its module graph between files
      // (isolate: false) keeps it only while the next file is of the same project.
      if (a.project.name !== b.project.name) return a.project.name < b.project.name ? -1 : 1;
      const ka = known.get(a) as Known;
      const kb = known.get(b) as Known;
      if (ka.failed !== kb.failed) return ka.failed ? -1 : 1;
      if (ka.ms === undefined || kb.ms === undefined)
        return ka.ms === kb.ms ? 0 : ka.ms === undefined ? -1 : 1;
      return kb.ms - ka.ms;
    });
  }
}
