import { BadRequestError, type StatusCause } from '@converge/runtime';
import { cause, invalidOptions } from './field-causes.ts';

/** The query of a request (`URLSearchParams` keeps repeated keys). */
export type Query = URLSearchParams;

/** apimachinery's bool conversion: absent → false, `0` or `false` (any case) → false, anything else → true. */
export function queryBool(query: Query, name: string): boolean | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  return !(value === '0' || value.toLowerCase() === 'false');
}

/** An integer query parameter; malformed → 400. */
export function queryInt(query: Query, name: string): number | undefined {
  const value = query.get(name);
  if (value === null || value === '') return undefined;
  if (!/^-?[0-9]+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new BadRequestError(`invalid value for ${name}: ${JSON.stringify(value)}: must be an integer`);
  }
  return Number(value);
}

/** The list and watch parameters of a GET. */
export interface ListQuery {
  readonly watch: boolean;
  readonly labelSelector: string;
  readonly fieldSelector: string;
  /** KEP-5866 shard selector; '' when absent (an empty parameter counts as absent, as in kube). */
  readonly shardSelector: string;
  readonly limit: number;
  readonly continue: string;
  readonly resourceVersion: string;
  readonly resourceVersionMatch: string;
  readonly allowWatchBookmarks: boolean;
  /** undefined when absent (a tri-state, as in ListOptions). */
  readonly sendInitialEvents: boolean | undefined;
  readonly timeoutSeconds: number | undefined;
}

/**
 * Parses and validates ListOptions as kube-apiserver does (`ValidateListOptions` with the WatchList
 * feature on): `resourceVersionMatch` needs a resourceVersion on lists and `sendInitialEvents` on
 * watches; `sendInitialEvents` needs `resourceVersionMatch=NotOlderThan` and is forbidden on lists.
 * Violations are 422 `ListOptions.meta.k8s.io "" is invalid`.
 */
export function parseListQuery(query: Query): ListQuery {
  const limit = queryInt(query, 'limit') ?? 0;
  const timeoutSeconds = queryInt(query, 'timeoutSeconds');
  const parsed: ListQuery = {
    watch: queryBool(query, 'watch') ?? false,
    labelSelector: query.get('labelSelector') ?? '',
    fieldSelector: query.get('fieldSelector') ?? '',
    shardSelector: query.get('shardSelector') ?? '',
    limit: Math.max(limit, 0),
    continue: query.get('continue') ?? '',
    resourceVersion: query.get('resourceVersion') ?? '',
    resourceVersionMatch: query.get('resourceVersionMatch') ?? '',
    allowWatchBookmarks: queryBool(query, 'allowWatchBookmarks') ?? false,
    sendInitialEvents: queryBool(query, 'sendInitialEvents'),
    timeoutSeconds,
  };
  const causes = parsed.watch ? watchCauses(parsed) : listCauses(parsed);
  if (causes.length > 0) throw invalidOptions('ListOptions', causes);
  return parsed;
}

function listCauses(q: ListQuery): StatusCause[] {
  const causes: StatusCause[] = [];
  const match = q.resourceVersionMatch;
  if (match !== '') {
    if (q.resourceVersion === '') {
      causes.push(
        cause.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    }
    if (q.continue !== '') {
      causes.push(
        cause.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden when continue is provided',
        ),
      );
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      causes.push(cause.unsupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    }
    if (match === 'Exact' && q.resourceVersion === '0') {
      causes.push(
        cause.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      );
    }
  }
  if (q.sendInitialEvents !== undefined) {
    causes.push(cause.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  return causes;
}

function watchCauses(q: ListQuery): StatusCause[] {
  const causes: StatusCause[] = [];
  const match = q.resourceVersionMatch;
  if (q.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    causes.push(
      cause.forbidden(
        'resourceVersionMatch',
        'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      ),
    );
  }
  if (match !== '') {
    if (q.sendInitialEvents === undefined) {
      causes.push(
        cause.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    }
    if (match !== 'NotOlderThan')
      causes.push(cause.unsupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (q.continue !== '') {
      causes.push(
        cause.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden when continue is provided',
        ),
      );
    }
  }
  return causes;
}

/** How unknown fields in a request body are handled (`fieldValidation`). */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** The write parameters of a POST, PUT or PATCH. */
export interface WriteQuery {
  readonly dryRun: boolean;
  /** The field manager (default: the User-Agent up to its first `/`). */
  readonly fieldManager: string;
  /** Whether the client set `fieldManager` itself. */
  readonly explicitManager: boolean;
  readonly fieldValidation: FieldValidation;
  readonly force: boolean | undefined;
  /** An apply patch (its managed fields come from server-side apply itself). */
  readonly apply: boolean;
}

/** `dryRun` values: each must be `All`. */
export function dryRunCauses(values: readonly string[]): StatusCause[] {
  return values.filter((v) => v !== 'All').map((v) => cause.unsupported('dryRun', v, ['All']));
}

/** The manager a write without `fieldManager` is recorded under: the User-Agent before `/`. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const prefix = (userAgent ?? '').split('/')[0] ?? '';
  return prefix.slice(0, 128);
}

/**
 * Parses CreateOptions / UpdateOptions / PatchOptions: `dryRun` (only `All`), `fieldManager`
 * (≤ 128 printable characters), `fieldValidation` (Ignore, Warn — the default — or Strict) and
 * `force` (apply patches only). Violations are 422 `<Kind>Options.meta.k8s.io "" is invalid`.
 */
export function parseWriteQuery(
  query: Query,
  kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
  userAgent: string | undefined,
  applyPatch = false,
): WriteQuery {
  const causes = dryRunCauses(query.getAll('dryRun'));
  const manager = query.get('fieldManager');
  if (manager !== null) {
    if (manager.length > 128) {
      causes.push({
        reason: 'FieldValueTooLong',
        message: 'Too long: may not be more than 128 bytes',
        field: 'fieldManager',
      });
    } else if (!/^[\x20-\x7e]*$/.test(manager)) {
      causes.push(cause.invalid('fieldManager', manager, 'must only contain printable characters'));
    }
  }
  const validation = query.get('fieldValidation') ?? '';
  if (!['', 'Ignore', 'Warn', 'Strict'].includes(validation)) {
    causes.push(cause.unsupported('fieldValidation', validation, ['', 'Ignore', 'Strict', 'Warn']));
  }
  const force = queryBool(query, 'force');
  if (force !== undefined && !applyPatch) {
    causes.push(cause.forbidden('force', 'may not be specified for non-apply patch'));
  }
  if (applyPatch && (manager ?? '') === '') {
    causes.push(cause.required('fieldManager', 'is required for apply patch'));
  }
  if (causes.length > 0) throw invalidOptions(kind, causes);
  return {
    dryRun: query.getAll('dryRun').length > 0,
    fieldManager: manager ?? managerFromUserAgent(userAgent),
    explicitManager: manager !== null,
    fieldValidation: validation === '' ? 'Warn' : (validation as FieldValidation),
    force,
    apply: applyPatch,
  };
}
