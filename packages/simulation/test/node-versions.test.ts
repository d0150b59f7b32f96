/**
 * Determinism across Node versions: the same scenario and seed give the same trace, byte for byte,
 * on the oldest Node Converge supports (22.18) and on the repository's own (24). The oldest Node
 * comes from the npm registry (the `node` package) into node_modules/.cache, once per machine,
 * shared with the distribution test.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { envFor, installNode, oldestNode } from '../../../test/distribution/project.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** The oldest Node Converge supports (the runtime's `engines`), as the distribution test installs it. */
const OLDEST = oldestNode(join(ROOT, 'packages', 'runtime', 'package.json'));
const SCRIPT = fileURLToPath(new URL('./trace-digest.ts', import.meta.url));

async function digests(node: string): Promise<string> {
  const { stdout } = await run(
    node,
    ['--conditions=@converge/source', '--disable-warning=ExperimentalWarning', SCRIPT, '12'],
    {
      cwd: ROOT,
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return stdout;
}

describe('determinism across Node versions', () => {
  it(`gives the same trace for every seed on Node ${OLDEST} and on this Node`, {
    timeout: 300_000,
  }, async () => {
    const node = await installNode(OLDEST, join(ROOT, 'node_modules', '.cache'), envFor(process.execPath));
    expect((await run(node, ['--version'])).stdout.trim()).toBe(`v${OLDEST}`);
    const [oldest, current] = await Promise.all([digests(node), digests(process.execPath)]);
    expect(process.version.startsWith('v24.')).toBe(true);
    const lines = current.trim().split('\n');
    expect(lines).toHaveLength(24);
    for (const line of lines) expect(line).toMatch(/^replicas=[12] seed=\d+ lines=\d+ ok [0-9a-f]{64}$/);
    // Different seeds take different paths (the digests are not all one).
    expect(new Set(lines.map((l) => l.split(' ').at(-1))).size).toBeGreaterThan(20);
    expect(oldest).toBe(current);
  });
});
