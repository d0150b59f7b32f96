/**
 * Conversion of custom resources between the versions of their CRD: `strategy: None` rewrites
 * `apiVersion`; `strategy: Webhook` POSTs a ConversionReview to `conversion.webhook.clientConfig`
 * over the admission webhooks' keep-alive HTTPS client (`caBundle` trusted, `service` reached
 * through the server's resolver), 30 s timeout as kube-apiserver's, and checks the answer as
 * upstream does. Failures are a {@link ConversionWebhookError}: a 500 `conversion webhook for
 * GROUP/VERSION, Kind=KIND failed: …`.
 */
import {
  type Clock,
  ConvergeError,
  type KubeObject,
  type Logger,
  noopLogger,
  realClock,
} from '@converge/runtime';
import {
  endpointOf,
  localServiceResolver,
  postReview,
  type WebhookServiceResolver,
} from '../admission/index.ts';
import type { JsonObject, ObjectConversion, VersionConverter } from './api-resource.ts';
import { conversionRequest, convertedObjectsOf, gvkString, mergeConverted } from './conversion-review.ts';

/** Stable codes of conversion errors (never reused). */
export const ConversionErrorCodes = {
  /** A conversion webhook could not be called, failed, or answered something upstream rejects (500). */
  WEBHOOK_FAILED: 'CONVERGE_ERR_APISERVER_CONVERSION_WEBHOOK_FAILED',
} as const;

/**
 * A conversion through a CRD's webhook failed: the 500 kube-apiserver answers (reason unset),
 * `conversion webhook for example.com/v1, Kind=Widget failed: Post "https://…?timeout=30s": …`.
 */
export class ConversionWebhookError extends ConvergeError {
  readonly status = 500;
  /** Unset, as kube-apiserver's answer for a plain error (kubectl prints `Error from server: …`). */
  readonly reason = '';

  constructor(message: string, options?: { cause?: unknown }) {
    super(ConversionErrorCodes.WEBHOOK_FAILED, message, options);
  }
}

/** kube-apiserver's timeout for conversion webhook calls. */
export const CONVERSION_TIMEOUT_MS = 30_000;

/** `strategy: None`: only `apiVersion` changes. */
export const noneConversion: ObjectConversion = {
  convert(objects, desiredApiVersion) {
    return Promise.resolve(
      objects.map((o) => (o.apiVersion === desiredApiVersion ? o : { ...o, apiVersion: desiredApiVersion })),
    );
  },
};

/** Where conversion webhooks are called from: the server's clock, service resolver and logger. */
export interface ConversionWebhookOptions {
  /** `clientConfig.service` → base URL. Default: the admission webhooks' {@link localServiceResolver}. */
  readonly resolveService?: WebhookServiceResolver;
  /** Drives the call timeout. Default `realClock`. */
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Default {@link CONVERSION_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  /**
   * Drops the fields of a converted object its version's schema does not know (in place), as
   * apiextensions' schema-coercing converter does; nothing is pruned when absent.
   */
  readonly prune?: (crd: KubeObject, version: string, object: JsonObject) => unknown;
}

/** `spec.conversion.webhook` of a CRD, as stored. */
export interface ConversionWebhookSpec {
  readonly conversionReviewVersions?: readonly string[];
  readonly clientConfig?: {
    readonly url?: string;
    readonly caBundle?: string;
    readonly service?: {
      readonly namespace: string;
      readonly name: string;
      readonly path?: string;
      readonly port?: number;
    };
  };
}

/** Conversion through the webhook of the CRD `crdName`. */
export function webhookConversion(
  crdName: string,
  webhook: ConversionWebhookSpec,
  options: ConversionWebhookOptions = {},
): ObjectConversion {
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? noopLogger;
  const timeoutMs = options.timeoutMs ?? CONVERSION_TIMEOUT_MS;
  const resolve = options.resolveService ?? localServiceResolver;
  const clientConfig = webhook.clientConfig ?? {};
  const reviewVersions = webhook.conversionReviewVersions ?? [];
  return {
    async convert(objects, desiredApiVersion, listKind) {
      const first = objects[0];
      const gvk =
        listKind === undefined
          ? gvkString(String(first?.apiVersion ?? ''), String(first?.kind ?? ''))
          : gvkString(desiredApiVersion, listKind);
      let request: ReturnType<typeof conversionRequest>;
      try {
        request = conversionRequest(objects, desiredApiVersion, reviewVersions);
      } catch (error) {
        throw new ConversionWebhookError((error as Error).message, { cause: error });
      }
      if (request === undefined) return [...objects];
      let converted: unknown[];
      try {
        const endpoint = endpointOf(
          { name: `conversion_webhook_for_${crdName}`, clientConfig },
          resolve,
          Math.ceil(timeoutMs / 1000),
        );
        const review = await postReview(endpoint, clientConfig.caBundle, request.body, timeoutMs, clock);
        converted = convertedObjectsOf(review, request);
      } catch (error) {
        const problem = ((error as Error).message ?? String(error)).replace(/^failed to call webhook: /, '');
        logger.warn({ crd: crdName, error: problem }, 'Conversion webhook failed');
        throw new ConversionWebhookError(`conversion webhook for ${gvk} failed: ${problem}`, {
          cause: error,
        });
      }
      try {
        return mergeConverted(objects, request, converted, desiredApiVersion, gvk, listKind !== undefined);
      } catch (error) {
        throw new ConversionWebhookError((error as Error).message, { cause: error });
      }
    },
  };
}

/**
 * The {@link VersionConverter} of a served version over `conversion`: writes go to `stored`,
 * reads come back as `served`; lists are converted in one call.
 */
export function conversionConverter(
  conversion: ObjectConversion,
  served: string,
  stored: string,
  listKind: string,
  prune?: (apiVersion: string, object: JsonObject) => void,
): VersionConverter {
  // objects the webhook answered are fresh copies: pruned in place; the others are the inputs
  const pruned = (input: unknown, output: JsonObject): JsonObject => {
    if (prune !== undefined && output !== input) prune(String(output.apiVersion), output);
    return output;
  };
  const one = async (object: JsonObject, to: string): Promise<JsonObject> =>
    pruned(object, (await conversion.convert([object], to))[0] as JsonObject);
  return {
    toStorage: (object) => one(object, stored),
    fromStorage: (object: KubeObject) => one(object as unknown as JsonObject, served),
    fromStorageMany: async (objects: readonly KubeObject[]) =>
      (await conversion.convert(objects as unknown as readonly JsonObject[], served, listKind)).map((o, i) =>
        pruned(objects[i], o),
      ),
  };
}
