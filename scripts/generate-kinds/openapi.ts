/**
 * Reading the Kubernetes OpenAPI v2 document for `scripts/generate-kinds.ts`: definitions, their
 * references, and what the paths say about a kind's resource.
 */

/** A schema of the OpenAPI v2 document, as far as the generator reads it. */
export interface Schema {
  readonly type?: string;
  readonly format?: string;
  readonly $ref?: string;
  readonly items?: Schema;
  readonly additionalProperties?: Schema | boolean;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly 'x-kubernetes-group-version-kind'?: readonly GroupVersionKind[];
}

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

interface Operation {
  readonly 'x-kubernetes-action'?: string;
  readonly 'x-kubernetes-group-version-kind'?: GroupVersionKind;
}

/** The parts of the OpenAPI v2 document the generator reads. */
export interface OpenApiDocument {
  readonly definitions: Readonly<Record<string, Schema>>;
  readonly paths: Readonly<Record<string, { readonly get?: Operation }>>;
}

/** What the paths say about a kind. */
export interface Resource {
  readonly plural: string;
  readonly namespaced: boolean;
  readonly statusSubresource: boolean;
}

const REF = '#/definitions/';
/** `/api/v1/…` or `/apis/{group}/{version}/…`, maybe `namespaces/{namespace}/`, `{plural}/{name}`, maybe `/{subresource}`. */
const PATH =
  /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))\/(namespaces\/\{namespace\}\/)?([a-z0-9]+)\/\{name\}(?:\/([a-z]+))?$/;

export function fail(message: string): never {
  throw new Error(`generate-kinds: ${message}`);
}

/** `group/version`, or `version` for the core group. */
export function apiVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

function sameKind(a: GroupVersionKind | undefined, b: GroupVersionKind): boolean {
  return a !== undefined && a.group === b.group && a.version === b.version && a.kind === b.kind;
}

/** The resource serving a kind: plural and scope from its `…/{name}` path, status from `…/{name}/status`. */
export function resourceOf(doc: OpenApiDocument, kind: GroupVersionKind): Resource {
  const main: { plural: string; namespaced: boolean }[] = [];
  const subresources = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    const op = item.get;
    if (op?.['x-kubernetes-action'] !== 'get' || !sameKind(op['x-kubernetes-group-version-kind'], kind))
      continue;
    const m = PATH.exec(path);
    if (m === null) continue;
    const [, coreVersion, group = '', version = coreVersion, namespaced, plural = '', sub] = m;
    if (group !== kind.group || version !== kind.version) continue;
    if (sub === undefined) main.push({ plural, namespaced: namespaced !== undefined });
    else subresources.add(`${plural}/${sub}`);
  }
  const [found, ...others] = main;
  if (found === undefined || others.length > 0) {
    const gv = apiVersion(kind.group, kind.version);
    fail(`${kind.kind}: expected one path that reads a ${gv} ${kind.kind} by name, found ${main.length}`);
  }
  return {
    plural: found.plural,
    namespaced: found.namespaced,
    statusSubresource: subresources.has(`${found.plural}/status`),
  };
}

/** The name of the one definition carrying the kind's group-version-kind. */
export function definitionOf(doc: OpenApiDocument, kind: GroupVersionKind): string {
  const names = Object.entries(doc.definitions)
    .filter(([, schema]) => schema['x-kubernetes-group-version-kind']?.some((gvk) => sameKind(gvk, kind)))
    .map(([name]) => name);
  if (names.length !== 1) fail(`${kind.kind}: expected one definition, found ${names.join(', ') || 'none'}`);
  return names[0] as string;
}

/** `#/definitions/io.k8s.api.core.v1.PodSpec` → `io.k8s.api.core.v1.PodSpec`. */
export function refName(ref: string): string {
  if (!ref.startsWith(REF)) fail(`unsupported reference ${ref}`);
  return ref.slice(REF.length);
}

/** The TypeScript type of a schema that is a plain value (`int-or-string` is `number | string`). */
export function primitive(schema: Schema): string {
  if (schema.format === 'int-or-string') return 'number | string';
  if (schema.type === 'string') return 'string';
  if (schema.type === 'integer' || schema.type === 'number') return 'number';
  if (schema.type === 'boolean') return 'boolean';
  return 'unknown';
}

/** For a definition that is a plain value (Quantity, Time, MicroTime, IntOrString): its TypeScript type. */
export function scalarOf(schema: Schema): string | undefined {
  if (schema.properties !== undefined || schema.type === 'object' || schema.type === undefined)
    return undefined;
  return primitive(schema);
}

/** The definitions a schema references, at any depth, in document order. */
export function references(schema: Schema): string[] {
  const out: string[] = [];
  const visit = (s: Schema | boolean | undefined): void => {
    if (typeof s !== 'object') return;
    if (s.$ref !== undefined) out.push(refName(s.$ref));
    visit(s.items);
    visit(s.additionalProperties);
    for (const p of Object.values(s.properties ?? {})) visit(p);
  };
  visit(schema);
  return out;
}

/** Every definition reachable from `roots` (included), not descending into scalars or where `stop` says so. */
export function reachable(
  doc: OpenApiDocument,
  roots: readonly string[],
  stop: (definition: string) => boolean,
): Set<string> {
  const seen = new Set<string>();
  const pending = [...roots];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (seen.has(name)) continue;
    const schema = doc.definitions[name] ?? fail(`missing definition ${name}`);
    seen.add(name);
    if (!stop(name) && scalarOf(schema) === undefined) pending.push(...references(schema));
  }
  return seen;
}

/** The Go package of a definition: `io.k8s.api.apps.v1.DeploymentSpec` → `apps-v1`. */
export function packageOf(definition: string): string {
  const parts = definition.split('.');
  return `${parts.at(-3)}-${parts.at(-2)}`;
}
