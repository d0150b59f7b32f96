import type { Converter, HubAndSpokeOptions, KubeObject, UnstructuredObject } from '@converge/runtime';
import { WebhookConversionError } from './errors.ts';
import { messageOf } from './settle.ts';

function describeSource(object: UnstructuredObject): string {
  const { namespace, name } = object.metadata ?? {};
  const key = namespace ? `${namespace}/${name ?? ''}` : (name ?? '');
  return `${String(object.kind)} ${JSON.stringify(key)}`;
}

/**
 * A {@link Converter} in controller-runtime's hub-and-spoke model: one version is the hub, every
 * other version (a spoke) converts to it and from it, so n versions need 2(n−1) functions and any
 * spoke reaches any other through the hub. Hub and spoke functions get the object's `apiVersion`
 * and `kind` set by the server afterwards, so they only move fields.
 *
 * @example
 * const converter = hubAndSpoke<WebsiteV2>({
 *   hub: 'example.com/v2',
 *   spokes: {
 *     'example.com/v1': {
 *       toHub: (v1: WebsiteV1) => ({ ...v1, spec: { replicas: v1.spec.size, domains: [v1.spec.domain] } }),
 *       fromHub: (v2) => ({ ...v2, spec: { size: v2.spec.replicas, domain: v2.spec.domains[0] ?? '' } }),
 *     },
 *   },
 * });
 * server.conversion('/convert-website', converter);
 */
export function hubAndSpoke<H extends KubeObject>(options: HubAndSpokeOptions<H>): Converter {
  const { hub } = options;
  const spokes = new Map(Object.entries(options.spokes));
  if (spokes.has(hub)) throw new WebhookConversionError(`the hub ${hub} is also listed as a spoke`);
  const known = (version: string): boolean => version === hub || spokes.has(version);
  return {
    async convert(object, desired, signal) {
      const from = String(object.apiVersion);
      for (const version of [from, desired]) {
        if (!known(version)) {
          throw new WebhookConversionError(
            `cannot convert ${describeSource(object)} from ${from} to ${desired}: ${version} is neither the hub ` +
              `(${hub}) nor a spoke (${[...spokes.keys()].join(', ') || 'none'})`,
          );
        }
      }
      try {
        const toHub = spokes.get(from);
        const asHub = toHub === undefined ? (object as unknown as H) : await toHub.toHub(object, signal);
        const fromHub = spokes.get(desired);
        return fromHub === undefined ? asHub : await fromHub.fromHub(structuredClone(asHub), signal);
      } catch (cause) {
        if (cause instanceof WebhookConversionError) throw cause;
        throw new WebhookConversionError(
          `cannot convert ${describeSource(object)} from ${from} to ${desired}: ${messageOf(cause)}`,
          { cause },
        );
      }
    },
  };
}
