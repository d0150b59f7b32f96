import { ConvergeError } from '@converge/runtime';
import { parseAllDocuments } from 'yaml';
import { crdsOf } from './crds.ts';
import { defineKind, type Kind, type KindOptions } from './define-kind.ts';
import { CrdImportError } from './errors.ts';
import { SchemaWriter } from './import-schema.ts';
import { docComment, key, literal, quote } from './source.ts';

type Json = Readonly<Record<string, unknown>>;

/** Options of {@link importCrd}. */
export interface ImportCrdOptions {
  /** The module the generated source imports `defineKind` and `Type` from. Default `'@converge/kube'`. */
  readonly from?: string;
}

const ROOT_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
const PRESERVE = "Type.Object({}, { 'x-kubernetes-preserve-unknown-fields': true })";

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The CRDs of the YAML text, with their (1-based) document numbers; other kinds are skipped. */
function crdDocuments(text: string): { readonly document: number; readonly crd: Json }[] {
  if (typeof text !== 'string') throw new CrdImportError(0, '', 'the input is not text');
  const found: { document: number; crd: Json }[] = [];
  parseAllDocuments(text, { uniqueKeys: true }).forEach((doc, i) => {
    const document = i + 1;
    if (!('errors' in doc)) throw new CrdImportError(document, '', 'not a YAML document');
    const [error] = doc.errors;
    if (error !== undefined) throw new CrdImportError(document, '', `not YAML: ${error.message}`);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (cause) {
      throw new CrdImportError(document, '', `not YAML: ${String(cause)}`, { cause });
    }
    if (value === null || value === undefined) return;
    if (!isJson(value)) throw new CrdImportError(document, '', 'a document must be an object');
    const items = value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
    items.forEach((item: unknown, j) => {
      const at = items === value.items ? `items[${j}]` : '';
      if (!isJson(item)) throw new CrdImportError(document, at, 'must be an object');
      if (item.kind !== 'CustomResourceDefinition') return;
      if (item.apiVersion !== 'apiextensions.k8s.io/v1') {
        throw new CrdImportError(
          document,
          `${at}${at === '' ? '' : '.'}apiVersion`,
          'only apiextensions.k8s.io/v1 CRDs can be imported',
        );
      }
      found.push({ document, crd: item });
    });
  });
  if (found.length === 0)
    throw new CrdImportError(0, '', 'no apiextensions.k8s.io/v1 CustomResourceDefinition found');
  return found;
}

function field(crd: Json, path: string, document: number): unknown {
  let value: unknown = crd;
  for (const part of path.split('.')) value = isJson(value) ? value[part] : undefined;
  if (value === undefined) throw new CrdImportError(document, path, 'is required');
  return value;
}

function text(crd: Json, path: string, document: number): string {
  const value = field(crd, path, document);
  if (typeof value !== 'string' || value === '')
    throw new CrdImportError(document, path, 'must be a non-empty string');
  return value;
}

function pascal(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** One version of one CRD: its KindOptions as source, and as a value to check with defineKind. */
interface VersionSource {
  readonly name: string;
  readonly source: string;
  readonly kind: Kind;
}

function versionSource(crd: Json, index: number, document: number, uses: Set<string>): VersionSource {
  const at = `spec.versions[${index}]`;
  const spec = crd.spec as Json;
  const names = spec.names as Json;
  const version = (spec.versions as unknown[])[index];
  if (!isJson(version)) throw new CrdImportError(document, at, 'must be an object');
  const versionName = version.name;
  if (typeof versionName !== 'string' || versionName === '')
    throw new CrdImportError(document, `${at}.name`, 'must be a non-empty string');
  const kindName = names.kind as string;
  const schema = isJson(version.schema) ? version.schema.openAPIV3Schema : undefined;
  if (schema !== undefined && !isJson(schema))
    throw new CrdImportError(document, `${at}.schema.openAPIV3Schema`, 'must be an object');
  const root: Json = schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const rootAt = `${at}.schema.openAPIV3Schema`;
  const properties = isJson(root.properties) ? root.properties : {};
  for (const name of Object.keys(properties)) {
    if (!ROOT_FIELDS.has(name)) {
      throw new CrdImportError(
        document,
        `${rootAt}.properties.${name}`,
        'defineKind declares spec and status only; a top-level field besides apiVersion, kind, metadata, spec and status cannot be imported',
      );
    }
  }
  const subresources = isJson(version.subresources) ? version.subresources : {};
  const writer = new SchemaWriter({ document, uses });
  const indent = '  ';
  const specSource =
    properties.spec === undefined
      ? PRESERVE
      : writer.write(properties.spec, `${rootAt}.properties.spec`, indent);
  const statusSource =
    properties.status !== undefined
      ? writer.write(properties.status, `${rootAt}.properties.status`, indent)
      : subresources.status !== undefined
        ? PRESERVE
        : undefined;
  const options: Record<string, unknown> = {
    group: spec.group,
    version: versionName,
    kind: kindName,
    plural: names.plural,
    ...(names.singular !== undefined && names.singular !== kindName.toLowerCase()
      ? { singular: names.singular }
      : {}),
    ...(Array.isArray(names.shortNames) && names.shortNames.length > 0
      ? { shortNames: names.shortNames }
      : {}),
    ...(Array.isArray(names.categories) && names.categories.length > 0
      ? { categories: names.categories }
      : {}),
    ...(spec.scope === 'Cluster' ? { scope: 'Cluster' } : {}),
    ...(version.served === false ? { served: false } : {}),
    ...(version.storage === false ? { storage: false } : {}),
    ...(version.deprecated === true ? { deprecated: true } : {}),
    ...(version.deprecationWarning !== undefined ? { deprecationWarning: version.deprecationWarning } : {}),
    ...(root.description !== undefined ? { description: root.description } : {}),
  };
  const extras: Record<string, unknown> = {
    ...(Array.isArray(version.additionalPrinterColumns) && version.additionalPrinterColumns.length > 0
      ? { printerColumns: version.additionalPrinterColumns }
      : {}),
    ...(subresources.scale !== undefined ? { scale: subresources.scale } : {}),
    ...(Array.isArray(root['x-kubernetes-validations']) && root['x-kubernetes-validations'].length > 0
      ? { validations: root['x-kubernetes-validations'] }
      : {}),
  };
  const value = {
    ...options,
    spec: properties.spec ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    ...(statusSource === undefined
      ? {}
      : { status: properties.status ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }),
    ...extras,
  };
  let kind: Kind;
  try {
    kind = defineKind(value as unknown as KindOptions) as unknown as Kind;
  } catch (cause) {
    if (!(cause instanceof ConvergeError)) throw cause;
    throw new CrdImportError(document, at, `cannot be declared with defineKind: ${cause.message}`, { cause });
  }
  const entries = [
    ...Object.entries(options).map(([k, v]) => `${indent}${key(k)}: ${literal(v, indent)},`),
    `${indent}spec: ${specSource},`,
    ...(statusSource === undefined ? [] : [`${indent}status: ${statusSource},`]),
    ...Object.entries(extras).map(([k, v]) => `${indent}${key(k)}: ${literal(v, indent)},`),
  ];
  const constName = `${kindName.charAt(0).toLowerCase()}${kindName.slice(1)}${pascal(versionName)}`;
  const typeName = `${kindName}${pascal(versionName)}`;
  const group = String(spec.group);
  const source =
    `${docComment(root.description, '') || `/** The ${group}/${versionName} ${kindName} kind. */\n`}` +
    `export const ${constName} = defineKind({\n${entries.join('\n')}\n});\n\n` +
    `/** An object of the ${quote(`${group}/${versionName}`).slice(1, -1)} ${kindName} kind. */\n` +
    `export type ${typeName} = ObjectOfKind<typeof ${constName}>;\n`;
  return { name: constName, source, kind };
}

function crdSources(crd: Json, document: number, uses: Set<string>): VersionSource[] {
  text(crd, 'spec.group', document);
  text(crd, 'spec.names.kind', document);
  text(crd, 'spec.names.plural', document);
  const versions = field(crd, 'spec.versions', document);
  if (!Array.isArray(versions) || versions.length === 0)
    throw new CrdImportError(document, 'spec.versions', 'must be a non-empty list');
  const sources = versions.map((_, i) => versionSource(crd, i, document, uses));
  try {
    crdsOf(sources.map((s) => s.kind));
  } catch (cause) {
    if (!(cause instanceof ConvergeError)) throw cause;
    throw new CrdImportError(document, 'spec.versions', cause.message, { cause });
  }
  return sources;
}

/**
 * TypeScript source of a module declaring, with {@link defineKind} and TypeBox, the kinds of the
 * CustomResourceDefinitions in `crdYaml` (one or more YAML documents; a `List` of CRDs; other
 * kinds are skipped): one export per version, named after the kind and version (`websiteV1`, with
 * the object type `WebsiteV1`). `crdsOf` of the exported kinds gives the CRDs' schemas back (see
 * docs/guide/kinds.md for what is normalised). Throws `CrdImportError` for text that is not YAML,
 * no CRD, or a CRD that is malformed or cannot be declared with `defineKind`.
 *
 * @example
 * writeFileSync('src/kinds/certificates.ts', importCrd(readFileSync('certificates.crd.yaml', 'utf8')));
 */
export function importCrd(crdYaml: string, options: ImportCrdOptions = {}): string {
  const uses = new Set<string>();
  const names = new Set<string>();
  const blocks: string[] = [];
  const crdNames: string[] = [];
  for (const { document, crd } of crdDocuments(crdYaml)) {
    const sources = crdSources(crd, document, uses);
    const metadata = isJson(crd.metadata) ? crd.metadata : {};
    crdNames.push(typeof metadata.name === 'string' ? metadata.name : `${sources[0]?.kind.type.plural}`);
    for (const source of sources) {
      if (names.has(source.name)) {
        throw new CrdImportError(
          document,
          'spec.names.kind',
          `a second ${source.name} (import CRDs of the same kind into separate modules)`,
        );
      }
      names.add(source.name);
      blocks.push(source.source);
    }
  }
  const imports = ['defineKind', ...[...uses].sort(), 'type ObjectOfKind', 'Type'];
  return (
    `// Generated by \`converge import\` from ${crdNames.join(', ')}. Do not edit: re-run the import to update;\n` +
    '// `converge import --check` fails when this file differs from what the CRDs give.\n' +
    `import { ${imports.join(', ')} } from ${quote(options.from ?? '@converge/kube')};\n\n` +
    `${blocks.join('\n')}`
  );
}
