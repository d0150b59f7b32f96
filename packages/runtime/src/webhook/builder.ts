import { type ResourceType, resourceType } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import type { Defaulter, Validator } from './admission.ts';
import type { Converter } from './conversion.ts';
import { WebhookBuilderError } from './errors.ts';
import {
  type AdmissionWebhookRegistrationOptions,
  CONVERSION_PATH,
  mutatePath,
  validatePath,
  type WebhookRegistration,
  webhookName,
} from './registration.ts';
import { checkPath, checkWebhookName, resolveAdmissionOptions } from './registration-options.ts';
import type { WebhookRegistry } from './registry.ts';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Registers one kind's webhooks (controller-runtime's `ctrl.NewWebhookManagedBy(mgr).For(&T{})`):
 * a defaulter (mutating), a validator, a converter, then `complete()`. Options are checked at each
 * call (an `OptionsError` names the field); `complete()` registers everything or nothing
 * (`WebhookConflictError` when the kind already has that webhook, `WebhookBuilderError` when
 * nothing was added or it completes twice).
 *
 * Paths are controller-runtime's (`/mutate-example-com-v1-website`, `/validate-…`, `/convert`
 * for every converter); names in the webhook configurations are `mwebsite-v1.example.com` and
 * `vwebsite-v1.example.com` (see {@link webhookName}).
 *
 * @example
 * manager
 *   .webhook<Website>(websiteType)
 *   .withDefaulter({ default(site) { site.spec.replicas ??= 1; } })
 *   .withValidator({ validate: ({ object }) => (object?.spec.domain ? allowed() : denied('spec.domain is required')) })
 *   .complete();
 */
export class WebhookBuilder<T extends KubeObject = KubeObject> {
  readonly #type: ResourceType;
  readonly #registry: WebhookRegistry;
  #defaulter: WebhookRegistration | undefined;
  #validator: WebhookRegistration | undefined;
  #converter: WebhookRegistration | undefined;
  #completed = false;

  constructor(type: ResourceType, registry: WebhookRegistry) {
    this.#type = resourceType(type);
    const { group } = this.#type;
    if (group !== '' && (group.length > 253 || !DNS_SUBDOMAIN.test(group))) {
      throw new OptionsError('type.group', group, "a DNS subdomain such as example.com ('' for core)");
    }
    this.#registry = registry;
  }

  /** A mutating webhook calling `defaulter` on CREATE and UPDATE (see the options for others). */
  withDefaulter(defaulter: Defaulter<T>, options?: AdmissionWebhookRegistrationOptions): this {
    this.#check('withDefaulter', this.#defaulter);
    if (typeof (defaulter as Partial<Defaulter<T>> | null)?.default !== 'function') {
      throw new OptionsError(
        'withDefaulter.defaulter',
        defaulter,
        'an object with a default(object, request) method',
      );
    }
    const o = resolveAdmissionOptions('mutating', options, 'withDefaulter.options');
    const { path, name, ...resolved } = o;
    this.#defaulter = Object.freeze({
      type: this.#type,
      webhook: 'mutating',
      path: path ?? checkPath('withDefaulter (path from the type)', mutatePath(this.#type)),
      name:
        name ?? checkWebhookName('withDefaulter (name from the type)', webhookName('mutating', this.#type)),
      handler: defaulter as unknown as Defaulter<KubeObject>,
      options: Object.freeze(resolved),
    });
    return this;
  }

  /** A validating webhook calling `validator` on CREATE and UPDATE (and DELETE when `operations` lists it). */
  withValidator(validator: Validator<T>, options?: AdmissionWebhookRegistrationOptions): this {
    this.#check('withValidator', this.#validator);
    if (typeof (validator as Partial<Validator<T>> | null)?.validate !== 'function') {
      throw new OptionsError(
        'withValidator.validator',
        validator,
        'an object with a validate(request) method',
      );
    }
    const { path, name, ...resolved } = resolveAdmissionOptions(
      'validating',
      options,
      'withValidator.options',
    );
    this.#validator = Object.freeze({
      type: this.#type,
      webhook: 'validating',
      path: path ?? checkPath('withValidator (path from the type)', validatePath(this.#type)),
      name:
        name ?? checkWebhookName('withValidator (name from the type)', webhookName('validating', this.#type)),
      handler: validator as unknown as Validator<KubeObject>,
      options: Object.freeze(resolved),
    });
    return this;
  }

  /**
   * The converter of this kind's group and kind, for all its versions (the builder's version does
   * not matter). Served with every other converter at `/convert`, dispatched by group and kind.
   */
  withConverter(converter: Converter): this {
    this.#check('withConverter', this.#converter);
    if (typeof (converter as Partial<Converter> | null)?.convert !== 'function') {
      throw new OptionsError(
        'withConverter.converter',
        converter,
        'an object with a convert(object, desiredAPIVersion, signal) method (hubAndSpoke makes one)',
      );
    }
    const { group, plural } = this.#type;
    if (!group.includes('.')) {
      throw new OptionsError(
        'withConverter',
        this.#type.kind,
        `a custom resource kind: ${group === '' ? 'the core group' : `group ${group}`} is built in, and CRD groups hold a dot`,
      );
    }
    this.#converter = Object.freeze({
      type: this.#type,
      webhook: 'conversion',
      path: CONVERSION_PATH,
      name: `${plural}.${group}`,
      handler: converter,
      options: Object.freeze({}),
    });
    return this;
  }

  /** Registers what was added; served at once by the manager's webhook server, if it has one. */
  complete(): void {
    if (this.#completed)
      throw new WebhookBuilderError(
        `webhook builder for ${this.#type.kind} completed twice; one complete() per builder`,
      );
    const batch = [this.#defaulter, this.#validator, this.#converter].filter(
      (r): r is WebhookRegistration => r !== undefined,
    );
    if (batch.length === 0) {
      throw new WebhookBuilderError(
        `webhook builder for ${this.#type.kind} completed with nothing to register: call withDefaulter, withValidator or withConverter first`,
      );
    }
    this.#registry.register(batch);
    this.#completed = true;
  }

  #check(method: string, existing: WebhookRegistration | undefined): void {
    if (this.#completed) {
      throw new WebhookBuilderError(
        `${method} after complete() on the webhook builder for ${this.#type.kind}; start a new builder`,
      );
    }
    if (existing !== undefined) {
      throw new WebhookBuilderError(
        `${method} called twice on the webhook builder for ${this.#type.kind}; one per builder`,
      );
    }
  }
}
