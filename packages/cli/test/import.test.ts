/**
 * `converge import`: modules written from CRD files (the real command in a process, then the module
 * it wrote loaded and turned back into the CRD), `--check` passing when up to date and failing on
 * drift, and malformed command lines, files and CRDs.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crdsOf, importCrd, type Kind } from '@converge/kube';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { runImport } from '../src/import-cmd.ts';
import { parseCommand, UsageError } from '../src/index.ts';
import type { RunIo } from '../src/process-io.ts';
import { spawnConverge, within } from './processes.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CRD = join(ROOT, 'examples', 'configmap-generator', 'manifests', 'crd.yaml');
/** Below the repository (its ignored .converge/), so generated modules resolve @converge/kube. */
const dir = (() => {
  mkdirSync(join(ROOT, '.converge'), { recursive: true });
  return mkdtempSync(join(ROOT, '.converge', 'import-'));
})();

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function io(): RunIo & { readonly lines: { out: string[]; err: string[] } } {
  const lines = { out: [] as string[], err: [] as string[] };
  return {
    lines,
    out: (line) => lines.out.push(line),
    err: (line) => lines.err.push(line),
    stopped: new Promise(() => {}),
  };
}

describe('converge import', () => {
  it('writes a module per CRD file that gives the CRD back, and --check passes on it', async () => {
    const out = join(dir, 'process');
    const written = spawnConverge(ROOT, ['import', CRD, '--out', out]);
    const exit = await within('converge import', written.exited, () => written.output());
    expect(exit.code).toBe(0);
    expect(written.stdout()).toBe(`wrote ${join(out, 'crd.ts')}\n`);
    const module = (await import(join(out, 'crd.ts'))) as Record<string, unknown>;
    const kinds = Object.values(module) as Kind[];
    const [crd] = crdsOf(kinds);
    expect(crd?.metadata.name).toBe('configmapgenerators.examples.converge.dev');
    expect(crd?.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec).toEqual({
      type: 'object',
      required: ['data'],
      properties: {
        data: { type: 'object', additionalProperties: { type: 'string' } },
        copies: { type: 'integer', default: 1, maximum: 100, minimum: 0 },
      },
    });
    const check = spawnConverge(ROOT, ['import', CRD, '--out', out, '--check']);
    expect((await within('converge import --check', check.exited, () => check.output())).code).toBe(0);
    expect(check.stdout()).toBe('1 module(s) up to date\n');
  });

  it('--check fails listing modules that drifted from their CRD files, and missing ones', () => {
    const out = join(dir, 'drift');
    const crdFile = join(dir, 'gadgets.yaml');
    const text = readFileSync(CRD, 'utf8');
    writeFileSync(crdFile, text);
    expect(runImport({ files: [CRD, crdFile], out, check: false, from: '@converge/kube' }, io())).toBe(0);
    const clean = io();
    expect(runImport({ files: [CRD, crdFile], out, check: true, from: '@converge/kube' }, clean)).toBe(0);
    expect(clean.lines.out).toEqual(['2 module(s) up to date']);
    // The CRD someone else owns changes: copies may now be 1000.
    writeFileSync(crdFile, text.replace('maximum: 100', 'maximum: 1000'));
    rmSync(join(out, 'crd.ts'));
    const drift = io();
    expect(runImport({ files: [CRD, crdFile], out, check: true, from: '@converge/kube' }, drift)).toBe(1);
    expect(drift.lines.err).toEqual([
      `${join(out, 'crd.ts')}: missing, expected what its CRD file gives`,
      `${join(out, 'gadgets.ts')}: differs from what its CRD file gives`,
      'converge import: 2 module(s) out of date; run converge import without --check',
    ]);
    expect(readFileSync(join(out, 'gadgets.ts'), 'utf8')).toBe(importCrd(text));
  });

  it('reports an unreadable file and a malformed CRD, writing nothing', () => {
    const out = join(dir, 'bad');
    const missing = io();
    expect(
      runImport({ files: [join(dir, 'nope.yaml')], out, check: false, from: '@converge/kube' }, missing),
    ).toBe(1);
    expect(missing.lines.err[0]).toMatch(/^converge import: cannot read .*nope\.yaml: ENOENT/);
    const broken = join(dir, 'broken.yaml');
    writeFileSync(
      broken,
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: { group: a.io }\n',
    );
    const malformed = io();
    expect(runImport({ files: [CRD, broken], out, check: false, from: '@converge/kube' }, malformed)).toBe(1);
    expect(malformed.lines.err).toEqual([
      `converge import: ${broken}: cannot import document 1 at spec.names.kind: is required`,
    ]);
    expect(() => readFileSync(join(out, 'crd.ts'))).toThrow();
  });

  it('parses its command line and refuses malformed ones with a usage error', () => {
    expect(parseCommand(['import', 'a.yaml', 'b.yml', '--out', 'src/kinds', '--check'])).toEqual({
      command: 'import',
      files: ['a.yaml', 'b.yml'],
      out: 'src/kinds',
      check: true,
      from: '@converge/kube',
    });
    expect(parseCommand(['import', '--help'])).toEqual({ command: 'help', topic: 'import' });
    const problems: [string[], string][] = [
      [['import'], 'converge import: give at least one CRD YAML file'],
      [['import', 'crd.txt'], 'converge import: a CRD file is .yaml, .yml or .json, got "crd.txt"'],
      [
        ['import', 'a/crd.yaml', 'b/crd.yaml'],
        'converge import: "a/crd.yaml" and "b/crd.yaml" would both become "crd.ts"',
      ],
      [['import', 'a.yaml', '--out'], 'converge import: --out needs a value (DIR)'],
      [
        ['import', 'a.yaml', '--from', "x'y"],
        `converge import: --from must be a module specifier such as @converge/kube, got "x'y"`,
      ],
      [['import', 'a.yaml', '--colour'], 'converge import: unknown option --colour'],
    ];
    for (const [argv, message] of problems) {
      expect(() => parseCommand(argv)).toThrow(UsageError);
      expect(() => parseCommand(argv)).toThrow(message);
    }
  });

  it('throws only usage errors for any arguments', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.constantFrom('--out', '--check', '--from', 'a.yaml', '-h'))),
        (args) => {
          try {
            const parsed = parseCommand(['import', ...args]);
            expect(['import', 'help']).toContain(parsed.command);
          } catch (error) {
            expect(error).toBeInstanceOf(UsageError);
            expect((error as Error).message).not.toContain('\n');
          }
        },
      ),
    );
  });
});
