/**
 * The Website's conversion webhook: `v1alpha1` (stored, the hub) and `v1beta1` (a spoke), in
 * controller-runtime's hub-and-spoke model.
 *
 * `v1beta1` has a list of `spec.hostnames` where `v1alpha1` has one `spec.domain`: the first
 * hostname is the domain. So that a round trip loses nothing (v1beta1 → stored v1alpha1 → v1beta1),
 * the other hostnames travel in the annotation {@link EXTRA_HOSTNAMES_ANNOTATION} of the v1alpha1
 * object, as kubebuilder projects keep what the hub lacks. An annotation that is not a JSON list of
 * strings (edited by hand) is left as it is and ignored.
 */
import { hubAndSpoke } from '@converge/kube';
import type { Converter, KubeObject } from '@converge/runtime';
import { GROUP, type Website, type WebsiteV1beta1 } from './types.ts';

/** On v1alpha1 objects: the v1beta1 hostnames after the first, as a JSON list. */
export const EXTRA_HOSTNAMES_ANNOTATION = 'websites.examples.converge.dev/extra-hostnames';

type Annotations = Readonly<Record<string, string>>;

/** `metadata` with `annotations` replaced; no `annotations` member when none are left. */
function withAnnotations<T extends KubeObject>(object: T, annotations: Annotations): T['metadata'] {
  const { annotations: _, ...metadata } = object.metadata;
  return Object.keys(annotations).length === 0 ? metadata : { ...metadata, annotations };
}

/** The extra hostnames an annotation holds, or undefined when it holds something else. */
function parseExtras(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) && parsed.every((h) => typeof h === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `spec` is an object whose fields can be moved (a malformed one only changes version). */
function isObject(spec: unknown): spec is Record<string, unknown> {
  return typeof spec === 'object' && spec !== null && !Array.isArray(spec);
}

/** v1beta1 → v1alpha1: the first hostname is the domain, the others go into the annotation. */
export function toV1alpha1(site: WebsiteV1beta1): Website {
  if (!isObject(site.spec)) return { ...site, apiVersion: `${GROUP}/v1alpha1` } as unknown as Website;
  const { hostnames, ...spec } = site.spec;
  const [domain = '', ...extras] = Array.isArray(hostnames) ? hostnames : [];
  const annotations: Record<string, string> = { ...site.metadata.annotations };
  if (extras.length > 0) annotations[EXTRA_HOSTNAMES_ANNOTATION] = JSON.stringify(extras);
  return {
    ...site,
    apiVersion: `${GROUP}/v1alpha1`,
    metadata: withAnnotations(site, annotations),
    spec: { ...spec, domain },
  };
}

/** v1alpha1 → v1beta1: the domain and the annotation's hostnames, the annotation removed. */
export function toV1beta1(site: Website): WebsiteV1beta1 {
  if (!isObject(site.spec)) return { ...site, apiVersion: `${GROUP}/v1beta1` } as unknown as WebsiteV1beta1;
  const { domain, ...spec } = site.spec;
  const annotations: Record<string, string> = { ...site.metadata.annotations };
  const extras = parseExtras(annotations[EXTRA_HOSTNAMES_ANNOTATION]);
  if (extras !== undefined) delete annotations[EXTRA_HOSTNAMES_ANNOTATION];
  const hostnames = domain === undefined || domain === '' ? [] : [domain];
  return {
    ...site,
    apiVersion: `${GROUP}/v1beta1`,
    metadata: withAnnotations(site, annotations),
    spec: { ...spec, hostnames: [...hostnames, ...(extras ?? [])] },
  };
}

/** What `withConverter` registers: v1alpha1 is the hub, v1beta1 its spoke. */
export const websiteConverter: Converter = hubAndSpoke<Website>({
  hub: `${GROUP}/v1alpha1`,
  spokes: { [`${GROUP}/v1beta1`]: { toHub: toV1alpha1, fromHub: toV1beta1 } },
});
