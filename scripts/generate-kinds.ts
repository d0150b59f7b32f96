/**
 * Generates `packages/runtime/src/kinds/`: the typed built-in kinds users import from
 * `@converge/runtime` (`Deployment`, `deploymentType`, `PodSpec`, …), from the Kubernetes 1.32
 * OpenAPI v2 document in `../shared/data/kubernetes-1.32/` (next to the repository).
 *
 *   node scripts/generate-kinds.ts [--openapi FILE] [--out DIR]
 *
 * What it derives from the document: every definition reachable from the kinds below, as
 * interfaces with `readonly` fields, optional unless the schema requires them; each kind's
 * resource (plural), scope and status subresource from the document's paths. What the document
 * cannot say (short names, whether Kubernetes tracks `metadata.generation`) is in {@link KINDS}.
 * Kubernetes' descriptions are left out; the few comments are ours.
 *
 * `packages/runtime/test/kinds-generated.test.ts` runs it again and compares with the committed
 * files.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  compareNames,
  type Declared,
  FileWriter,
  HEADER,
  type KindFacts,
  lowerFirst,
  type RuntimeType,
} from './generate-kinds/file-writer.ts';
import {
  apiVersion,
  definitionOf,
  fail,
  type OpenApiDocument,
  packageOf,
  reachable,
  references,
  resourceOf,
  type Schema,
  scalarOf,
} from './generate-kinds/openapi.ts';

/** The built-in kinds `@converge/runtime` ships typed. */
export const KINDS: readonly KindFacts[] = [
  { group: '', version: 'v1', kind: 'ConfigMap', shortNames: ['cm'], generation: false },
  { group: '', version: 'v1', kind: 'Secret', shortNames: [], generation: false },
  { group: '', version: 'v1', kind: 'Service', shortNames: ['svc'], generation: false },
  { group: '', version: 'v1', kind: 'ServiceAccount', shortNames: ['sa'], generation: false },
  { group: '', version: 'v1', kind: 'Pod', shortNames: ['po'], generation: false },
  { group: '', version: 'v1', kind: 'Namespace', shortNames: ['ns'], generation: false },
  { group: '', version: 'v1', kind: 'Event', shortNames: ['ev'], generation: false },
  { group: '', version: 'v1', kind: 'PersistentVolumeClaim', shortNames: ['pvc'], generation: false },
  { group: 'apps', version: 'v1', kind: 'Deployment', shortNames: ['deploy'], generation: true },
  { group: 'apps', version: 'v1', kind: 'StatefulSet', shortNames: ['sts'], generation: true },
  { group: 'apps', version: 'v1', kind: 'DaemonSet', shortNames: ['ds'], generation: true },
  { group: 'apps', version: 'v1', kind: 'ReplicaSet', shortNames: ['rs'], generation: true },
  { group: 'batch', version: 'v1', kind: 'Job', shortNames: [], generation: true },
  { group: 'batch', version: 'v1', kind: 'CronJob', shortNames: ['cj'], generation: true },
  { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', shortNames: ['ing'], generation: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', shortNames: [], generation: false },
  {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'RoleBinding',
    shortNames: [],
    generation: false,
  },
  {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRole',
    shortNames: [],
    generation: false,
  },
  {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRoleBinding',
    shortNames: [],
    generation: false,
  },
  { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', shortNames: [], generation: false },
  { group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', shortNames: ['pdb'], generation: true },
  {
    group: 'autoscaling',
    version: 'v2',
    kind: 'HorizontalPodAutoscaler',
    shortNames: ['hpa'],
    generation: false,
  },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    shortNames: ['crd', 'crds'],
    generation: true,
  },
];

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/** Definitions the runtime declares itself; the generator does not descend into them. */
const RUNTIME_TYPES: Readonly<Record<string, RuntimeType>> = {
  [`${META}.ObjectMeta`]: { name: 'ObjectMeta', from: '../object/index.ts' },
  [`${META}.Condition`]: {
    name: 'Condition',
    from: '../client/index.ts',
    properties: ['lastTransitionTime', 'message', 'observedGeneration', 'reason', 'status', 'type'],
  },
  [`${META}.LabelSelector`]: {
    name: 'LabelSelector',
    from: '../predicate/index.ts',
    properties: ['matchExpressions', 'matchLabels'],
  },
  'io.k8s.api.core.v1.ObjectReference': {
    name: 'ObjectReference',
    from: '../events/index.ts',
    properties: ['apiVersion', 'fieldPath', 'kind', 'name', 'namespace', 'resourceVersion', 'uid'],
  },
  'io.k8s.api.core.v1.EventSource': {
    name: 'CoreEventSource',
    from: '../events/index.ts',
    properties: ['component', 'host'],
  },
  'io.k8s.api.coordination.v1.Lease': { name: 'Lease', from: '../leader-election/index.ts' },
};

/** A kind the runtime already declares with its constant: its file re-exports them. */
interface RuntimeKind {
  readonly types: readonly string[];
  readonly constant: string;
  readonly from: string;
}

/** Kinds the runtime already declares, by `apiVersion/kind`. */
const RUNTIME_KINDS: Readonly<Record<string, RuntimeKind>> = {
  'coordination.k8s.io/v1/Lease': {
    types: ['Lease', 'LeaseSpec'],
    constant: 'leaseType',
    from: '../leader-election/index.ts',
  },
};

/** Generated names that would collide with a runtime export, and what they are called instead. */
const RENAMES: Readonly<Record<string, string>> = {
  'io.k8s.api.core.v1.EventSeries': 'CoreEventSeries',
};

const APIEXTENSIONS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1';

/**
 * Definitions Kubernetes encodes by hand, so the document gives them neither a type nor fields:
 * their TypeScript types, naming only definitions of the same file.
 */
const ALIASES: Readonly<Record<string, string>> = {
  [`${APIEXTENSIONS}.JSON`]: 'unknown',
  [`${APIEXTENSIONS}.JSONSchemaPropsOrArray`]: 'JSONSchemaProps | readonly JSONSchemaProps[]',
  [`${APIEXTENSIONS}.JSONSchemaPropsOrBool`]: 'JSONSchemaProps | boolean',
  [`${APIEXTENSIONS}.JSONSchemaPropsOrStringArray`]: 'JSONSchemaProps | readonly string[]',
};

/** Core definitions are many: those reachable from these roots get files of their own, in this order. */
const SECTIONS: Readonly<Record<string, readonly { readonly file: string; readonly root: string }[]>> = {
  'core-v1': [
    { file: 'core-v1-volume', root: 'io.k8s.api.core.v1.Volume' },
    { file: 'core-v1-pod', root: 'io.k8s.api.core.v1.PodSpec' },
  ],
};

/** The names the runtime's main entry point exports, read from its index files (generated ones aside). */
export function runtimeExports(runtimeSrc: string): Set<string> {
  const names = new Set<string>();
  const seen = new Set<string>();
  const read = (file: string): void => {
    if (seen.has(file) || file.includes(`${join(runtimeSrc, 'kinds')}`)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^export \* from '([^']+)';/gm))
      read(resolve(dirname(file), m[1] as string));
    for (const m of text.matchAll(/^export (?:type )?\{([^}]*)\}/gm)) {
      for (const part of (m[1] as string).split(',')) {
        const name = part
          .trim()
          .replace(/^type /, '')
          .split(/\s+as\s+/)
          .at(-1);
        if (name) names.add(name);
      }
    }
    for (const m of text.matchAll(
      /^export (?:declare )?(?:abstract )?(?:interface|type|const|function|class|let) (\w+)/gm,
    )) {
      names.add(m[1] as string);
    }
  };
  read(join(runtimeSrc, 'index.ts'));
  return names;
}

/** What the runtime declares itself: the generator neither declares it nor descends into it. */
function isRuntimeType(definition: string): boolean {
  return RUNTIME_TYPES[definition] !== undefined;
}

/** Fails when a runtime type no longer has the fields it was written for. */
function checkRuntimeTypes(doc: OpenApiDocument): void {
  for (const [definition, runtime] of Object.entries(RUNTIME_TYPES)) {
    if (runtime.properties === undefined) continue;
    const actual = Object.keys(doc.definitions[definition]?.properties ?? {}).sort();
    if (actual.join() !== [...runtime.properties].sort().join()) {
      fail(
        `${definition} has ${actual.join(', ')}; ${runtime.name} was written for ${runtime.properties.join(', ')}`,
      );
    }
  }
}

/** The file of each definition of a package split into sections (see {@link SECTIONS}). */
function sectionFiles(doc: OpenApiDocument): Map<string, string> {
  const files = new Map<string, string>();
  for (const [pkg, sections] of Object.entries(SECTIONS)) {
    for (const { file, root } of sections) {
      for (const definition of reachable(doc, [root], isRuntimeType)) {
        if (packageOf(definition) === pkg && !files.has(definition)) files.set(definition, file);
      }
    }
  }
  return files;
}

/**
 * The generated files, name → content. `taken` are the names the runtime already exports: a
 * generated name among them is a collision, reported unless {@link RENAMES} resolves it.
 */
export function generateKinds(doc: OpenApiDocument, taken: ReadonlySet<string>): Map<string, string> {
  checkRuntimeTypes(doc);
  const kinds = new Map(
    KINDS.map((facts) => [definitionOf(doc, facts), { ...facts, resource: resourceOf(doc, facts) }]),
  );
  const versions = new Map([...kinds].map(([d, k]) => [packageOf(d), apiVersion(k.group, k.version)]));
  const sections = sectionFiles(doc);
  const declared = new Map<string, Declared>();
  const byName = new Map<string, string>();
  for (const definition of [...reachable(doc, [...kinds.keys()], isRuntimeType)].sort()) {
    if (isRuntimeType(definition) || scalarOf(doc.definitions[definition] as Schema) !== undefined) continue;
    const kind = kinds.get(definition);
    const name = RENAMES[definition] ?? (definition.split('.').at(-1) as string);
    const constant = kind === undefined ? undefined : `${lowerFirst(kind.kind)}Type`;
    const other = byName.get(name);
    if (other !== undefined) fail(`${definition} and ${other} would both be ${name}: add one to RENAMES`);
    for (const n of [name, constant]) {
      if (n !== undefined && taken.has(n))
        fail(`${definition}: the runtime already exports ${n}; see RENAMES`);
    }
    byName.set(name, definition);
    const pkg = packageOf(definition);
    const alias = ALIASES[definition];
    declared.set(definition, {
      definition,
      name,
      file: (kind === undefined ? sections.get(definition) : undefined) ?? pkg,
      apiVersion: versions.get(pkg) ?? pkg.replace('-', '/'),
      ...(kind === undefined ? {} : { kind }),
      ...(alias === undefined ? {} : { alias }),
    });
  }
  const writers = new Map<string, FileWriter>();
  const writer = (file: string): FileWriter => {
    const w = writers.get(file) ?? new FileWriter(file, doc, declared, RUNTIME_TYPES);
    writers.set(file, w);
    return w;
  };
  // Kinds first, in the order of KINDS; then the definitions they use, by name.
  const ordered = [
    ...[...kinds.keys()].map((d) => declared.get(d)).filter((d) => d !== undefined),
    ...[...declared.values()]
      .filter((d) => d.kind === undefined)
      .sort((a, b) => compareNames(a.name, b.name)),
  ];
  const usedBy = new Map<string, string>();
  for (const d of ordered) {
    for (const ref of references(doc.definitions[d.definition] as Schema)) {
      if (!usedBy.has(ref) && ref !== d.definition) usedBy.set(ref, d.name);
    }
  }
  for (const d of ordered) writer(d.file).declare(d, usedBy.get(d.definition));
  for (const [definition, k] of kinds) {
    const provided = RUNTIME_KINDS[`${apiVersion(k.group, k.version)}/${k.kind}`];
    if (provided === undefined) continue;
    if (!isRuntimeType(definition))
      fail(`${definition} is re-exported from the runtime but not a runtime type`);
    writer(packageOf(definition)).reexport(provided.types, provided.constant, provided.from);
  }
  const files = new Map<string, string>();
  for (const file of [...writers.keys()].sort()) files.set(`${file}.ts`, writer(file).text());
  files.set('index.ts', indexFile([...writers.keys()].sort()));
  return files;
}

/** Words joined into comment lines of at most `width` characters, each starting with ` * `. */
function wrap(words: readonly string[], width: number): string {
  const lines: string[] = [];
  let line = ' *';
  for (const word of words) {
    if (line.length + 1 + word.length > width) {
      lines.push(line);
      line = ' *';
    }
    line += ` ${word}`;
  }
  return [...lines, line].join('\n');
}

function indexFile(files: readonly string[]): string {
  const list = wrap(
    ['Kinds:', ...KINDS.map((k, i) => `${k.kind}${i === KINDS.length - 1 ? '.' : ','}`)],
    100,
  );
  return `${HEADER}
/**
 * Built-in Kubernetes kinds, typed: for each kind its object shape (\`Deployment\`, \`ConfigMap\`, …)
 * and its \`ResourceType\` constant (\`deploymentType\`, \`configMapType\`, …), from which the client
 * infers the shape — \`await client.get(deploymentType, key)\` is a \`Deployment\` — plus every type
 * those shapes use (\`PodSpec\`, \`Container\`, …). Generated from the Kubernetes 1.32 OpenAPI
 * document; fields are \`readonly\`, optional unless Kubernetes requires them, quantities and times
 * are strings, int-or-string fields \`number | string\`; \`metadata\` is the runtime's
 * {@link ObjectMeta}, so every kind is a {@link KubeObject}.
 *
${list}
 *
 * @example
 * const deployment = await client.get(deploymentType, { namespace: 'default', name: 'web' });
 * const replicas = deployment.spec?.replicas ?? 1;
 * const metadata = { name: 'web-settings', namespace: 'default' };
 * await client.create(configMapType, { metadata, data: { replicas: String(replicas) } });
 *
 * @module
 */
${files.map((f) => `export * from './${f}.ts';`).join('\n')}
`;
}

const root = fileURLToPath(new URL('..', import.meta.url));

/** Where the OpenAPI document is by default: `../shared/data/kubernetes-1.32/` next to the repository. */
export const DEFAULT_OPENAPI = resolve(root, '../shared/data/kubernetes-1.32/openapi-v2.json');

/** Generates into `out`: writes every file, removes generated files no longer produced. */
export function writeKinds(openapiPath: string, out: string): string[] {
  const doc = JSON.parse(readFileSync(openapiPath, 'utf8')) as OpenApiDocument;
  const files = generateKinds(doc, runtimeExports(join(root, 'packages/runtime/src')));
  mkdirSync(out, { recursive: true });
  for (const name of readdirSync(out)) {
    const path = join(out, name);
    if (!files.has(name) && name.endsWith('.ts') && readFileSync(path, 'utf8').startsWith(HEADER))
      rmSync(path);
  }
  for (const [name, text] of files) writeFileSync(join(out, name), text);
  return [...files.keys()];
}

function main(args: readonly string[]): void {
  const option = (flag: string): string | undefined => {
    const i = args.indexOf(flag);
    return i < 0 ? undefined : (args[i + 1] ?? fail(`${flag} needs a value`));
  };
  const openapi = resolve(option('--openapi') ?? DEFAULT_OPENAPI);
  if (!existsSync(openapi)) fail(`no OpenAPI document at ${openapi} (pass --openapi FILE)`);
  const out = resolve(option('--out') ?? join(root, 'packages/runtime/src/kinds'));
  const written = writeKinds(openapi, out);
  console.log(`generate-kinds: wrote ${written.length} files to ${out}`);
}

if (import.meta.main) main(process.argv.slice(2));
