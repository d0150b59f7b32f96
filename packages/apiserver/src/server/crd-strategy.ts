import type { KubeObject, StatusCause } from '@converge/runtime';
import type { JsonObject, MutableObject, Strategy } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { asObject, ensureObject, setDefault } from './json-util.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;

/** Validates the CRD fields the server relies on to serve it (names, scope, versions, schemas). */
export function validateCrdSpec(object: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = asObject(object.spec);
  if (spec === undefined) return [cause.required('spec')];
  const group = spec.group;
  if (typeof group !== 'string' || group === '') causes.push(cause.required('spec.group'));
  else if (!DNS_SUBDOMAIN.test(group) || !group.includes('.')) {
    causes.push(cause.invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const names = asObject(spec.names) ?? {};
  const plural = names.plural;
  if (typeof plural !== 'string' || plural === '') causes.push(cause.required('spec.names.plural'));
  else if (!DNS_LABEL.test(plural)) {
    causes.push(
      cause.invalid(
        'spec.names.plural',
        plural,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
      ),
    );
  }
  const kind = names.kind;
  if (typeof kind !== 'string' || kind === '') causes.push(cause.required('spec.names.kind'));
  else if (!KIND.test(kind)) causes.push(cause.invalid('spec.names.kind', kind, 'must be a valid kind name'));
  for (const field of ['singular', 'listKind'] as const) {
    const value = names[field];
    if (value !== undefined && typeof value !== 'string')
      causes.push(cause.invalid(`spec.names.${field}`, value, 'must be a string'));
  }
  for (const field of ['shortNames', 'categories'] as const) {
    const value = names[field];
    if (
      value !== undefined &&
      (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || !DNS_LABEL.test(v)))
    ) {
      causes.push(cause.invalid(`spec.names.${field}`, value, 'must be a list of lowercase RFC 1123 labels'));
    }
  }
  if (typeof group === 'string' && typeof plural === 'string' && object.metadata !== undefined) {
    const name = (object.metadata as JsonObject).name;
    if (name !== `${plural}.${group}`) {
      causes.push(cause.invalid('metadata.name', name ?? '', 'must be spec.names.plural+"."+spec.group'));
    }
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    causes.push(cause.unsupported('spec.scope', spec.scope ?? '', ['Cluster', 'Namespaced']));
  }
  causes.push(...versionCauses(spec.versions));
  return causes;
}

function versionCauses(versions: unknown): StatusCause[] {
  if (!Array.isArray(versions) || versions.length === 0)
    return [cause.required('spec.versions', 'must have exactly one version marked as storage version')];
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  let storage = 0;
  versions.forEach((item, i) => {
    const version = asObject(item);
    const at = `spec.versions[${i}]`;
    if (version === undefined) {
      causes.push(cause.invalid(at, item, 'must be an object'));
      return;
    }
    const name = version.name;
    if (typeof name !== 'string' || !DNS_LABEL.test(name))
      causes.push(cause.invalid(`${at}.name`, name ?? '', 'must be a DNS label'));
    else if (seen.has(name)) causes.push(cause.duplicate(`${at}.name`, name));
    else seen.add(name);
    if (version.storage === true) storage++;
    if (typeof version.served !== 'boolean') causes.push(cause.required(`${at}.served`));
    const schema = asObject(asObject(version.schema)?.openAPIV3Schema);
    if (schema === undefined)
      causes.push(cause.required(`${at}.schema.openAPIV3Schema`, 'schemas are required'));
  });
  if (storage !== 1) {
    causes.push(
      cause.invalid(
        'spec.versions',
        versions.map((v) => asObject(v)?.name),
        'must have exactly one version marked as storage version',
      ),
    );
  }
  return causes;
}

function applyCrdDefaults(object: MutableObject): void {
  const spec = ensureObject(object, 'spec');
  const names = ensureObject(spec, 'names');
  if (typeof names.kind === 'string') {
    setDefault(names, 'singular', names.kind.toLowerCase());
    setDefault(names, 'listKind', `${names.kind}List`);
  }
  const conversion = ensureObject(spec, 'conversion');
  setDefault(conversion, 'strategy', 'None');
  // v1 SetDefaults_ServiceReference: a conversion webhook service listens on 443 unless told
  const service = asObject(asObject(asObject(conversion.webhook)?.clientConfig)?.service);
  if (service !== undefined) setDefault(service, 'port', 443);
}

function immutableCauses(object: JsonObject, old: KubeObject): StatusCause[] {
  const spec = asObject(object.spec) ?? {};
  const previous = asObject((old as unknown as JsonObject).spec) ?? {};
  const causes: StatusCause[] = [];
  if (previous.group !== spec.group)
    causes.push(cause.invalid('spec.group', spec.group ?? '', 'field is immutable'));
  if (previous.scope !== spec.scope)
    causes.push(cause.invalid('spec.scope', spec.scope ?? '', 'field is immutable'));
  return causes;
}

/**
 * CustomResourceDefinition: defaults (`names.singular`, `names.listKind`, `conversion.strategy:
 * None`), validation of what the server needs to serve it, and immutable group and scope. The
 * structural-schema rules come from the CRD module.
 */
export const crdStrategy: Strategy = {
  prepareForCreate(object) {
    applyCrdDefaults(object);
    return validateCrdSpec(object);
  },
  prepareForUpdate(object, old) {
    applyCrdDefaults(object);
    return [...validateCrdSpec(object), ...immutableCauses(object, old)];
  },
};
