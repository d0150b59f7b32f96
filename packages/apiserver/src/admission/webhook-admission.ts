import { BadRequestError, type Clock, type Logger, noopLogger, realClock } from '@converge/runtime';
import {
  endpointOf,
  type LocalWebhooks,
  localServiceResolver,
  pemOf,
  postReview,
  postReviewLocally,
  type WebhookServiceResolver,
} from './call.ts';
import { AdmissionDeniedError, AdmissionWebhookError } from './errors.ts';
import { isExempt, namespaceSelected, objectSelected } from './match.ts';
import { hasMatchConditions, matchConditionsHold } from './match-conditions.ts';
import { backToRequest, invocationOf, type MatchedVersion, matchedVersion } from './match-policy.ts';
import { patched, type ReviewResult, readReview, reviewRequest } from './review.ts';
import type { AdmissionAttributes, ConfiguredWebhook, JsonObject, Webhook } from './types.ts';

/** The two kinds of webhook configuration. */
export type WebhookConfigurationKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

/** Options of {@link WebhookAdmission}. */
export interface WebhookAdmissionOptions {
  /** Every stored configuration of a kind (read again after {@link WebhookAdmission.invalidate}). */
  readonly listConfigurations: (kind: WebhookConfigurationKind) => Promise<readonly JsonObject[]>;
  /** The labels of a namespace (`{}` when it does not exist), for `namespaceSelector`. */
  readonly namespaceLabels: (name: string) => Promise<Record<string, string>>;
  /** Where `clientConfig.service` webhooks are reached. Default {@link localServiceResolver}. */
  readonly resolveService?: WebhookServiceResolver;
  /** Webhook servers in this process, called without TLS or HTTP when they serve a call's URL (see {@link LocalWebhooks}). */
  readonly localWebhooks?: LocalWebhooks;
  /** Drives the call timeouts. Default `realClock`. */
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/** Collects the `Warning:` headers of a response. */
export type Warn = (text: string) => void;

/** A webhook to call, and the version its rules matched (`matchPolicy`). */
interface Invocation {
  readonly hook: ConfiguredWebhook;
  readonly matched: MatchedVersion;
}

interface Configurations {
  readonly mutating: readonly ConfiguredWebhook[];
  readonly validating: readonly ConfiguredWebhook[];
}

/** The webhooks of the configurations, in configuration-name order, then in their order. */
function webhooksOf(configurations: readonly JsonObject[]): ConfiguredWebhook[] {
  const named = configurations.map((c) => ({
    name: String((c.metadata as { name?: unknown } | undefined)?.name ?? ''),
    webhooks: Array.isArray(c.webhooks) ? (c.webhooks as Webhook[]) : [],
  }));
  named.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return named.flatMap(({ name, webhooks }) => webhooks.map((webhook) => ({ configuration: name, webhook })));
}

/** `timeoutSeconds` clamped to kube's 1–30, default 10. */
function timeoutSecondsOf(webhook: Webhook): number {
  const t = webhook.timeoutSeconds;
  return typeof t === 'number' && Number.isInteger(t) ? Math.min(30, Math.max(1, t)) : 10;
}

/**
 * Calls the admission webhooks of the stored Mutating- and ValidatingWebhookConfigurations, as
 * kube-apiserver does: {@link mutate} before schema validation (serially, configurations by name,
 * patches applied in turn, `reinvocationPolicy: IfNeeded` honoured once), {@link validate} after
 * it (in parallel). Configurations are read once and cached until {@link invalidate}.
 *
 * @example
 * const admission = new WebhookAdmission({ listConfigurations, namespaceLabels });
 * object = await admission.mutate({ ...attributes, object }, warn);
 * validateSchema(object);
 * await admission.validate({ ...attributes, object }, warn);
 */
export class WebhookAdmission {
  readonly #options: WebhookAdmissionOptions;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #cached: Promise<Configurations> | undefined;

  constructor(options: WebhookAdmissionOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? noopLogger;
  }

  /** Forgets the cached configurations (a configuration was written). */
  invalidate(): void {
    this.#cached = undefined;
  }

  #configurations(): Promise<Configurations> {
    if (this.#cached === undefined) {
      const read = (async (): Promise<Configurations> => ({
        mutating: webhooksOf(await this.#options.listConfigurations('MutatingWebhookConfiguration')),
        validating: webhooksOf(await this.#options.listConfigurations('ValidatingWebhookConfiguration')),
      }))();
      this.#cached = read;
      read.catch(() => {
        if (this.#cached === read) this.#cached = undefined;
      });
    }
    return this.#cached;
  }

  async #matching(
    hooks: readonly ConfiguredWebhook[],
    attributes: AdmissionAttributes,
  ): Promise<Invocation[]> {
    const out: Invocation[] = [];
    for (const hook of hooks) {
      const { webhook } = hook;
      const matched = matchedVersion(webhook, attributes);
      if (matched === undefined || !objectSelected(webhook, attributes)) continue;
      if (!(await namespaceSelected(webhook, attributes, this.#options.namespaceLabels))) continue;
      if (hasMatchConditions(webhook)) {
        const namespace = await this.#namespaceObject(attributes);
        const invoked = await invocationOf(attributes, matched);
        if (!matchConditionsHold(webhook, invoked, namespace)) continue;
      }
      out.push({ hook, matched });
    }
    return out;
  }

  /**
   * `namespaceObject` of `matchConditions`: the request's Namespace as far as admission knows it
   * (its name and labels), null for cluster-scoped requests.
   */
  async #namespaceObject(attributes: AdmissionAttributes): Promise<JsonObject | null> {
    if (!attributes.namespaced || attributes.namespace === '') return null;
    const labels = await this.#options.namespaceLabels(attributes.namespace);
    return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: attributes.namespace, labels } };
  }

  /**
   * Runs the matching mutating webhooks; resolves with the object after their patches (the same
   * object when none matched or none patched). A denial or a failure under `failurePolicy: Fail`
   * rejects.
   */
  async mutate(attributes: AdmissionAttributes, warn: Warn): Promise<JsonObject | null> {
    if (isExempt(attributes)) return attributes.object;
    const hooks = await this.#matching((await this.#configurations()).mutating, attributes);
    let object = attributes.object;
    let changedAt = -1;
    const ranBeforeChange = new Set<number>();
    for (const [i, invocation] of hooks.entries()) {
      const next = await this.#mutateOnce(invocation, { ...attributes, object }, warn);
      if (next !== object) {
        changedAt = i;
        object = next;
      }
      if (invocation.hook.webhook.reinvocationPolicy === 'IfNeeded') ranBeforeChange.add(i);
    }
    // IfNeeded: a webhook that ran before a later webhook changed the object runs once more.
    for (const [i, invocation] of hooks.entries()) {
      if (ranBeforeChange.has(i) && i < changedAt)
        object = await this.#mutateOnce(invocation, { ...attributes, object }, warn);
    }
    return object;
  }

  /** One mutating call, in the version the rules matched; the patched object comes back in the request's. */
  async #mutateOnce(
    { hook, matched }: Invocation,
    attributes: AdmissionAttributes,
    warn: Warn,
  ): Promise<JsonObject | null> {
    const invoked = await invocationOf(attributes, matched);
    const result = await this.#call(hook.webhook, invoked, true, warn);
    if (result?.patch === undefined || invoked.object === null) return attributes.object;
    const { patch } = result;
    let changed: JsonObject;
    try {
      changed = patched(invoked.object, patch);
    } catch (error) {
      throw new AdmissionWebhookError(hook.webhook.name, `JSON Patch: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return backToRequest(changed, matched, attributes);
  }

  /** Runs the matching validating webhooks in parallel; rejects with the first denial or failure. */
  async validate(attributes: AdmissionAttributes, warn: Warn): Promise<void> {
    if (isExempt(attributes)) return;
    const hooks = await this.#matching((await this.#configurations()).validating, attributes);
    const outcomes = await Promise.allSettled(
      hooks.map(async ({ hook, matched }) =>
        this.#call(hook.webhook, await invocationOf(attributes, matched), false, warn),
      ),
    );
    for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  }

  /**
   * One call: undefined when it failed under `failurePolicy: Ignore`; warnings recorded; a denial
   * throws {@link AdmissionDeniedError}, a failure under Fail {@link AdmissionWebhookError}.
   */
  async #call(
    webhook: Webhook,
    attributes: AdmissionAttributes,
    mutating: boolean,
    warn: Warn,
  ): Promise<ReviewResult | undefined> {
    if (attributes.dryRun && webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun') {
      throw new BadRequestError(`admission webhook ${JSON.stringify(webhook.name)} does not support dry run`);
    }
    const timeoutSeconds = timeoutSecondsOf(webhook);
    let result: ReviewResult;
    try {
      const endpoint = endpointOf(
        webhook,
        this.#options.resolveService ?? localServiceResolver,
        timeoutSeconds,
      );
      const { uid, body } = reviewRequest(attributes);
      const local = this.#options.localWebhooks?.dispatcher(
        new URL(endpoint.url),
        pemOf(webhook.clientConfig.caBundle),
        endpoint.serverName,
      );
      const review =
        local === undefined
          ? await postReview(
              endpoint,
              webhook.clientConfig.caBundle,
              body,
              timeoutSeconds * 1000,
              this.#clock,
            )
          : await postReviewLocally(local, endpoint, body, timeoutSeconds * 1000, this.#clock);
      result = readReview(review, uid, mutating);
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error);
      if (webhook.failurePolicy === 'Ignore') {
        this.#logger.warn({ webhook: webhook.name, error: problem }, 'Failed calling webhook, failing open');
        return undefined;
      }
      this.#logger.warn({ webhook: webhook.name, error: problem }, 'Failed calling webhook, failing closed');
      throw new AdmissionWebhookError(webhook.name, problem, { cause: error });
    }
    for (const text of result.warnings) warn(text);
    if (!result.allowed) throw new AdmissionDeniedError(webhook.name, result.status);
    return result;
  }
}
