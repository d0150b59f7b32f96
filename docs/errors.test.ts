import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('error catalogue', () => {
  it('documents every error code the packages define, and each code is defined once', () => {
    const root = new URL('..', import.meta.url).pathname;
    const catalogue = readFileSync(join(root, 'docs/errors.md'), 'utf8');
    const seen = new Map<string, string>();
    const missing: string[] = [];
    for (const file of sources(join(root, 'packages'))) {
      for (const [, code] of readFileSync(file, 'utf8').matchAll(/:\s*'(CONVERGE_ERR_[A-Z_]+)'/g)) {
        if (code === undefined) continue;
        const previous = seen.get(code);
        expect(
          previous === undefined || previous === file,
          `${code} defined in ${previous} and ${file}`,
        ).toBe(true);
        seen.set(code, file);
        if (!catalogue.includes(`\`${code}\``)) missing.push(code);
      }
    }
    expect(seen.size).toBeGreaterThan(30);
    expect(missing).toEqual([]);
  });
});
