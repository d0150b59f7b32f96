import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock, Fence, Logger, ResourceType } from '@converge/runtime';
import { BadRequestError, FENCE_HEADER, parseFenceHeader } from '@converge/runtime';
import type { Store } from '@converge/store';
import type { PolicyAdmission, WebhookAdmission } from '../admission/index.ts';
import type { ApiResource, StrategyContext } from './api-resource.ts';
import type { ApiServerExtensions } from './extensions.ts';
import type { FieldValidation } from './query.ts';
import type { RbacAuthorizer } from './rbac-authorizer.ts';
import type { ResourceTarget } from './request-info.ts';
import type { ResourceRegistry } from './resource-registry.ts';
import type { WatchEncoder } from './watch-encoder.ts';
import type { WatchTracker } from './watch-tracker.ts';

/** Reacts to writes of CustomResourceDefinitions (registers and unregisters their types). */
export interface CrdReconciler {
  /** Brings the served types of the CRD `name` in line with the store; resolves when done. */
  reconcile(name: string): Promise<void>;
}

/** What every handler of one server shares. */
export interface ServerContext {
  readonly store: Store;
  readonly registry: ResourceRegistry;
  readonly extensions: ApiServerExtensions;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly encoder: WatchEncoder;
  readonly watches: WatchTracker;
  readonly crds: CrdReconciler;
  /** The store type of core/v1 Namespace. */
  readonly namespaceType: ResourceType;
  /** Admission webhooks called on writes; none when absent. */
  readonly admission?: WebhookAdmission;
  /** ValidatingAdmissionPolicies evaluated on writes (after schema validation, before validating webhooks). */
  readonly policies?: PolicyAdmission;
  /** The RBAC authorizer over the stored roles and bindings; absent: only bootstrap rules and system:masters. */
  readonly rbac?: RbacAuthorizer;
}

/** One request to a REST resource. */
export interface RequestContext {
  readonly server: ServerContext;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly target: ResourceTarget;
  readonly resource: ApiResource;
  readonly query: URLSearchParams;
  readonly pretty: boolean;
  /** `Warning` headers to send with the response. */
  readonly warnings: string[];
  /** The ownership a write is made for (the `Converge-Fence` header); the store refuses a stale one. */
  readonly fence?: Fence;
}

/** The store write option of the request's fence (none without a `Converge-Fence` header). */
export function fenceOption(ctx: RequestContext): { readonly fence?: Fence } {
  return ctx.fence === undefined ? {} : { fence: ctx.fence };
}

/** The request's `Converge-Fence` header, parsed; a malformed or repeated one is a BadRequestError. */
export function requestFence(req: IncomingMessage): Fence | undefined {
  const value = req.headers[FENCE_HEADER];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw new BadRequestError(`the ${FENCE_HEADER} header may be sent once`);
  return parseFenceHeader(value);
}

/** The strategy context of a request. */
export function strategyContext(ctx: RequestContext, fieldValidation: FieldValidation): StrategyContext {
  return {
    namespace: ctx.target.namespace,
    fieldValidation,
    warn: (text) => ctx.warnings.push(text),
    now: () => ctx.server.clock.now(),
    random: () => ctx.server.clock.random(),
  };
}
