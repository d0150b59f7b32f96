/**
 * Which vitest project a test file belongs to, read from its source and the test helpers it
 * imports (relative imports only, followed through files that are not themselves tests):
 *
 * - `process`: it starts real processes or talks to a service outside this process (child
 *   processes, kubectl, nats-server, PostgreSQL, the Python client, packed tarballs).
 * - `server`: it listens on a socket or makes HTTP requests, all inside the test's process.
 * - `unit`: neither; the code under test runs in the test's own process, with no socket.
 *
 * Read from the code rather than listed by hand, so a new file lands in the right project without
 * anyone remembering to put it there. `npm run test:kinds` prints the table.
 */
import { existsSync, globSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { TEST_GLOBS } from './test-globs.ts';

export type TestKind = 'unit' | 'server' | 'process';

// Each marker is spelled so that these lines do not match themselves ([l], (?:…)): a test of
// this module imports it, and reading it must not make that test a process test.
const PROCESS =
  /from '(?:node:)child_process'|scripts\/ts[c]\.ts'|nats:\/\/|@nats-io\/transport-nod[e]|NATS_UR[L]|from '(?:pg)'|postgres:\/\/|PGHOS[T]|pytho[n]3/;
const SERVER =
  /from '(?:node:)(?:http|https|net|http2|tls)'|\.listen\(|\bfetch\(|createApiServe[r]|startTestServe[r]|startServe[r]|withServe[r]|undic[i]/;

/** Relative imports of a source file, resolved to files that exist. */
function localImports(file: string, source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    const target = resolve(dirname(file), match[1] as string);
    for (const candidate of [target, `${target}.ts`, `${target}/index.ts`])
      if (existsSync(candidate) && candidate.endsWith('.ts')) {
        found.push(candidate);
        break;
      }
  }
  return found;
}

/**
 * A file reached from a test is read for markers if it is test support (not shipped code): its
 * name or folder says so. Shipped modules name child_process or node:http for their own reasons
 * (an exec credential plugin, a webhook server) without the test starting anything.
 */
const SUPPORT =
  /(?:^|\/)(?:test|tests|testdata|fixtures?)\/|(?:support|harness|fixtures?|scenario|processes|project|helpers?|test-[a-z-]+)\.ts$|\.test\.ts$/;

export function testKind(file: string): TestKind {
  const seen = new Set<string>();
  let kind: TestKind = 'unit';
  const visit = (path: string): void => {
    if (seen.has(path)) return;
    seen.add(path);
    const source = readFileSync(path, 'utf8');
    if (PROCESS.test(source)) kind = 'process';
    else if (kind === 'unit' && SERVER.test(source)) kind = 'server';
    for (const next of localImports(path, source)) if (SUPPORT.test(next)) visit(next);
  };
  visit(resolve(file));
  return kind;
}

/** `npm run test:kinds`: every test file with its project, and the count of each. */
if (import.meta.main) {
  const root = resolve(import.meta.dirname, '..');
  const counts: Record<TestKind, number> = { unit: 0, server: 0, process: 0 };
  for (const file of globSync(TEST_GLOBS, { cwd: root, exclude: (name) => name === 'node_modules' }).sort()) {
    const kind = testKind(resolve(root, file));
    counts[kind]++;
    process.stdout.write(`${kind.padEnd(8)}${file}\n`);
  }
  process.stdout.write(
    `\n${Object.entries(counts)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}\n`,
  );
}
