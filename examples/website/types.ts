/**
 * The Website kind in its two versions: `v1alpha1`, stored and reconciled (one `spec.domain`), and
 * `v1beta1`, served beside it (a list of `spec.hostnames`, the first one primary). The conversion
 * webhook (`conversion.ts`) turns one into the other.
 */
import type { Condition, KubeObject, ResourceType } from '@converge/runtime';

export const GROUP = 'examples.converge.dev';

/** The storage version: what the reconciler reads and writes. */
export const websiteType = {
  group: GROUP,
  version: 'v1alpha1',
  kind: 'Website',
  plural: 'websites',
  namespaced: true,
  statusSubresource: true,
  requireResourceVersionOnUpdate: true,
} satisfies ResourceType;

/** The same Websites, served as `v1beta1`. */
export const websiteV1beta1Type = { ...websiteType, version: 'v1beta1' } satisfies ResourceType;

export interface WebsiteStatus {
  readonly url?: string;
  readonly availableReplicas?: number;
  readonly observedGeneration?: number;
  readonly conditions?: readonly Condition[];
}

/** `examples.converge.dev/v1alpha1` Website. */
export interface Website extends KubeObject {
  readonly spec: {
    readonly domain: string;
    readonly content: string;
    readonly replicas?: number;
    readonly image?: string;
  };
  readonly status?: WebsiteStatus;
}

/** `examples.converge.dev/v1beta1` Website: several hostnames, the first one is the site's URL. */
export interface WebsiteV1beta1 extends KubeObject {
  readonly spec: {
    readonly hostnames: readonly string[];
    readonly content: string;
    readonly replicas?: number;
    readonly image?: string;
  };
  readonly status?: WebsiteStatus;
}
