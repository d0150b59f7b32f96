import type { IncomingMessage } from 'node:http';
import { readBody } from './body.ts';
import { unsupportedMediaType } from './errors.ts';
import { FaultError, FaultErrorCodes, invalidRule, overLimit } from './fault-errors.ts';
import {
  checkInteger,
  type DelayFault,
  type FailRatioFault,
  type PathPattern,
  type StallWatchesFault,
} from './fault-rules.ts';
import { parseMediaType } from './media.ts';

/** The admin endpoint's body limit: rules are tiny. */
export const MAX_ADMIN_BODY_BYTES = 64 * 1024;

/** The longest `downMs` of a restart and `ms` of a delay the admin endpoint accepts: one minute. */
export const MAX_ADMIN_DURATION_MS = 60_000;

/** How many rules may be active when the admin endpoint adds one. */
export const MAX_ADMIN_RULES = 100;

/** A rule as `POST /converge/faults` describes it. */
export type FaultRuleRequest =
  | { readonly type: 'delay'; readonly options: DelayFault }
  | { readonly type: 'failRatio'; readonly options: FailRatioFault }
  | { readonly type: 'stallWatches'; readonly options: StallWatchesFault };

// `pathRegExp` is listed so that it is refused with its own reason (pathOf), not as unknown.
const MATCH_FIELDS = ['type', 'pathPattern', 'pathRegExp', 'methods'];
const FIELDS: Readonly<Record<FaultRuleRequest['type'], ReadonlySet<string>>> = {
  delay: new Set([...MATCH_FIELDS, 'ms', 'times']),
  failRatio: new Set([...MATCH_FIELDS, 'ratio', 'status', 'retryAfterSeconds', 'phase', 'times']),
  stallWatches: new Set(['type', 'pathPattern', 'pathRegExp']),
};

function malformed(message: string): FaultError {
  return new FaultError(FaultErrorCodes.MALFORMED_BODY, 400, 'BadRequest', message);
}

/**
 * Reads a JSON object body (at most 64 KiB; 413 beyond, 415 for another Content-Type); an empty
 * body is `undefined`. Malformed JSON, or JSON that is not an object, is a 400.
 */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const bytes = await readBody(req, MAX_ADMIN_BODY_BYTES);
  if (bytes.length === 0) return undefined;
  const type = parseMediaType(req.headers['content-type'] ?? '');
  if (type?.type !== 'application/json') throw unsupportedMediaType(['application/json']);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw malformed(`the body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw malformed('the body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * `pathPattern`, a glob (matched in linear time). A `pathRegExp` is refused: a regular expression
 * from outside the process could backtrack for hours (`(a+)+$`) and hang the event loop.
 */
function pathOf(body: Record<string, unknown>): { pathPattern?: PathPattern } {
  const { pathPattern, pathRegExp } = body;
  if (pathRegExp !== undefined) {
    throw overLimit(
      'pathRegExp',
      'regular expressions are not accepted over HTTP (they can backtrack without end); use pathPattern, a glob',
    );
  }
  if (pathPattern !== undefined && typeof pathPattern !== 'string') {
    throw invalidRule('pathPattern', 'must be a glob string');
  }
  return pathPattern === undefined ? {} : { pathPattern };
}

/**
 * Turns a `POST /converge/faults` body into rule options, strictly: `type` must be `delay`,
 * `failRatio` or `stallWatches`, and no field outside that type's options may appear. Values are
 * then validated by the injector as in-process options are.
 */
export function parseRuleRequest(body: Record<string, unknown> | undefined): FaultRuleRequest {
  if (body === undefined) throw malformed('the body must be a JSON object describing a fault rule');
  const { type } = body;
  if (type !== 'delay' && type !== 'failRatio' && type !== 'stallWatches') {
    throw invalidRule('type', `must be "delay", "failRatio" or "stallWatches", got ${JSON.stringify(type)}`);
  }
  const allowed = FIELDS[type];
  for (const key of Object.keys(body)) {
    if (!allowed.has(key)) throw invalidRule(key, `unknown field for a ${type} rule`);
  }
  const path = pathOf(body);
  if (type === 'delay') boundedDuration('ms', body.ms);
  // The option objects below carry the body's values as they are; the injector checks their types.
  const field = (name: string): Record<string, unknown> =>
    body[name] === undefined ? {} : { [name]: body[name] };
  switch (type) {
    case 'delay':
      return {
        type,
        options: { ...path, ...field('methods'), ...field('ms'), ...field('times') } as unknown as DelayFault,
      };
    case 'failRatio':
      return {
        type,
        options: {
          ...path,
          ...field('methods'),
          ...field('ratio'),
          ...field('status'),
          ...field('retryAfterSeconds'),
          ...field('phase'),
          ...field('times'),
        } as unknown as FailRatioFault,
      };
    case 'stallWatches':
      return { type, options: path };
  }
}

/** The optional body of `POST /converge/faults/restart`: `{ "downMs": N }`. */
export function parseRestartRequest(body: Record<string, unknown> | undefined): { downMs?: number } {
  if (body === undefined) return {};
  for (const key of Object.keys(body)) {
    if (key !== 'downMs') throw invalidRule(key, 'unknown field for a restart (only downMs)');
  }
  if (body.downMs === undefined) return {};
  boundedDuration('downMs', body.downMs);
  return { downMs: checkInteger('downMs', body.downMs, 0, MAX_ADMIN_DURATION_MS) };
}

/** A number over {@link MAX_ADMIN_DURATION_MS} is a 422 (other mistakes are left to the 400 checks). */
function boundedDuration(field: string, value: unknown): void {
  if (typeof value === 'number' && value > MAX_ADMIN_DURATION_MS) {
    throw overLimit(field, `must be at most ${MAX_ADMIN_DURATION_MS} ms over HTTP, got ${value}`);
  }
}
