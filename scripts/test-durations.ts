/**
 * `npm run test:durations -- REPORT.json`: rewrites `test/durations.json` (the order a fresh clone
 * starts test files in: scripts/test-sequencer.ts) from the JSON report of a whole run, e.g.
 * `npx vitest run --reporter=default --reporter=json --outputFile.json=REPORT.json`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DURATIONS_FILE } from './test-sequencer.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const report = process.argv[2];
if (report === undefined) {
  process.stderr.write('Usage: npm run test:durations -- REPORT.json\n');
  process.exit(2);
}
const { testResults } = JSON.parse(readFileSync(report, 'utf8')) as {
  testResults: { name: string; startTime: number; endTime: number }[];
};
const durations: Record<string, number> = {};
for (const file of testResults.toSorted((a, b) => a.name.localeCompare(b.name)))
  durations[relative(root, file.name)] = Math.round((file.endTime - file.startTime) / 100) / 10;
writeFileSync(DURATIONS_FILE, `${JSON.stringify(durations, null, 2)}\n`);
process.stdout.write(`${DURATIONS_FILE}: ${testResults.length} files\n`);
