import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(new URL('..', import.meta.url).pathname);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+'([^']+)'/gm)].map((m) => m[1] as string);
}

/** The top-level folder of a file inside a package's src/ ('' for files directly in src/). */
function area(srcDir: string, file: string): string {
  const rel = relative(srcDir, file);
  return rel.includes('/') ? (rel.split('/')[0] as string) : '';
}

/**
 * Whether `spec` (`@converge/<pkg>/<subpath>`) is an entry point its package declares in `exports`
 * (a subpath mapped to a file, not one blocked with null).
 */
function declaredEntry(spec: string): boolean {
  const [, pkg, ...rest] = spec.split('/');
  try {
    const manifest = JSON.parse(
      readFileSync(join(root, 'packages', pkg as string, 'package.json'), 'utf8'),
    ) as {
      exports?: Record<string, unknown>;
    };
    const target = manifest.exports?.[`./${rest.join('/')}`];
    return target !== undefined && target !== null;
  } catch {
    return false;
  }
}

describe('architecture rules (DESIGN.md)', () => {
  const packages = ['runtime', 'store', 'apiserver', 'cli'];

  it('runtime imports none of the other packages, and nothing imports the cli', () => {
    const offenders: string[] = [];
    for (const pkg of packages) {
      for (const file of files(join(root, 'packages', pkg, 'src'))) {
        for (const spec of imports(file)) {
          if (pkg === 'runtime' && spec.startsWith('@converge/'))
            offenders.push(`${relative(root, file)} → ${spec}`);
          if (pkg !== 'cli' && spec.startsWith('@converge/cli'))
            offenders.push(`${relative(root, file)} → ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('code outside a folder imports only that folder’s index.ts, and packages only other packages’ entry points', () => {
    const offenders: string[] = [];
    for (const pkg of packages) {
      const src = join(root, 'packages', pkg, 'src');
      for (const file of files(src)) {
        for (const spec of imports(file)) {
          if (spec.startsWith('@converge/') && spec.split('/').length > 2 && !declaredEntry(spec)) {
            offenders.push(`${relative(root, file)} → ${spec}`);
          }
          if (!spec.startsWith('.')) continue;
          const target = resolve(dirname(file), spec);
          if (!target.startsWith(src)) {
            offenders.push(`${relative(root, file)} → ${spec}`);
            continue;
          }
          const from = area(src, file);
          const to = area(src, target);
          // Inside src/, crossing into another folder must land on its index.ts.
          if (to !== '' && from !== to && relative(join(src, to), target) !== 'index.ts') {
            offenders.push(`${relative(root, file)} → ${spec}`);
          }
        }
      }
    }
    // testing/ is the public home of test doubles and may reach into the folders whose fakes it exports.
    expect(offenders.filter((o) => !o.startsWith('packages/runtime/src/testing/'))).toEqual([]);
  });

  it('the folders of runtime form no import cycle', () => {
    const src = join(root, 'packages', 'runtime', 'src');
    const edges = new Map<string, Set<string>>();
    for (const file of files(src)) {
      const from = area(src, file);
      for (const spec of imports(file)) {
        if (!spec.startsWith('.')) continue;
        const to = area(src, resolve(dirname(file), spec));
        if (from === '' || to === '' || from === to || from === 'testing') continue;
        if (!edges.has(from)) edges.set(from, new Set());
        edges.get(from)?.add(to);
      }
    }
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (node: string, path: string[]): void => {
      if (state.get(node) === 'done') return;
      if (state.get(node) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
        return;
      }
      state.set(node, 'visiting');
      for (const next of edges.get(node) ?? []) visit(next, [...path, node]);
      state.set(node, 'done');
    };
    for (const node of edges.keys()) visit(node, []);
    expect(edges.size).toBeGreaterThan(10);
    expect(cycles).toEqual([]);
  });
});
