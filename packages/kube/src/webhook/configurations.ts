import {
  type CustomResourceConversion,
  type KubeObject,
  OptionsError,
  type ResourceType,
  resourceType,
  type WebhookRegistration,
} from '@converge/runtime';

/** `admissionregistration.k8s.io/v1` MutatingWebhookConfiguration, cluster-scoped. */
export const mutatingWebhookConfigurationType: ResourceType<WebhookConfiguration> = resourceType({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'MutatingWebhookConfiguration',
  plural: 'mutatingwebhookconfigurations',
  namespaced: false,
  generation: true,
});

/** `admissionregistration.k8s.io/v1` ValidatingWebhookConfiguration, cluster-scoped. */
export const validatingWebhookConfigurationType: ResourceType<WebhookConfiguration> = resourceType({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
  generation: true,
});

/** Where the API server reaches the webhook server: a base URL, or a Service in the cluster. */
export type WebhookTarget =
  | { readonly url: string }
  | { readonly service: { readonly namespace: string; readonly name: string; readonly port?: number } };

/** `admissionregistration.k8s.io/v1` AdmissionWebhookClientConfig (and the apiextensions one, same shape). */
export interface AdmissionWebhookClientConfig {
  readonly url?: string;
  readonly service?: {
    readonly namespace: string;
    readonly name: string;
    readonly port?: number;
    readonly path?: string;
  };
  /** Base64 of the PEM CA certificate(s) the webhook's serving certificate is checked against. */
  readonly caBundle: string;
}

/** One webhook of a configuration (`MutatingWebhook` / `ValidatingWebhook`). */
export interface AdmissionWebhookEntry {
  readonly name: string;
  readonly clientConfig: AdmissionWebhookClientConfig;
  readonly rules: readonly {
    readonly operations: readonly string[];
    readonly apiGroups: readonly string[];
    readonly apiVersions: readonly string[];
    readonly resources: readonly string[];
    readonly scope: 'Namespaced' | 'Cluster';
  }[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly matchPolicy: 'Equivalent';
  readonly namespaceSelector: object;
  readonly objectSelector: object;
  readonly sideEffects: string;
  readonly timeoutSeconds: number;
  readonly admissionReviewVersions: readonly string[];
  readonly matchConditions?: readonly { readonly name: string; readonly expression: string }[];
  readonly reinvocationPolicy?: 'Never' | 'IfNeeded';
}

/** A `Mutating`- or `ValidatingWebhookConfiguration`. */
export interface WebhookConfiguration extends KubeObject {
  readonly webhooks?: readonly AdmissionWebhookEntry[];
}

/** The `spec.conversion` a CRD needs so the API server calls the `/convert` webhook. */
export interface CrdConversion {
  /** The CRD's name, `<plural>.<group>`. */
  readonly crd: string;
  readonly conversion: CustomResourceConversion;
}

/** What {@link webhookConfigurations} makes. */
export interface WebhookConfigurations {
  /** Every defaulter; undefined when there is none. */
  readonly mutating: WebhookConfiguration | undefined;
  /** Every validator; undefined when there is none. */
  readonly validating: WebhookConfiguration | undefined;
  /** One per converter: the CRD's `spec.conversion`. */
  readonly conversions: readonly CrdConversion[];
}

export interface WebhookConfigurationsOptions {
  /** Both configurations' `metadata.name`. Default `converge-webhooks`. */
  readonly name?: string;
  /** Labels on both configurations (to find them again). Default none. */
  readonly labels?: Readonly<Record<string, string>>;
}

const PEM = /-----BEGIN CERTIFICATE-----/;

/** The caBundle as a configuration carries it: base64 of the PEM. Accepts PEM or its base64. */
export function encodeCaBundle(caBundle: string): string {
  if (typeof caBundle !== 'string' || caBundle.trim() === '') {
    throw new OptionsError('caBundle', caBundle, 'a PEM CA certificate or its base64');
  }
  if (PEM.test(caBundle)) return Buffer.from(caBundle, 'utf8').toString('base64');
  const decoded = Buffer.from(caBundle, 'base64').toString('utf8');
  if (!PEM.test(decoded))
    throw new OptionsError('caBundle', '(not shown)', 'a PEM CA certificate or its base64');
  return caBundle.trim();
}

function checkTarget(target: WebhookTarget): WebhookTarget {
  if (typeof target !== 'object' || target === null) {
    throw new OptionsError('target', target, '{ url } or { service: { namespace, name, port } }');
  }
  if ('url' in target) {
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      throw new OptionsError('target.url', target.url, 'an https URL (https://127.0.0.1:9443)');
    }
    if (url.protocol !== 'https:' || url.search !== '' || url.hash !== '' || url.username !== '') {
      throw new OptionsError('target.url', target.url, 'an https URL without query, fragment or user');
    }
    return { url: target.url.replace(/\/+$/, '') };
  }
  const service = (target as { service?: unknown }).service as
    | { namespace?: unknown; name?: unknown; port?: unknown }
    | undefined;
  if (typeof service !== 'object' || service === null) {
    throw new OptionsError('target', target, '{ url } or { service: { namespace, name, port } }');
  }
  for (const field of ['namespace', 'name'] as const) {
    const value = service[field];
    if (typeof value !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value) || value.length > 63) {
      throw new OptionsError(`target.service.${field}`, value, 'a DNS label');
    }
  }
  const port = service.port ?? 443;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new OptionsError('target.service.port', service.port, 'a port from 1 to 65535');
  }
  return { service: { namespace: service.namespace as string, name: service.name as string, port } };
}

/** The clientConfig for `path` on `target`. */
function clientConfig(target: WebhookTarget, path: string, caBundle: string): AdmissionWebhookClientConfig {
  if ('url' in target) return { url: `${target.url}${path}`, caBundle };
  return { service: { ...target.service, path }, caBundle };
}

function admissionEntry(
  r: Exclude<WebhookRegistration, { webhook: 'conversion' }>,
  target: WebhookTarget,
  caBundle: string,
): AdmissionWebhookEntry {
  const o = r.options;
  return {
    name: r.name,
    clientConfig: clientConfig(target, r.path, caBundle),
    rules: [
      {
        operations: [...o.operations],
        apiGroups: [r.type.group],
        apiVersions: [r.type.version],
        resources: [r.type.plural],
        scope: r.type.namespaced ? 'Namespaced' : 'Cluster',
      },
    ],
    failurePolicy: o.failurePolicy,
    matchPolicy: 'Equivalent',
    namespaceSelector: o.namespaceSelector ?? {},
    objectSelector: o.objectSelector ?? {},
    sideEffects: o.sideEffects,
    timeoutSeconds: o.timeoutSeconds,
    admissionReviewVersions: ['v1'],
    ...(o.matchConditions.length === 0 ? {} : { matchConditions: o.matchConditions.map((c) => ({ ...c })) }),
    ...(r.webhook === 'mutating' ? { reinvocationPolicy: o.reinvocationPolicy } : {}),
  };
}

/**
 * The webhook configurations and CRD conversion stanzas that make an API server call the
 * registered webhooks (`manager.webhooks`) at `target`, with `caBundle` (the CA's PEM, or its
 * base64) to check the serving certificate. Each defaulter becomes a webhook of the
 * `MutatingWebhookConfiguration`, each validator one of the `ValidatingWebhookConfiguration`
 * (rules for the kind's group, version and plural with the registration's operations and the
 * kind's scope; `matchPolicy: Equivalent`; `admissionReviewVersions: ['v1']`), each converter the
 * `spec.conversion` of its CRD (`strategy: Webhook`, `/convert`, `conversionReviewVersions: ['v1']`).
 *
 * @example
 * const { mutating, validating, conversions } = webhookConfigurations(
 *   manager.webhooks,
 *   { service: { namespace: 'website-system', name: 'website-webhooks', port: 443 } },
 *   caPem,
 * );
 */
export function webhookConfigurations(
  registrations: readonly WebhookRegistration[],
  target: WebhookTarget,
  caBundle: string,
  options: WebhookConfigurationsOptions = {},
): WebhookConfigurations {
  const checked = checkTarget(target);
  const bundle = encodeCaBundle(caBundle);
  const name = options.name ?? 'converge-webhooks';
  if (typeof name !== 'string' || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) {
    throw new OptionsError('name', name, 'a DNS subdomain');
  }
  const metadata = {
    name,
    ...(options.labels === undefined ? {} : { labels: { ...options.labels } }),
  };
  const configuration = (
    type: ResourceType<WebhookConfiguration>,
    webhook: 'mutating' | 'validating',
  ): WebhookConfiguration | undefined => {
    const entries = registrations.flatMap((r) =>
      r.webhook === webhook ? [admissionEntry(r, checked, bundle)] : [],
    );
    if (entries.length === 0) return undefined;
    return {
      apiVersion: `${type.group}/${type.version}`,
      kind: type.kind,
      metadata,
      webhooks: entries,
    };
  };
  const conversions = registrations.flatMap((r): CrdConversion[] =>
    r.webhook === 'conversion'
      ? [
          {
            crd: r.name,
            conversion: {
              strategy: 'Webhook',
              webhook: {
                clientConfig: clientConfig(checked, r.path, bundle),
                conversionReviewVersions: ['v1'],
              },
            },
          },
        ]
      : [],
  );
  return {
    mutating: configuration(mutatingWebhookConfigurationType, 'mutating'),
    validating: configuration(validatingWebhookConfigurationType, 'validating'),
    conversions,
  };
}
