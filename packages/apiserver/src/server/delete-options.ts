import {
  BadRequestError,
  type DeleteOptions,
  type PropagationPolicy,
  type StatusCause,
} from '@converge/runtime';
import { decodeObjectBody, readBody, requireObject } from './body.ts';
import type { RequestContext } from './context.ts';
import { cause, invalidOptions } from './field-causes.ts';
import { asObject } from './json-util.ts';
import { dryRunCauses, queryBool, queryInt } from './query.ts';

/** DeleteOptions as a request gives them. */
export interface ParsedDeleteOptions {
  readonly options: DeleteOptions;
  /** `orphanDependents: false` turns a pending deletion's 200 into a 202. */
  readonly orphanDependents: boolean | undefined;
}

const POLICIES = ['Foreground', 'Background', 'Orphan'];

function fromBody(body: Record<string, unknown>): Record<string, unknown> {
  const { kind, apiVersion } = body;
  if (kind !== undefined && kind !== 'DeleteOptions') {
    throw new BadRequestError(
      `decoded object cannot be converted to DeleteOptions: kind ${JSON.stringify(kind)}`,
    );
  }
  if (apiVersion !== undefined && apiVersion !== 'v1' && apiVersion !== 'meta.k8s.io/v1') {
    throw new BadRequestError(
      `decoded object cannot be converted to DeleteOptions: apiVersion ${JSON.stringify(apiVersion)}`,
    );
  }
  return body;
}

function fromQuery(ctx: RequestContext): Record<string, unknown> {
  const q = ctx.query;
  const out: Record<string, unknown> = {};
  const policy = q.get('propagationPolicy');
  if (policy !== null) out.propagationPolicy = policy;
  const grace = queryInt(q, 'gracePeriodSeconds');
  if (grace !== undefined) out.gracePeriodSeconds = grace;
  const orphan = queryBool(q, 'orphanDependents');
  if (orphan !== undefined) out.orphanDependents = orphan;
  const dryRun = q.getAll('dryRun');
  if (dryRun.length > 0) out.dryRun = dryRun;
  return out;
}

function typed<T>(
  value: unknown,
  check: (v: unknown) => boolean,
  field: string,
  expected: string,
): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (!check(value))
    throw new BadRequestError(`unable to decode DeleteOptions: ${field} must be ${expected}`);
  return value as T;
}

/**
 * Reads DeleteOptions from the body (JSON or YAML, `kind: DeleteOptions` optional) or, when the
 * body is empty, from the query (`propagationPolicy`, `gracePeriodSeconds`, `orphanDependents`,
 * `dryRun`), and validates them as `ValidateDeleteOptions` does (422 `DeleteOptions.meta.k8s.io`).
 * `orphanDependents` maps to the Orphan or Background policy.
 */
export async function parseDeleteOptions(ctx: RequestContext): Promise<ParsedDeleteOptions> {
  const body = await readBody(ctx.req);
  const raw =
    body.length > 0
      ? fromBody(requireObject(decodeObjectBody(ctx.req.headers['content-type'], body, undefined).value))
      : fromQuery(ctx);
  const policy = typed<string>(
    raw.propagationPolicy,
    (v) => typeof v === 'string',
    'propagationPolicy',
    'a string',
  );
  const grace = typed<number>(
    raw.gracePeriodSeconds,
    (v) => Number.isSafeInteger(v),
    'gracePeriodSeconds',
    'an integer',
  );
  const orphan = typed<boolean>(
    raw.orphanDependents,
    (v) => typeof v === 'boolean',
    'orphanDependents',
    'a boolean',
  );
  const dryRun =
    typed<string[]>(
      raw.dryRun,
      (v) => Array.isArray(v) && v.every((s) => typeof s === 'string'),
      'dryRun',
      'a list of strings',
    ) ?? [];
  const pre =
    raw.preconditions === undefined || raw.preconditions === null ? undefined : asObject(raw.preconditions);
  if (raw.preconditions !== undefined && raw.preconditions !== null && pre === undefined) {
    throw new BadRequestError('unable to decode DeleteOptions: preconditions must be an object');
  }
  const uid = typed<string>(pre?.uid, (v) => typeof v === 'string', 'preconditions.uid', 'a string');
  const rv = typed<string>(
    pre?.resourceVersion,
    (v) => typeof v === 'string',
    'preconditions.resourceVersion',
    'a string',
  );
  const causes: StatusCause[] = [];
  if (orphan !== undefined && policy !== undefined) {
    causes.push(
      cause.invalid(
        'propagationPolicy',
        policy,
        'orphanDependents and deletionPropagation cannot be both set',
      ),
    );
  }
  if (policy !== undefined && !POLICIES.includes(policy)) {
    causes.push(cause.unsupported('propagationPolicy', policy, [...POLICIES, 'nil']));
  }
  causes.push(...dryRunCauses(dryRun));
  if (grace !== undefined && grace < 0) {
    causes.push(cause.invalid('gracePeriodSeconds', grace, 'must be greater than or equal to 0'));
  }
  if (causes.length > 0) throw invalidOptions('DeleteOptions', causes);
  const propagationPolicy = (policy ?? (orphan === true ? 'Orphan' : undefined)) as
    | PropagationPolicy
    | undefined;
  const preconditions =
    uid === undefined && rv === undefined
      ? undefined
      : {
          ...(uid === undefined ? {} : { uid }),
          ...(rv === undefined ? {} : { resourceVersion: rv }),
        };
  const options: DeleteOptions = {
    ...(propagationPolicy === undefined ? {} : { propagationPolicy }),
    ...(preconditions === undefined ? {} : { preconditions }),
    ...(grace === undefined ? {} : { gracePeriodSeconds: grace }),
    dryRun: dryRun.length > 0,
  };
  return { options, orphanDependents: orphan };
}
