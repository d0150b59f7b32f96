import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { KubeconfigError } from '../errors.ts';
import { loadKubeconfig } from './load-kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-fuzz-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const leaf = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom('https://x:6443', 'c', 'u', 'k', 'Never'),
);
const named = (inner: string, fields: readonly string[]) =>
  fc.array(
    fc.oneof(
      fc.record({
        name: fc.oneof(fc.constantFrom('c', 'u', 'k'), leaf),
        [inner]: fc.dictionary(fc.constantFrom(...fields), leaf),
      }),
      leaf,
    ),
    { maxLength: 3 },
  );
/** Documents shaped like kubeconfigs, with wrong types and values sprinkled anywhere. */
const kubeconfigish = fc.record(
  {
    apiVersion: leaf,
    kind: fc.oneof(fc.constant('Config'), leaf),
    clusters: fc.oneof(
      named('cluster', [
        'server',
        'certificate-authority-data',
        'insecure-skip-tls-verify',
        'tls-server-name',
        'proxy-url',
      ]),
      leaf,
    ),
    users: fc.oneof(
      named('user', [
        'token',
        'username',
        'password',
        'client-certificate-data',
        'client-key-data',
        'exec',
        'auth-provider',
      ]),
      leaf,
    ),
    contexts: fc.oneof(named('context', ['cluster', 'user', 'namespace']), leaf),
    'current-context': leaf,
  },
  { requiredKeys: [] },
);

let n = 0;
function load(text: string): void {
  const path = join(dir, `config-${n++}`);
  writeFileSync(path, text);
  try {
    loadKubeconfig({ path, env: {} });
  } catch (error) {
    // Malformed input is a typed error naming the file and a field — never a crash of another kind.
    expect(error).toBeInstanceOf(KubeconfigError);
    const e = error as KubeconfigError;
    expect(e.file).toContain(path);
    expect(e.field).not.toBe('');
    expect(e.message).toContain(path);
  }
}

describe('kubeconfig parser fuzzing', () => {
  it('any text is either a config or a KubeconfigError naming the file and field', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), load), { numRuns: 300 });
  });

  it('kubeconfig-shaped documents with wrong types anywhere are either a config or a KubeconfigError naming the file and field', () => {
    fc.assert(
      fc.property(kubeconfigish, (document) => load(stringify(document))),
      { numRuns: 400 },
    );
  });
});
