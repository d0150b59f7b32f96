import {
  type Backend,
  type CustomResourceConversion,
  type CustomResourceDefinition,
  customResourceDefinitionType,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type ResourceType,
} from '@converge/runtime';
import {
  mutatingWebhookConfigurationType,
  validatingWebhookConfigurationType,
  type WebhookConfiguration,
  type WebhookConfigurations,
} from './configurations.ts';

/** Attempts of a read-modify-write before a conflict is given up on. */
const ATTEMPTS = 5;

/**
 * Whether `actual` holds everything `desired` says: objects member by member (the API server
 * may add defaults), arrays of the same length element by element, other values equal.
 */
export function holds(desired: unknown, actual: unknown): boolean {
  if (Array.isArray(desired)) {
    return (
      Array.isArray(actual) &&
      actual.length === desired.length &&
      desired.every((d, i) => holds(d, actual[i]))
    );
  }
  if (typeof desired === 'object' && desired !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    return Object.entries(desired).every(([key, value]) =>
      holds(value, (actual as Record<string, unknown>)[key]),
    );
  }
  return desired === actual;
}

/** What one apply did to each object. */
export type ApplyOutcome = 'created' | 'updated' | 'unchanged' | 'deleted' | 'absent';

export interface AppliedWebhookConfigurations {
  readonly mutating: ApplyOutcome;
  readonly validating: ApplyOutcome;
  /** Per CRD name; `missing` when the CRD does not exist (its conversion cannot be set). */
  readonly conversions: Readonly<Record<string, ApplyOutcome | 'missing'>>;
}

export interface ApplyWebhookConfigurationsOptions {
  /** The configurations' name, to delete one that has no webhooks any more. Default `converge-webhooks`. */
  readonly name?: string;
  readonly signal?: AbortSignal;
}

/** Creates or replaces one configuration; deletes it when `desired` is undefined. */
async function applyConfiguration(
  backend: Backend,
  type: ResourceType<WebhookConfiguration>,
  name: string,
  desired: WebhookConfiguration | undefined,
  signal: AbortSignal | undefined,
): Promise<ApplyOutcome> {
  const key = { namespace: '', name };
  for (let attempt = 1; ; attempt++) {
    let existing: WebhookConfiguration | undefined;
    try {
      existing = await backend.get<WebhookConfiguration>(type, key, { ...(signal ? { signal } : {}) });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    try {
      if (desired === undefined) {
        if (existing === undefined) return 'absent';
        await backend.delete(type, key, { ...(signal ? { signal } : {}) });
        return 'deleted';
      }
      if (existing === undefined) {
        await backend.create(type, desired, { ...(signal ? { signal } : {}) });
        return 'created';
      }
      const labels = { ...existing.metadata.labels, ...desired.metadata.labels };
      if (holds(desired.webhooks, existing.webhooks) && holds(labels, existing.metadata.labels ?? {})) {
        return 'unchanged';
      }
      await backend.update(
        type,
        { ...existing, metadata: { ...existing.metadata, labels }, webhooks: desired.webhooks },
        { ...(signal ? { signal } : {}) },
      );
      return 'updated';
    } catch (error) {
      const retry =
        isConflict(error) || isAlreadyExists(error) || (desired === undefined && isNotFound(error));
      if (!retry || attempt >= ATTEMPTS) throw error;
    }
  }
}

/**
 * Sets a CRD's `spec.conversion` (read, replace, update; retried on conflicts). `missing` when the
 * CRD does not exist.
 */
export async function applyCrdConversion(
  backend: Backend,
  crd: string,
  conversion: CustomResourceConversion,
  signal?: AbortSignal,
): Promise<ApplyOutcome | 'missing'> {
  for (let attempt = 1; ; attempt++) {
    let existing: CustomResourceDefinition;
    try {
      existing = await backend.get<CustomResourceDefinition>(
        customResourceDefinitionType,
        { namespace: '', name: crd },
        { ...(signal ? { signal } : {}) },
      );
    } catch (error) {
      if (isNotFound(error)) return 'missing';
      throw error;
    }
    if (holds(conversion, existing.spec?.conversion) && holds(existing.spec?.conversion, conversion)) {
      return 'unchanged';
    }
    try {
      await backend.update(
        customResourceDefinitionType,
        { ...existing, spec: { ...existing.spec, conversion } },
        { ...(signal ? { signal } : {}) },
      );
      return 'updated';
    } catch (error) {
      if (!isConflict(error) || attempt >= ATTEMPTS) throw error;
    }
  }
}

/**
 * Makes the cluster hold `configurations` (from {@link webhookConfigurations}): creates or replaces
 * the Mutating- and ValidatingWebhookConfiguration (deleting one of `name` that has no webhook any
 * more) and sets each converter's CRD `spec.conversion`. Leaves what already holds untouched, so it
 * can run again and again (as managed mode does on every change).
 *
 * @example
 * await applyWebhookConfigurations(backend, webhookConfigurations(manager.webhooks, { url }, caPem));
 */
export async function applyWebhookConfigurations(
  backend: Backend,
  configurations: WebhookConfigurations,
  options: ApplyWebhookConfigurationsOptions = {},
): Promise<AppliedWebhookConfigurations> {
  const name =
    configurations.mutating?.metadata.name ??
    configurations.validating?.metadata.name ??
    options.name ??
    'converge-webhooks';
  const { signal } = options;
  const mutating = await applyConfiguration(
    backend,
    mutatingWebhookConfigurationType,
    name,
    configurations.mutating,
    signal,
  );
  const validating = await applyConfiguration(
    backend,
    validatingWebhookConfigurationType,
    name,
    configurations.validating,
    signal,
  );
  const conversions: Record<string, ApplyOutcome | 'missing'> = {};
  for (const { crd, conversion } of configurations.conversions) {
    conversions[crd] = await applyCrdConversion(backend, crd, conversion, signal);
  }
  return { mutating, validating, conversions };
}

/**
 * Removes both configurations named `name` (absent ones are fine) and turns the conversion of the
 * given CRDs back to `strategy: None`, so no webhook points at a server that is gone.
 */
export async function removeWebhookConfigurations(
  backend: Backend,
  name: string,
  crds: readonly string[] = [],
  signal?: AbortSignal,
): Promise<void> {
  await applyConfiguration(backend, mutatingWebhookConfigurationType, name, undefined, signal);
  await applyConfiguration(backend, validatingWebhookConfigurationType, name, undefined, signal);
  for (const crd of crds) await applyCrdConversion(backend, crd, { strategy: 'None' }, signal);
}
