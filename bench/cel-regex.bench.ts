/**
 * CEL regex benchmark: the RE2 matcher behind `matches`, `find` and `findAll` (re2js, through
 * `packages/apiserver/src/cel/regex.ts`) on the patterns CRD validation rules use, and on patterns
 * that make backtracking engines exponential. Run with `npm run bench:cel-regex`.
 *
 * Reports, per typical pattern (DNS subdomain, DNS label, email, semver, URL):
 * - cold: compile + one `matches` of a pattern never seen (the per-pattern cache defeated);
 * - matches / find: one call of the CEL function on a compiled (cached) pattern.
 * Then, per pathological pattern, the median time of one `matches` and one `findAll` at growing
 * text lengths, with the ratio to the previous length (linear: about the growth factor, 10; the
 * machine's load makes single ratios noisy).
 *
 * Environment knobs:
 * - BENCH_ITERATIONS: calls per measurement of a typical pattern (default 20 000; cold: a tenth).
 *
 * Exit status: 1 when a pathological pattern's time per character at the longest text is more than
 * 20 times its time per character at the shortest (quadratic growth would be 10 000 times); else 0.
 */
import { regexMatches } from '../packages/apiserver/src/cel/lib-regex.ts';
import { compileRegex } from '../packages/apiserver/src/cel/regex.ts';
import { fmt, median, positiveInt } from './harness.ts';

const ITERATIONS = positiveInt('BENCH_ITERATIONS', 20_000);

const typical: readonly [string, string, string][] = [
  [
    'dns subdomain',
    '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    'my-service.my-namespace.svc.cluster.local',
  ],
  ['dns label', '^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$', 'my-deployment-name'],
  ['email', '^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$', 'first.last+tag@example.co.uk'],
  [
    'semver',
    '^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$',
    'v1.25.3-rc.1+build.5',
  ],
  ['url', '^(https?)://[^/]+(/.*)?$', 'https://example.com/path/to/thing?x=1'],
];

/** Microseconds per call of `fn`, after a warm-up. */
function perCall(iterations: number, fn: () => void): number {
  for (let i = 0; i < Math.min(iterations, 500); i++) fn();
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) fn();
  return ((performance.now() - t0) * 1000) / iterations;
}

let salt = 0;
console.log('pattern            cold µs   matches µs   find µs');
for (const [name, pattern, text] of typical) {
  const cold = perCall(ITERATIONS / 10, () => {
    compileRegex(`${pattern}|x${salt++}`).test(text);
  });
  const matches = perCall(ITERATIONS, () => regexMatches(text, pattern));
  const re = compileRegex(pattern);
  const found = perCall(ITERATIONS, () => re.find(text));
  console.log(
    `${name.padEnd(16)} ${fmt(cold, 1).padStart(9)} ${fmt(matches, 2).padStart(12)} ${fmt(found, 2).padStart(9)}`,
  );
}

const pathological: readonly [string, (n: number) => string][] = [
  ['(a*)*b', (n) => `${'a'.repeat(n)}!b`],
  ['(a|aa)*c$', (n) => `${'a'.repeat(n)}c!`],
  ['^([a-z]+)+[0-9]$', (n) => `${'a'.repeat(n)}!`],
  ['(x+x+)+y', (n) => `${'x'.repeat(n)}!y`],
];
/** The median milliseconds of `runs` calls of `fn`. */
function medianMs(runs: number, fn: () => void): number {
  fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

const LENGTHS = [10_000, 100_000, 1_000_000];
let superlinear = false;
console.log('\npattern              length    matches ms  ×prev   findAll ms  ×prev');
for (const [pattern, input] of pathological) {
  const re = compileRegex(pattern);
  const rows: [number, number][] = [];
  for (const n of LENGTHS) {
    const text = input(n);
    const runs = n >= 1_000_000 ? 5 : 15;
    const row: [number, number] = [
      medianMs(runs, () => re.test(text)),
      medianMs(runs, () => re.findAll(text, -1)),
    ];
    const previous = rows.at(-1);
    const ratio =
      previous === undefined ? ['', ''] : [fmt(row[0] / previous[0], 1), fmt(row[1] / previous[1], 1)];
    console.log(
      `${pattern.padEnd(20)} ${String(n).padStart(8)} ${fmt(row[0], 3).padStart(12)} ${ratio[0]?.padStart(6)} ${fmt(row[1], 3).padStart(12)} ${ratio[1]?.padStart(6)}`,
    );
    rows.push(row);
  }
  const growth = (LENGTHS.at(-1) as number) / (LENGTHS[0] as number);
  const [first, last] = [rows[0] as [number, number], rows.at(-1) as [number, number]];
  if (last[0] / first[0] > 20 * growth || last[1] / first[1] > 20 * growth) superlinear = true;
}
if (superlinear) {
  console.error('a pathological pattern took more than 20 times longer per character on the longest text');
  process.exitCode = 1;
}
