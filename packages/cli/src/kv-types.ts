import { OptionsError, type ResourceType, resourceType } from '@converge/runtime';

/** How `converge kv` turns a TYPE argument or a document into a resource type. */
export interface TypeOverrides {
  readonly plural?: string | undefined;
  readonly kind?: string | undefined;
  readonly clusterScoped?: boolean;
}

/**
 * The plural guessed for a kind: lower case plus `s`; `es` after s, x, z, ch or sh; `ies` in place
 * of a `y` after a consonant (kubectl's own guess is cruder: it knows only `s` → `ses` and any `y`
 * → `ies`).
 *
 * @example
 * guessPlural('Application'); // 'applications'
 * guessPlural('Policy'); // 'policies'
 */
export function guessPlural(kind: string): string {
  const lower = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

/**
 * A kind whose {@link guessPlural} is `plural`, capitalised: `policies` → `Policy`, `boxes` →
 * `Box`, `applications` → `Application`. Camel case cannot be recovered (`configmaps` gives
 * `Configmap`): name the kind, or pass `--kind`.
 */
export function guessKind(plural: string): string {
  const candidates = [
    plural.endsWith('ies') ? `${plural.slice(0, -3)}y` : undefined,
    /(ss|us|x|z|ch|sh)es$/.test(plural) ? plural.slice(0, -2) : undefined,
    plural.endsWith('s') ? plural.slice(0, -1) : undefined,
  ];
  const singular = candidates.find((c) => c !== undefined && c !== '' && guessPlural(c) === plural) ?? plural;
  return `${singular.charAt(0).toUpperCase()}${singular.slice(1)}`;
}

function checked(type: ResourceType): ResourceType {
  return { ...resourceType(type), statusSubresource: true };
}

/**
 * The type a TYPE argument names: `RESOURCE.GROUP/VERSION` or `RESOURCE/VERSION` (core group),
 * RESOURCE a plural (`applications`) or a kind (`Application`). Status is a subresource (writes
 * from the command line leave it to the controller). Throws OptionsError for a malformed TYPE.
 */
export function typeFromArgument(text: string, overrides: TypeOverrides = {}): ResourceType {
  const slash = text.lastIndexOf('/');
  const left = text.slice(0, Math.max(slash, 0));
  const version = text.slice(slash + 1);
  const dot = left.indexOf('.');
  const resource = dot < 0 ? left : left.slice(0, dot);
  if (slash < 0 || resource === '' || version === '' || (dot >= 0 && dot === left.length - 1)) {
    throw new OptionsError('TYPE', text, 'RESOURCE.GROUP/VERSION, or RESOURCE/VERSION for the core group');
  }
  const isKind = /^[A-Z]/.test(resource);
  return checked({
    group: dot < 0 ? '' : left.slice(dot + 1),
    version,
    kind: overrides.kind ?? (isKind ? resource : guessKind(resource)),
    plural: overrides.plural ?? (isKind ? guessPlural(resource) : resource),
    namespaced: overrides.clusterScoped !== true,
  });
}

/** The type of a document with `apiVersion` and `kind`; the plural is guessed unless overridden. */
export function typeFromDocument(
  apiVersion: string,
  kind: string,
  overrides: TypeOverrides = {},
): ResourceType {
  const slash = apiVersion.indexOf('/');
  return checked({
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    kind,
    plural: overrides.plural ?? guessPlural(kind),
    namespaced: overrides.clusterScoped !== true,
  });
}

/** `application.kumori.examples.converge.dev`, as kubectl names objects in its messages. */
export function qualifiedKind(type: ResourceType): string {
  const kind = type.kind.toLowerCase();
  return type.group === '' ? kind : `${kind}.${type.group}`;
}
