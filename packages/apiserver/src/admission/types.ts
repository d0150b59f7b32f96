import type { Authorize } from './cel-authorizer.ts';

/** A JSON object as the API server serves it. */
export type JsonObject = Record<string, unknown>;

/** What one write asks admission about (`admission.Attributes` of kube-apiserver). */
export interface AdmissionAttributes {
  /** PATCH and apply are UPDATE (CREATE when they create). */
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE';
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly resource: { readonly group: string; readonly version: string; readonly resource: string };
  /** `''` for the main resource, else `status`, `scale`, … */
  readonly subResource: string;
  readonly namespaced: boolean;
  readonly namespace: string;
  readonly name: string;
  /** The object being written, in the request's version; null on DELETE. */
  readonly object: JsonObject | null;
  /** The stored object, in the request's version; null on CREATE. */
  readonly oldObject: JsonObject | null;
  readonly dryRun: boolean;
  /** `CreateOptions`, `UpdateOptions`, `PatchOptions` or `DeleteOptions` (with kind and apiVersion). */
  readonly options: JsonObject;
  readonly userInfo: UserInfo;
  /**
   * What the client used when `kind`/`resource` name an equivalent version a webhook matched
   * (`matchPolicy: Equivalent`); absent: the same as `kind`/`resource`.
   */
  readonly requestKind?: { readonly group: string; readonly version: string; readonly kind: string };
  readonly requestResource?: { readonly group: string; readonly version: string; readonly resource: string };
  /** The other served versions of the resource, for `matchPolicy: Equivalent`; none when absent. */
  readonly equivalents?: EquivalentVersions;
  /**
   * The server's authorizer, for CEL's `authorizer` (cel-authorizer.ts); absent: every check has
   * no opinion (not allowed).
   */
  readonly authorize?: Authorize;
}

/** The other versions of a resource and the conversion of objects between them. */
export interface EquivalentVersions {
  /** The other served versions, in the order a webhook's rules are tried against them. */
  readonly versions: readonly { readonly version: string; readonly kind: string }[];
  /** Objects converted to `apiVersion` (the CRD's conversion: None or its webhook). */
  convert(objects: readonly JsonObject[], apiVersion: string): Promise<JsonObject[]>;
}

/** The user a request is made as (`authentication.k8s.io/v1` UserInfo). */
export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** `clientConfig.service` of a webhook. */
export interface WebhookService {
  readonly namespace: string;
  readonly name: string;
  readonly path?: string;
  /** Default 443. */
  readonly port?: number;
}

/** One rule of a webhook (`RuleWithOperations`). */
export interface WebhookRule {
  readonly operations?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly apiVersions?: readonly string[];
  readonly resources?: readonly string[];
  /** `*` (default), `Cluster` or `Namespaced`. */
  readonly scope?: string;
}

/** One webhook of a Mutating- or ValidatingWebhookConfiguration, as stored. */
export interface Webhook {
  readonly name: string;
  readonly clientConfig: {
    readonly url?: string;
    readonly service?: WebhookService;
    readonly caBundle?: string;
  };
  readonly rules?: readonly WebhookRule[];
  readonly failurePolicy?: 'Fail' | 'Ignore';
  readonly matchPolicy?: 'Exact' | 'Equivalent';
  readonly namespaceSelector?: JsonObject;
  readonly objectSelector?: JsonObject;
  readonly sideEffects?: string;
  readonly timeoutSeconds?: number;
  readonly admissionReviewVersions?: readonly string[];
  readonly reinvocationPolicy?: 'Never' | 'IfNeeded';
  /** CEL conditions that must all be true for the webhook to be called (at most 64). */
  readonly matchConditions?: readonly { readonly name: string; readonly expression: string }[];
}

/** A webhook with the configuration it belongs to. */
export interface ConfiguredWebhook {
  readonly configuration: string;
  readonly webhook: Webhook;
}
