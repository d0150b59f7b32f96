import type { GroupVersionResource } from '../dynamic/index.ts';
import type { KubeObject } from '../object/index.ts';

/** The versions of `AdmissionReview` the server speaks; it answers in the version it was asked in. */
export type AdmissionReviewVersion = 'admission.k8s.io/v1' | 'admission.k8s.io/v1beta1';

/** What the API server is doing to the object. PATCH and apply arrive as UPDATE (or CREATE). */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** Who made the request (`authentication.k8s.io/v1 UserInfo`). */
export interface AdmissionUserInfo {
  readonly username: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

/**
 * One admission request, as the API server sent it (`AdmissionReview.request`), plus the `signal`
 * of this call. Objects are the JSON the API server sent, typed `T` but not checked against it: a
 * mutating webhook sees an object before schema validation.
 */
export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  /** Echoed in the answer; the API server matches answers to requests by it. */
  readonly uid: string;
  /** The review version the request came in (the answer uses the same). */
  readonly reviewVersion: AdmissionReviewVersion;
  readonly operation: AdmissionOperation;
  /** The kind of `object` (`{ group: 'example.com', version: 'v1', kind: 'Website' }`). */
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  /** `status`, `scale`, … or '' for the main resource. */
  readonly subResource: string;
  /** The kind the client asked for, when `matchPolicy: Equivalent` converted it; else equals `kind`. */
  readonly requestKind: GroupVersionKind;
  readonly requestResource: GroupVersionResource;
  readonly requestSubResource: string;
  /** The object's name; '' on a CREATE with `generateName`. */
  readonly name: string;
  /** The object's namespace; '' for cluster-scoped objects. */
  readonly namespace: string;
  readonly userInfo: AdmissionUserInfo;
  /** The new object: set for CREATE and UPDATE (and CONNECT's options object), null for DELETE. */
  readonly object: T | null;
  /** The existing object: set for UPDATE and DELETE, null for CREATE and CONNECT. */
  readonly oldObject: T | null;
  /**
   * True when nothing will be persisted (`kubectl --dry-run=server`). A handler registered with
   * `sideEffects: 'NoneOnDryRun'` must not act outside the answer (no writes, no external calls)
   * when this is true.
   */
  readonly dryRun: boolean;
  /** The operation's options (`CreateOptions`, `UpdateOptions`, `PatchOptions`, `DeleteOptions`), or null. */
  readonly options: Readonly<Record<string, unknown>> | null;
  /** Aborted when the per-request timeout passes or the server stops: stop work then. */
  readonly signal: AbortSignal;
}

/**
 * Extra fields of a denial's `status` (`metav1.Status`). `code` defaults to 403 and `reason` to
 * `Forbidden`, as controller-runtime's `Denied`; the API server shows the message as
 * `admission webhook "NAME" denied the request: MESSAGE` and answers the client with `code`.
 */
export interface DenialOptions {
  /** HTTP status code the API server answers with (forced to at least 400 by it). Default 403. */
  readonly code?: number;
  /** The machine-readable `reason` (`Forbidden`, `Invalid`, `Conflict`, …). Default `Forbidden`. */
  readonly reason?: string;
  /** `status.details`: `{ name, group, kind, causes: [{ reason, message, field }] }`. */
  readonly details?: Readonly<Record<string, unknown>>;
  /** Warnings kubectl prints (`Warning: …`) even for a denial. */
  readonly warnings?: readonly string[];
}

export interface AllowedOptions {
  /** Warnings kubectl prints (`Warning: …`). */
  readonly warnings?: readonly string[];
}

const RESULT = Symbol('converge.webhook.admissionResult');

/** An admission answer made by {@link allowed} or {@link denied}. */
export interface AdmissionResult {
  readonly [RESULT]: true;
  readonly allowed: boolean;
  readonly warnings: readonly string[];
  /** The denial's `metav1.Status` fields; undefined when allowed. */
  readonly status:
    | {
        readonly code: number;
        readonly reason: string;
        readonly message: string;
        readonly details?: Readonly<Record<string, unknown>>;
      }
    | undefined;
}

/** A defaulter's answer carrying warnings with the mutated object (made by {@link mutated}). */
export interface MutatedResult<T> {
  readonly [RESULT]: 'mutated';
  readonly object: T;
  readonly warnings: readonly string[];
}

function warningsOf(value: readonly string[] | undefined): readonly string[] {
  return Object.freeze([...(value ?? [])].map(String));
}

/**
 * Admits the request.
 *
 * @example
 * validate(request) { return allowed({ warnings: ['spec.tls is deprecated'] }); }
 */
export function allowed(options: AllowedOptions = {}): AdmissionResult {
  return Object.freeze({
    [RESULT]: true as const,
    allowed: true,
    warnings: warningsOf(options.warnings),
    status: undefined,
  });
}

/**
 * Rejects the request with `message`. The user sees
 * `admission webhook "NAME" denied the request: MESSAGE`.
 *
 * @example
 * validate({ object }) {
 *   if (!/^[a-z0-9.-]+$/.test(object?.spec.domain ?? '')) {
 *     return denied('spec.domain must be a DNS name', { code: 422, reason: 'Invalid' });
 *   }
 *   return allowed();
 * }
 */
export function denied(message: string, options: DenialOptions = {}): AdmissionResult {
  const code = options.code ?? 403;
  return Object.freeze({
    [RESULT]: true as const,
    allowed: false,
    warnings: warningsOf(options.warnings),
    status: Object.freeze({
      code: Number.isInteger(code) ? code : 403,
      reason: options.reason ?? 'Forbidden',
      message: String(message),
      ...(options.details === undefined ? {} : { details: options.details }),
    }),
  });
}

/**
 * A defaulter's answer when it also has warnings; a defaulter without warnings returns the object.
 *
 * @example
 * default(website) {
 *   website.spec.replicas ??= 1;
 *   return mutated(website, { warnings: ['spec.replicas defaulted to 1'] });
 * }
 */
export function mutated<T>(object: T, options: AllowedOptions = {}): MutatedResult<T> {
  return Object.freeze({ [RESULT]: 'mutated' as const, object, warnings: warningsOf(options.warnings) });
}

/** Whether `value` was made by {@link allowed} or {@link denied}. */
export function isAdmissionResult(value: unknown): value is AdmissionResult {
  return typeof value === 'object' && value !== null && (value as { [RESULT]?: unknown })[RESULT] === true;
}

/** Whether `value` was made by {@link mutated}. */
export function isMutatedResult(value: unknown): value is MutatedResult<unknown> {
  return (
    typeof value === 'object' && value !== null && (value as { [RESULT]?: unknown })[RESULT] === 'mutated'
  );
}

/**
 * A validating webhook: decides whether the API server may go on. Called for every operation the
 * webhook configuration's rules send (`request.operation`); on DELETE `request.object` is null and
 * `request.oldObject` is the object being deleted.
 *
 * @example
 * const validator: Validator<Website> = {
 *   validate: ({ object }) => object?.spec.domain.includes(' ') ? denied('no spaces') : allowed(),
 * };
 */
export interface Validator<T extends KubeObject = KubeObject> {
  validate(request: AdmissionRequest<T>): AdmissionResult | Promise<AdmissionResult>;
}

/**
 * A mutating webhook: sets defaults. Gets a private copy of `request.object` to change in place or
 * replace, and returns it (or nothing, meaning "the copy as changed"), `mutated(object, {
 * warnings })`, or `denied(…)`. The server answers with the JSON patch from the object sent to the
 * object returned. Called for CREATE and UPDATE only: DELETE and CONNECT are admitted unchanged
 * without calling it (as controller-runtime's defaulters).
 */
export interface Defaulter<T extends KubeObject = KubeObject> {
  default(
    object: T,
    request: AdmissionRequest<T>,
  ):
    | T
    | undefined
    | AdmissionResult
    | MutatedResult<T>
    | Promise<T | undefined | AdmissionResult | MutatedResult<T>>;
}

/**
 * Whether a webhook acts outside its answer (`sideEffects` of its webhook configuration; v1 allows
 * only these two). `NoneOnDryRun` handlers must check `request.dryRun`.
 */
export type SideEffects = 'None' | 'NoneOnDryRun';

export interface AdmissionWebhookOptions {
  /** What to declare in the webhook configuration. Default `None`. */
  readonly sideEffects?: SideEffects;
}
