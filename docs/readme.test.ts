import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { USAGE } from '../packages/cli/src/args.ts';

const root = new URL('..', import.meta.url).pathname;

/** The rows of the README's package table (section "What is here"): package folder → description. */
function packageTable(readme: string): Map<string, string> {
  const section = readme.split(/^## /m).find((s) => s.startsWith('What is here')) ?? '';
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const match = /^\|\s*`(packages\/[^`]+)`[^|]*\|(.*)\|\s*$/.exec(line);
    if (match) rows.set(match[1] as string, (match[2] as string).trim());
  }
  return rows;
}

describe('README', () => {
  it('lists every package in "What is here", and the cli row names every converge command', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const rows = packageTable(readme);
    const packages = readdirSync(join(root, 'packages'))
      .filter((name) => statSync(join(root, 'packages', name, 'package.json'), { throwIfNoEntry: false }))
      .map((name) => `packages/${name}`);
    expect([...rows.keys()].sort()).toEqual(packages.sort());
    // Every command `converge help` lists (but help itself), so the table follows the CLI.
    const commands = [...USAGE.matchAll(/^ {2}([a-z]+)\s/gm)]
      .map((m) => m[1] as string)
      .filter((c) => c !== 'help');
    expect(commands).toEqual(expect.arrayContaining(['serve', 'dev', 'run', 'kv', 'store']));
    for (const command of commands) expect(rows.get('packages/cli'), command).toContain(`\`${command}\``);
  });
});
