/**
 * `importCrd`: CRD YAML → a TypeScript module of `defineKind` declarations. The round trip — import,
 * load the generated module, `crdsOf` — gives back the CRD (normalised as docs/guide/kinds.md says),
 * for the examples' CRDs and a CRD shaped like kubebuilder's; the generated module type-checks; and
 * malformed input is a `CrdImportError`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { compileCrdValidations } from '@converge/apiserver';
import { CrdImportError, crdsOf, importCrd, type Kind } from '@converge/kube';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { typeCheck } from '../../scripts/tsc.ts';
import { normaliseCrd } from './normalise.ts';

const root = new URL('../..', import.meta.url).pathname;
// Inside the repository, so that the generated modules resolve @converge/kube and typebox.
const scratch = mkdtempSync(join(root, 'node_modules', '.cache', 'converge-import-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const sources = [
  'examples/configmap-generator/manifests/crd.yaml',
  'examples/runtime-kinds/manifests/crds.yaml',
  'examples/watchers/manifests/crd.yaml',
  'examples/website/manifests/crd.yaml',
  'test/kinds/testdata/backups.crd.yaml',
];

function crdsIn(text: string): Record<string, unknown>[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Record<string, unknown> | null)
    .filter((d): d is Record<string, unknown> => d?.kind === 'CustomResourceDefinition');
}

async function load(name: string, source: string): Promise<Kind[]> {
  const file = join(scratch, `${name}.ts`);
  writeFileSync(file, source);
  const module = (await import(file)) as Record<string, unknown>;
  return Object.values(module).filter((v): v is Kind => typeof v === 'object' && v !== null && 'schema' in v);
}

describe('importCrd round trip', () => {
  it.each(sources)('%s: import, load, crdsOf gives the CRD back', async (path) => {
    const text = readFileSync(join(root, path), 'utf8');
    const source = importCrd(text);
    const kinds = await load(path.replaceAll('/', '_'), source);
    const regenerated = crdsOf(kinds);
    expect(regenerated.map(normaliseCrd)).toEqual(crdsIn(text).map(normaliseCrd));
    for (const crd of regenerated) expect(compileCrdValidations(crd)).toEqual([]);
    // The importer's output is stable: importing the regenerated CRDs gives the same source.
    const again = importCrd(regenerated.map((crd) => JSON.stringify(crd)).join('\n---\n'));
    expect(again.split('\n').slice(2)).toEqual(source.split('\n').slice(2));
  });

  it('writes doc comments from descriptions, kept to their first sentence', () => {
    const source = importCrd(readFileSync(join(root, 'test/kinds/testdata/backups.crd.yaml'), 'utf8'));
    expect(source).toContain(
      '/** Backup is the Schema for the backups API. */\nexport const backupV1 = defineKind({',
    );
    expect(source).toContain(
      "    /** Cron schedule. */\n    schedule: Type.String({ description: 'Cron schedule.'",
    );
    expect(source).toContain('export type BackupV1beta1 = ObjectOfKind<typeof backupV1beta1>;');
    expect(source).toContain(
      "import { defineKind, IntOrString, type ObjectOfKind, Type } from '@converge/kube';",
    );
  });

  it('generates modules that type-check with tsc (strict)', () => {
    const dir = join(scratch, 'typecheck');
    mkdirSync(dir);
    for (const path of sources) {
      const source = importCrd(readFileSync(join(root, path), 'utf8'));
      writeFileSync(join(dir, `${path.replaceAll('/', '_').replace('.yaml', '')}.ts`), source);
    }
    writeFileSync(
      join(dir, 'use.ts'),
      [
        "import type { BackupV1 } from './test_kinds_testdata_backups.crd.ts';",
        "const backup: BackupV1 = { metadata: { name: 'b' }, spec: { schedule: '0 * * * *', target: { bucket: 'b' }, maxUnavailable: '10%' } };",
        'export const workers: number | undefined = backup.spec.workers;',
        "export const phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | undefined = backup.status?.phase;",
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: relative(dir, join(root, 'tsconfig.base.json')),
        compilerOptions: {
          noEmit: true,
          composite: false,
          incremental: false,
          allowImportingTsExtensions: true,
          rootDir: '.',
        },
        include: ['*.ts'],
      }),
    );
    expect(typeCheck(join(dir, 'tsconfig.json'))).toEqual([]);
  }, 120_000);
});

describe('importCrd of lists and several CRDs', () => {
  const crd = (group: string, kind: string): string =>
    `{ apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: { name: ${kind.toLowerCase()}s.${group} }, spec: { group: ${group}, names: { kind: ${kind}, plural: ${kind.toLowerCase()}s }, scope: Namespaced, versions: [{ name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object, properties: { spec: { type: object } } } } }] } }`;

  it('imports the CRDs of a List (kubectl get crd -o yaml) and of several documents into one module', () => {
    const list = `apiVersion: v1\nkind: List\nitems:\n  - ${crd('a.io', 'Foo')}\n  - ${crd('a.io', 'Bar')}\n`;
    const fromList = importCrd(list);
    expect(fromList).toContain('export const fooV1 = defineKind({');
    expect(fromList).toContain('export const barV1 = defineKind({');
    const documents = `${crd('a.io', 'Foo')}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: skipped }\n---\n${crd('a.io', 'Bar')}\n`;
    expect(importCrd(documents).split('\n').slice(1)).toEqual(fromList.split('\n').slice(1));
  });

  it('refuses two CRDs of one kind and version in one module', () => {
    expect(() => importCrd(`${crd('a.io', 'Foo')}\n---\n${crd('b.io', 'Foo')}\n`)).toThrow(
      'cannot import document 2 at spec.names.kind: a second fooV1 (import CRDs of the same kind into separate modules)',
    );
  });
});

describe('importCrd refuses what it cannot import', () => {
  const bad: [string, string, string][] = [
    ['not YAML', 'spec: [', 'not YAML'],
    [
      'no CRD',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: a }\n',
      'no apiextensions.k8s.io/v1 CustomResourceDefinition',
    ],
    ['a scalar document', '42\n', 'a document must be an object'],
    [
      'a v1beta1 CRD',
      'apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\n',
      'only apiextensions.k8s.io/v1',
    ],
    [
      'no group',
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {}\n',
      'spec.group: is required',
    ],
    [
      'a schema without types',
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: { group: a.io, names: { kind: A, plural: as }, scope: Namespaced, versions: [{ name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object, properties: { spec: { properties: { x: { type: string } } } } } } }] }\n',
      'spec.versions[0].schema.openAPIV3Schema.properties.spec.type: must not be empty',
    ],
    [
      'two storage versions',
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: { group: a.io, names: { kind: A, plural: as }, scope: Namespaced, versions: [{ name: v1, served: true, storage: true }, { name: v2, served: true, storage: true }] }\n',
      'exactly one version must have storage: true',
    ],
    [
      'a top-level field besides spec and status',
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: { group: a.io, names: { kind: A, plural: as }, scope: Namespaced, versions: [{ name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object, properties: { data: { type: string } } } } }] }\n',
      'properties.data: defineKind declares spec and status only',
    ],
    [
      'a group without a dot',
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: { group: local, names: { kind: A, plural: as }, scope: Namespaced, versions: [{ name: v1, served: true, storage: true }] }\n',
      'invalid option group',
    ],
  ];
  it.each(bad)('%s', (_, text, message) => {
    expect(() => importCrd(text)).toThrow(CrdImportError);
    expect(() => importCrd(text)).toThrow(message);
  });
});
