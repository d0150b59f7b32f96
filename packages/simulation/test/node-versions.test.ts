/**
 * Determinism across Node versions: the same scenario and seed give the same trace, byte for byte,
 * on the oldest Node Converge supports (22.18) and on the repository's own (24). Node 22.18 comes
 * from the npm registry (the `node` package) into node_modules/.cache, once per machine.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const OLDEST = '22.18.0';
const PREFIX = join(ROOT, 'node_modules', '.cache', `converge-node-${OLDEST}`);
const NODE_22 = join(PREFIX, 'node_modules', '.bin', 'node');
const SCRIPT = fileURLToPath(new URL('./trace-digest.ts', import.meta.url));

async function installOldest(): Promise<string> {
  if (!existsSync(NODE_22)) {
    mkdirSync(PREFIX, { recursive: true });
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    await run(
      npm,
      [
        'install',
        '--prefix',
        PREFIX,
        '--no-save',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        `node@${OLDEST}`,
      ],
      {
        cwd: PREFIX,
        timeout: 150_000,
      },
    );
  }
  const { stdout } = await run(NODE_22, ['--version']);
  return stdout.trim();
}

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
    expect(await installOldest()).toBe(`v${OLDEST}`);
    const [oldest, current] = await Promise.all([digests(NODE_22), digests(process.execPath)]);
    expect(process.version.startsWith('v24.')).toBe(true);
    const lines = current.trim().split('\n');
    expect(lines).toHaveLength(24);
    for (const line of lines) expect(line).toMatch(/^replicas=[12] seed=\d+ lines=\d+ ok [0-9a-f]{64}$/);
    // Different seeds take different paths (the digests are not all one).
    expect(new Set(lines.map((l) => l.split(' ').at(-1))).size).toBeGreaterThan(20);
    expect(oldest).toBe(current);
  });
});
