import type { ResourceType } from '../backend/index.ts';
import type { KubeObject } from '../object/index.ts';
import type { LabelSelector } from '../predicate/index.ts';
import type {
  AdmissionOperation,
  AdmissionWebhookOptions,
  Defaulter,
  SideEffects,
  Validator,
} from './admission.ts';
import type { Converter } from './conversion.ts';

/** What a registration serves, as its webhook configuration names it. */
export type WebhookKind = 'validating' | 'mutating' | 'conversion';

/** A CEL condition a request must meet for the API server to call the webhook (`matchConditions`). */
export interface MatchCondition {
  /** Unique within the webhook; a qualified name (`[prefix/]name`, name ≤ 63 characters). */
  readonly name: string;
  /** CEL over `object`, `oldObject`, `request` and `namespaceObject`, evaluating to a bool. */
  readonly expression: string;
}

/**
 * How a validating or mutating webhook is declared in its webhook configuration. Every field is
 * optional; the defaults are kube-apiserver's (and controller-runtime's markers').
 *
 * @example
 * manager.webhook(websiteType).withValidator(validator, {
 *   operations: ['CREATE', 'UPDATE', 'DELETE'],
 *   failurePolicy: 'Ignore',
 *   timeoutSeconds: 5,
 * }).complete();
 */
export interface AdmissionWebhookRegistrationOptions extends AdmissionWebhookOptions {
  /** What the API server does when the call fails or times out. Default `Fail`. */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /** How long the API server waits for an answer, 1 to 30. Default 10. */
  readonly timeoutSeconds?: number;
  /**
   * Where the webhook server serves it. Default controller-runtime's: `/validate-<group with . as
   * ->-<version>-<lower-case kind>` (`/mutate-…` for defaulters; `/validate--v1-pod` for the core group).
   */
  readonly path?: string;
  /**
   * The operations that call it (at least one, no repeats). Default `CREATE` and `UPDATE`. A
   * validator that must see deletes lists `DELETE`; a defaulter may list only `CREATE` and
   * `UPDATE` (deletes and connects are admitted without calling it).
   */
  readonly operations?: readonly AdmissionOperation[];
  /** At most 64 CEL conditions, all of which must hold for the API server to call the webhook. */
  readonly matchConditions?: readonly MatchCondition[];
  /** Call it only for objects in namespaces whose labels match. Default: every namespace. */
  readonly namespaceSelector?: LabelSelector;
  /** Call it only for objects (new or old) whose labels match. Default: every object. */
  readonly objectSelector?: LabelSelector;
  /**
   * Mutating only: `IfNeeded` calls it once more when a later mutating webhook changed the
   * object. Default `Never`. Not allowed on a validator.
   */
  readonly reinvocationPolicy?: 'Never' | 'IfNeeded';
  /**
   * The webhook's name in its configuration (a DNS name of at least three labels). Default
   * `<v|m><lower-case kind>-<version>.<group>`, with `.converge.dev` appended when the group has
   * fewer than two labels (`vpod-v1.core.converge.dev`, `mdeployment-v1.apps.converge.dev`).
   */
  readonly name?: string;
}

/** Registration options with every default filled in. */
export interface ResolvedAdmissionWebhookOptions {
  readonly sideEffects: SideEffects;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly timeoutSeconds: number;
  readonly operations: readonly AdmissionOperation[];
  readonly matchConditions: readonly MatchCondition[];
  readonly namespaceSelector: LabelSelector | undefined;
  readonly objectSelector: LabelSelector | undefined;
  /** `Never` for validators. */
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
}

interface RegistrationBase {
  /** The kind (and version) the webhook is for. */
  readonly type: ResourceType;
  /** The path the webhook server serves it at. */
  readonly path: string;
}

/** A validator registered for one group, version and kind. */
export interface ValidatingWebhookRegistration extends RegistrationBase {
  readonly webhook: 'validating';
  /** The webhook's name in the `ValidatingWebhookConfiguration`. */
  readonly name: string;
  readonly handler: Validator<KubeObject>;
  readonly options: ResolvedAdmissionWebhookOptions;
}

/** A defaulter registered for one group, version and kind. */
export interface MutatingWebhookRegistration extends RegistrationBase {
  readonly webhook: 'mutating';
  /** The webhook's name in the `MutatingWebhookConfiguration`. */
  readonly name: string;
  readonly handler: Defaulter<KubeObject>;
  readonly options: ResolvedAdmissionWebhookOptions;
}

/**
 * A converter registered for one group and kind (all its versions). Every converter is served at
 * the one path `/convert`, which dispatches by the object's group and kind.
 */
export interface ConversionWebhookRegistration extends RegistrationBase {
  readonly webhook: 'conversion';
  /** The CustomResourceDefinition whose `spec.conversion` points at it (`<plural>.<group>`). */
  readonly name: string;
  readonly handler: Converter;
  readonly options: Readonly<Record<string, never>>;
}

/** One registered webhook, as `manager.webhooks` lists it. */
export type WebhookRegistration =
  | ValidatingWebhookRegistration
  | MutatingWebhookRegistration
  | ConversionWebhookRegistration;

/** The one path every converter is served at. */
export const CONVERSION_PATH = '/convert';

function pathPart(type: Pick<ResourceType, 'group' | 'version' | 'kind'>): string {
  return `${type.group.replaceAll('.', '-')}-${type.version}-${type.kind.toLowerCase()}`;
}

/**
 * controller-runtime's path of a kind's validating webhook: `/validate-example-com-v1-website`
 * (`/validate--v1-pod` for the core group).
 */
export function validatePath(type: Pick<ResourceType, 'group' | 'version' | 'kind'>): string {
  return `/validate-${pathPart(type)}`;
}

/** controller-runtime's path of a kind's mutating webhook: `/mutate-example-com-v1-website`. */
export function mutatePath(type: Pick<ResourceType, 'group' | 'version' | 'kind'>): string {
  return `/mutate-${pathPart(type)}`;
}

/**
 * The default name of a kind's webhook in its configuration: `vwebsite-v1.example.com`,
 * `mwebsite-v1alpha1.examples.converge.dev`; `.converge.dev` is appended when the group has fewer
 * than two labels, since the API server wants at least three (`vpod-v1.core.converge.dev`).
 */
export function webhookName(
  webhook: 'validating' | 'mutating',
  type: Pick<ResourceType, 'group' | 'version' | 'kind'>,
): string {
  const head = `${webhook === 'validating' ? 'v' : 'm'}${type.kind.toLowerCase()}-${type.version}`;
  const group = type.group === '' ? 'core' : type.group;
  return group.includes('.') ? `${head}.${group}` : `${head}.${group}.converge.dev`;
}
