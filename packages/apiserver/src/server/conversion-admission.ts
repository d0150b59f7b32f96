import type { JsonObject } from './api-resource.ts';
import type { RequestContext } from './context.ts';

/** The other served versions of a request's resource, as admission's `matchPolicy: Equivalent` reads them. */
interface Equivalents {
  readonly versions: readonly { readonly version: string; readonly kind: string }[];
  convert(objects: readonly JsonObject[], apiVersion: string): Promise<JsonObject[]>;
}

/**
 * The equivalent versions of a custom resource request (its CRD's other served versions, in the
 * CRD's order) with the CRD's conversion, for `matchPolicy: Equivalent`; nothing for resources
 * without conversion. The versions are looked up only when a webhook's rules miss the request's.
 */
export function equivalentsOf(ctx: RequestContext): { readonly equivalents?: Equivalents } {
  const { resource, server } = ctx;
  const conversion = resource.conversion;
  if (conversion === undefined) return {};
  let versions: Equivalents['versions'] | undefined;
  return {
    equivalents: {
      get versions() {
        versions ??= server.registry
          .all()
          .filter(
            (r) =>
              r.group === resource.group && r.plural === resource.plural && r.version !== resource.version,
          )
          .map((r) => ({ version: r.version, kind: r.kind }));
        return versions;
      },
      convert: (objects, apiVersion) => conversion.convert(objects, apiVersion),
    },
  };
}
