import { labelSelectorFromObject } from '@converge/runtime';
import type { JsonObject } from '../types.ts';
import type { ParamRef, PolicySpec } from './types.ts';

/** Where the objects of one `paramKind` are read from. */
export interface ParamSource {
  readonly namespaced: boolean;
  /** The object, or undefined when it does not exist. */
  get(namespace: string, name: string): Promise<JsonObject | undefined>;
  /** Every object of the namespace (all of them for cluster-scoped kinds). */
  list(namespace: string): Promise<readonly JsonObject[]>;
}

/** The source of a `paramKind` (`apiVersion`, `kind`), or undefined when no such kind is served. */
export type ParamResolver = (apiVersion: string, kind: string) => ParamSource | undefined;

/** A policy or binding whose params cannot be resolved: kube's configuration error text. */
export class ParamConfigurationError extends Error {}

/** `group/version, Kind=K` as Go prints a GroupVersionKind. */
function gvkString(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  const gv = slash < 0 ? `/${apiVersion}` : apiVersion;
  return `${gv}, Kind=${kind}`;
}

/** The policy's param source; throws {@link ParamConfigurationError} when its kind is unknown. */
export function paramSourceOf(spec: PolicySpec, resolve: ParamResolver): ParamSource | undefined {
  const paramKind = spec.paramKind;
  if (paramKind === undefined || paramKind === null) return undefined;
  const apiVersion = String(paramKind.apiVersion ?? '');
  const kind = String(paramKind.kind ?? '');
  const source = resolve(apiVersion, kind);
  if (source === undefined)
    throw new ParamConfigurationError(
      `failed to find resource referenced by paramKind: '${gvkString(apiVersion, kind)}'`,
    );
  return source;
}

/**
 * The params one binding evaluates its policy with, as kube's `CollectParams`: `[null]` without
 * `paramKind` or `paramRef`; else the named object or those the selector picks, in the paramRef's
 * namespace (default: the request's). None found is an empty list — or, with
 * `parameterNotFoundAction: Deny`, a {@link ParamConfigurationError}.
 */
export async function collectParams(
  source: ParamSource | undefined,
  ref: ParamRef | undefined,
  requestNamespace: string,
): Promise<readonly (JsonObject | null)[]> {
  if (source === undefined || ref === undefined || ref === null) return [null];
  const refNamespace = typeof ref.namespace === 'string' ? ref.namespace : '';
  let namespace = '';
  if (source.namespaced) {
    namespace = refNamespace !== '' ? refNamespace : requestNamespace;
    if (namespace === '')
      throw new ParamConfigurationError(
        'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources',
      );
  } else if (refNamespace !== '') {
    throw new ParamConfigurationError(
      'paramRef.namespace must not be provided for a cluster-scoped `paramKind`',
    );
  }
  let params: readonly JsonObject[];
  const name = typeof ref.name === 'string' ? ref.name : '';
  if (name !== '') {
    const found = await source.get(namespace, name);
    params = found === undefined ? [] : [found];
  } else if (ref.selector !== undefined && ref.selector !== null) {
    let selector: ReturnType<typeof labelSelectorFromObject>;
    try {
      selector = labelSelectorFromObject(ref.selector as never);
    } catch (error) {
      throw new ParamConfigurationError(error instanceof Error ? error.message : String(error));
    }
    params = (await source.list(namespace)).filter((p) =>
      selector.matches((p.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}),
    );
  } else {
    throw new ParamConfigurationError('one of name or selector must be provided');
  }
  if (params.length === 0 && ref.parameterNotFoundAction === 'Deny')
    throw new ParamConfigurationError(
      'no params found for policy binding with `Deny` parameterNotFoundAction',
    );
  return params;
}
