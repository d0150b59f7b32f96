import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@converge/runtime';
import { unknownResource } from './dispatch.ts';
import { methodNotAllowed } from './errors.ts';
import {
  MAX_ADMIN_RULES,
  parseRestartRequest,
  parseRuleRequest,
  readJsonObject,
} from './fault-admin-body.ts';
import { FaultError, FaultErrorCodes, overLimit } from './fault-errors.ts';
import type { FaultHandle, FaultInjector } from './fault-injector.ts';
import type { RequestUrl } from './request-url.ts';
import { writeValue } from './respond.ts';

/** Where the admin endpoint is served. */
export const FAULT_ADMIN_PATH = '/converge/faults';

/** Whether a request path belongs to the fault admin endpoint. */
export function isFaultAdminPath(pathname: string): boolean {
  return pathname === FAULT_ADMIN_PATH || pathname.startsWith(`${FAULT_ADMIN_PATH}/`);
}

function ruleNotFound(id: string): FaultError {
  return new FaultError(FaultErrorCodes.RULE_NOT_FOUND, 404, 'NotFound', `fault rule "${id}" not found`, {
    details: { name: id, kind: 'faults' },
  });
}

function list(faults: FaultInjector, openWatches: number): unknown {
  return {
    kind: 'FaultRuleList',
    items: faults.list(),
    counters: faults.counters,
    heldWatches: faults.heldWatches,
    openWatches,
  };
}

async function addRule(faults: FaultInjector, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const rule = parseRuleRequest(await readJsonObject(req));
  if (faults.list().length >= MAX_ADMIN_RULES) {
    throw overLimit(
      'type',
      `at most ${MAX_ADMIN_RULES} fault rules may be active; remove some first (DELETE ${FAULT_ADMIN_PATH})`,
    );
  }
  let handle: FaultHandle;
  switch (rule.type) {
    case 'delay':
      handle = faults.delay(rule.options);
      break;
    case 'failRatio':
      handle = faults.failRatio(rule.options);
      break;
    case 'stallWatches':
      handle = faults.stallWatches(rule.options);
      break;
  }
  const info = faults.list().find((r) => r.id === handle.id);
  writeValue(res, 201, info);
}

/** What the admin endpoint needs besides the injector. */
export interface FaultAdminContext {
  readonly faults: FaultInjector;
  readonly logger: Logger;
  /** How many watches are open (reported by `GET`). */
  readonly openWatches: () => number;
}

/**
 * The fault admin endpoint, for chaos runs driven from outside the process. Served only when the
 * server was created with `faultAdmin` (404 otherwise, like any unknown path); the request handler
 * has already checked the fault admin token, its own (the API's token gets 403; insecure mode does
 * not lift it). Never faulted itself. Errors are `metav1.Status`es. Bounded: globs only (no
 * regular expressions), `ms` and `downMs` at most 60 000, at most 100 active rules (422 beyond).
 *
 * - `GET /converge/faults` → 200 `{ kind: 'FaultRuleList', items, counters, heldWatches, openWatches }`
 * - `POST /converge/faults` with a JSON rule (`{ "type": "delay" | "failRatio" | "stallWatches", … }`,
 *   the in-process options, `pathPattern` a glob) → 201 with the rule and its `id`; anything
 *   malformed, unknown or out of range → 400 naming the field; over the bounds above → 422
 * - `DELETE /converge/faults` → 200 `{ removed: n }` (every rule); `GET|DELETE /converge/faults/{id}`
 *   → the rule / removes it (404 if unknown)
 * - `POST /converge/faults/drop-watches` → 200 `{ dropped: n }`
 * - `POST /converge/faults/restart` (optional `{ "downMs": n }`) → 202, then the server restarts
 *   once the answer is sent (this connection is closed like every other one)
 */
export async function serveFaultAdmin(
  ctx: FaultAdminContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: RequestUrl,
): Promise<void> {
  const { faults } = ctx;
  const method = req.method ?? 'GET';
  const rest = url.pathname.slice(FAULT_ADMIN_PATH.length).replace(/^\//, '');
  if (rest === '') {
    if (method === 'GET') writeValue(res, 200, list(faults, ctx.openWatches()));
    else if (method === 'POST') await addRule(faults, req, res);
    else if (method === 'DELETE') writeValue(res, 200, { removed: faults.clear() });
    else throw methodNotAllowed();
    return;
  }
  if (rest.includes('/')) throw unknownResource();
  if (rest === 'drop-watches') {
    if (method !== 'POST') throw methodNotAllowed();
    writeValue(res, 200, { dropped: faults.dropWatches() });
    return;
  }
  if (rest === 'restart') {
    if (method !== 'POST') throw methodNotAllowed();
    const options = parseRestartRequest(await readJsonObject(req));
    res.setHeader('Connection', 'close');
    res.once('finish', () => {
      faults
        .restart(options)
        .catch((error: unknown) => ctx.logger.error({ err: error }, 'Fault restart failed'));
    });
    writeValue(res, 202, { restarting: true });
    return;
  }
  const id = decodeURIComponent(rest);
  if (method === 'GET') {
    const rule = faults.list().find((r) => r.id === id);
    if (rule === undefined) throw ruleNotFound(id);
    writeValue(res, 200, rule);
  } else if (method === 'DELETE') {
    if (!faults.remove(id)) throw ruleNotFound(id);
    writeValue(res, 200, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: id, kind: 'faults' },
      code: 200,
    });
  } else throw methodNotAllowed();
}
