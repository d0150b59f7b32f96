import type { KubeObject, UnstructuredObject } from '../object/index.ts';
import type { Runnable } from '../runnable/index.ts';
import type { AdmissionWebhookOptions, Defaulter, Validator } from './admission.ts';
import type { Converter } from './conversion.ts';
import { ConverterNotFoundError, WebhookConflictError } from './errors.ts';
import { CONVERSION_PATH, type WebhookRegistration } from './registration.ts';

/**
 * What serves registered webhooks: a runnable with one method per webhook type.
 * `@converge/kube`'s `WebhookServer` is one; give it as `ManagerOptions.webhookServer`.
 */
export interface WebhookHost extends Runnable {
  validating(path: string, validator: Validator<KubeObject>, options?: AdmissionWebhookOptions): unknown;
  mutating(path: string, defaulter: Defaulter<KubeObject>, options?: AdmissionWebhookOptions): unknown;
  conversion(path: string, converter: Converter): unknown;
}

/** `group/kind` of an apiVersion and kind (`example.com/Website`; `/Pod` for the core group). */
function groupKind(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  return `${slash < 0 ? '' : apiVersion.slice(0, slash)}/${kind}`;
}

/** What may be registered only once: a kind's webhook of one type (per version for admission). */
function identity(r: WebhookRegistration): string {
  const { group, version, kind } = r.type;
  return r.webhook === 'conversion'
    ? `conversion ${group}/${kind}`
    : `${r.webhook} ${group}/${version}/${kind}`;
}

/**
 * The webhooks of one manager: registrations checked for conflicts, served by every host given to
 * {@link WebhookRegistry.serveWith} (also the ones registered later), and one {@link Converter}
 * that dispatches by group and kind to the registered converters (served at `/convert`).
 *
 * Hard mode, without the manager: `const registry = new WebhookRegistry(); registry.serveWith(server);
 * new WebhookBuilder(websiteType, registry).withValidator(v).complete();`.
 */
export class WebhookRegistry {
  readonly #registrations: WebhookRegistration[] = [];
  readonly #identities = new Set<string>();
  readonly #converters = new Map<string, Converter>();
  readonly #hosts: WebhookHost[] = [];
  readonly #listeners = new Set<(registrations: readonly WebhookRegistration[]) => void>();

  /**
   * The converter served at `/convert`: finds the converter registered for the object's group and
   * kind and calls it; an unregistered one throws {@link ConverterNotFoundError}, which the server
   * answers as a `Failure`.
   */
  readonly converter: Converter = {
    convert: (object: UnstructuredObject, desiredAPIVersion: string, signal: AbortSignal): unknown => {
      const apiVersion = typeof object?.apiVersion === 'string' ? object.apiVersion : '';
      const kind = typeof object?.kind === 'string' ? object.kind : '';
      const converter = this.#converters.get(groupKind(apiVersion, kind));
      if (converter === undefined) {
        const slash = apiVersion.indexOf('/');
        throw new ConverterNotFoundError(slash < 0 ? '' : apiVersion.slice(0, slash), kind, [
          ...this.#converters.keys(),
        ]);
      }
      return converter.convert(object, desiredAPIVersion, signal);
    },
  };

  /** Every registration, in the order completed. */
  get registrations(): readonly WebhookRegistration[] {
    return Object.freeze([...this.#registrations]);
  }

  /**
   * Serves every registration, present and future, with `host`. Converters share one path,
   * `/convert`, registered on the host with the first converter.
   */
  serveWith(host: WebhookHost): void {
    this.#hosts.push(host);
    let conversion = false;
    for (const r of this.#registrations) {
      if (r.webhook !== 'conversion') this.#serve(host, r);
      else if (!conversion) {
        conversion = true;
        this.#serve(host, r);
      }
    }
  }

  /** Calls `listener` with each batch registered from now on; returns the unsubscribe function. */
  onRegistered(listener: (registrations: readonly WebhookRegistration[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Registers a batch (one builder's `complete()`) all or nothing: a {@link WebhookConflictError}
   * when a kind's webhook of that type, a path or a webhook name is already taken.
   */
  register(batch: readonly WebhookRegistration[]): void {
    const identities = new Set(this.#identities);
    const paths = new Map(
      this.#registrations.filter((r) => r.webhook !== 'conversion').map((r) => [r.path, identity(r)]),
    );
    const names = new Set(this.#registrations.map((r) => `${r.webhook} ${r.name}`));
    for (const r of batch) {
      const id = identity(r);
      if (identities.has(id)) {
        throw new WebhookConflictError(
          `a ${r.webhook} webhook is already registered for ${r.webhook === 'conversion' ? `kind ${r.type.kind} of group ${JSON.stringify(r.type.group)}` : `${r.type.kind} ${r.type.group}/${r.type.version}`}; one ${r.webhook === 'conversion' ? 'converter per group and kind' : `${r.webhook} webhook per kind and version`}`,
          id,
        );
      }
      identities.add(id);
      if (r.webhook !== 'conversion') {
        const other = paths.get(r.path);
        if (other !== undefined || r.path === CONVERSION_PATH) {
          throw new WebhookConflictError(
            `path ${r.path} of the ${id} webhook is already served (${other ?? 'the conversion webhook'})`,
            r.path,
          );
        }
        paths.set(r.path, id);
        if (names.has(`${r.webhook} ${r.name}`)) {
          throw new WebhookConflictError(
            `webhook name ${r.name} is already used by another ${r.webhook} webhook`,
            r.name,
          );
        }
        names.add(`${r.webhook} ${r.name}`);
      }
    }
    const hadConverter = this.#converters.size > 0;
    for (const r of batch) {
      this.#registrations.push(r);
      this.#identities.add(identity(r));
      if (r.webhook === 'conversion') this.#converters.set(`${r.type.group}/${r.type.kind}`, r.handler);
    }
    for (const host of this.#hosts) {
      let conversionServed = hadConverter;
      for (const r of batch) {
        if (r.webhook === 'conversion') {
          if (conversionServed) continue;
          conversionServed = true;
        }
        this.#serve(host, r);
      }
    }
    const frozen = Object.freeze([...batch]);
    for (const listener of this.#listeners) listener(frozen);
  }

  #serve(host: WebhookHost, r: WebhookRegistration): void {
    switch (r.webhook) {
      case 'validating':
        host.validating(r.path, r.handler, { sideEffects: r.options.sideEffects });
        return;
      case 'mutating':
        host.mutating(r.path, r.handler, { sideEffects: r.options.sideEffects });
        return;
      case 'conversion':
        host.conversion(CONVERSION_PATH, this.converter);
        return;
    }
  }
}
