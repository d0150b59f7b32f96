/**
 * The status kube-apiserver's CRD controllers write: accepted names (naming controller), the
 * `NamesAccepted` and `Established` conditions (naming and establishing controllers, folded into
 * one step here), and `Terminating` while a CRD's objects are deleted.
 */
import type { Condition } from '@converge/runtime';
import { withoutNulls } from './crd-defaults.ts';
import { checkedCrd, crdInfo } from './crd-info.ts';
import { assertDecodableCrd } from './decode.ts';
import type {
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionStatus,
} from './types.ts';

/** Resource names (plural, singular, short names) and kinds (kind, listKind) already accepted in a group. */
export interface TakenNames {
  readonly resources: ReadonlySet<string>;
  readonly kinds: ReadonlySet<string>;
}

/**
 * The names accepted by the CRDs of `group` (kube's naming controller counts every CRD of the group,
 * the one being checked included; its own accepted names never conflict with themselves).
 *
 * @example
 * const taken = takenNames(allCrds, crd.spec.group);
 * crd.status = crdStatus(crd, now, taken);
 */
export function takenNames(crds: Iterable<CustomResourceDefinition>, group: string): TakenNames {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const raw of crds) {
    try {
      assertDecodableCrd(raw);
    } catch {
      continue;
    }
    const crd = withoutNulls(raw) as Partial<CustomResourceDefinition>;
    if (crd.spec?.group !== group) continue;
    const accepted = crd.status?.acceptedNames;
    if (accepted === undefined) continue;
    for (const n of [accepted.plural, accepted.singular, ...(accepted.shortNames ?? [])])
      if (typeof n === 'string') resources.add(n);
    for (const n of [accepted.kind, accepted.listKind]) if (typeof n === 'string') kinds.add(n);
  }
  return { resources, kinds };
}

const NO_NAMES: TakenNames = { resources: new Set(), kinds: new Set() };

interface Naming {
  readonly accepted: CustomResourceDefinitionNames;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

function conflict(
  requested: string,
  accepted: string | undefined,
  used: ReadonlySet<string>,
): string | undefined {
  if (requested === accepted || !used.has(requested)) return undefined;
  return `"${requested}" is already in use`;
}

function naming(raw: CustomResourceDefinition, taken: TakenNames): Naming {
  const info = crdInfo(raw);
  const crd = withoutNulls(raw) as CustomResourceDefinition;
  const requested = info.names;
  const accepted = crd.status?.acceptedNames;
  const next: { -readonly [K in keyof CustomResourceDefinitionNames]: CustomResourceDefinitionNames[K] } = {
    plural: accepted?.plural ?? '',
    kind: accepted?.kind ?? '',
    ...(accepted?.singular === undefined ? {} : { singular: accepted.singular }),
    ...(accepted?.listKind === undefined ? {} : { listKind: accepted.listKind }),
    ...(accepted?.shortNames === undefined ? {} : { shortNames: accepted.shortNames }),
  };
  let failure: { reason: string; message: string } | undefined;
  const check = (reason: string, message: string | undefined, accept: () => void): void => {
    if (message === undefined) accept();
    else failure = { reason, message };
  };
  check('PluralConflict', conflict(requested.plural, accepted?.plural, taken.resources), () => {
    next.plural = requested.plural;
  });
  check('SingularConflict', conflict(requested.singular, accepted?.singular, taken.resources), () => {
    next.singular = requested.singular;
  });
  const acceptedShort = accepted?.shortNames ?? [];
  if (requested.shortNames.join('\0') !== acceptedShort.join('\0') || accepted?.shortNames === undefined) {
    const errors = requested.shortNames
      .filter((s) => !acceptedShort.includes(s))
      .map((s) => conflict(s, '', taken.resources))
      .filter((m): m is string => m !== undefined);
    const message =
      errors.length === 0 ? undefined : errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
    check('ShortNamesConflict', message, () => {
      if (requested.shortNames.length > 0) next.shortNames = requested.shortNames;
    });
  }
  check('KindConflict', conflict(requested.kind, accepted?.kind, taken.kinds), () => {
    next.kind = requested.kind;
  });
  check('ListKindConflict', conflict(requested.listKind, accepted?.listKind, taken.kinds), () => {
    next.listKind = requested.listKind;
  });
  if (requested.categories.length > 0) next.categories = requested.categories;
  if (failure !== undefined) return { accepted: next, status: 'False', ...failure };
  return { accepted: next, status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
}

/** apiextensions' `SetCRDCondition`: replace in place, keep the transition time unless status changed. */
function setCondition(
  conditions: Condition[],
  next: Omit<Condition, 'lastTransitionTime'>,
  now: string,
): void {
  const i = conditions.findIndex((c) => c.type === next.type);
  const existing = i >= 0 ? conditions[i] : undefined;
  const lastTransitionTime =
    existing !== undefined && existing.status === next.status && existing.lastTransitionTime !== ''
      ? existing.lastTransitionTime
      : now;
  const condition: Condition = {
    type: next.type,
    status: next.status,
    lastTransitionTime,
    reason: next.reason,
    message: next.message,
  };
  if (i >= 0) conditions[i] = condition;
  else conditions.push(condition);
}

/**
 * The conditions after kube's naming and establishing controllers ran: `NamesAccepted` True
 * (`NoConflicts`, "no conflicts found") and `Established` True (`InitialNamesAccepted`, "the initial
 * names have been accepted"); with a name already `taken` in the group, `NamesAccepted` False
 * (`PluralConflict`, `"widgets" is already in use`, …) and `Established` False (`NotAccepted`,
 * "not all names are accepted") unless it was established before. Other conditions are kept;
 * `lastTransitionTime` changes only with the status. `nowIso` is an RFC 3339 time.
 *
 * @example
 * establishedConditions(crd, '2026-01-01T00:00:00Z').map((c) => `${c.type}=${c.status}`);
 * // ['NamesAccepted=True', 'Established=True']
 */
export function establishedConditions(
  crd: CustomResourceDefinition,
  nowIso: string,
  taken: TakenNames = NO_NAMES,
): Condition[] {
  checkedCrd(crd);
  const result = naming(crd, taken);
  const conditions = [...((withoutNulls(crd) as CustomResourceDefinition).status?.conditions ?? [])];
  setCondition(
    conditions,
    { type: 'NamesAccepted', status: result.status, reason: result.reason, message: result.message },
    nowIso,
  );
  const established = conditions.find((c) => c.type === 'Established');
  if (result.status === 'True') {
    if (established?.status !== 'True') {
      setCondition(
        conditions,
        {
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        },
        nowIso,
      );
    }
  } else if (established === undefined) {
    setCondition(
      conditions,
      { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' },
      nowIso,
    );
  }
  return conditions;
}

/**
 * The whole status to write after a create or update: accepted names, conditions (see
 * {@link establishedConditions}) and stored versions (the storage version appended once).
 */
export function crdStatus(
  crd: CustomResourceDefinition,
  nowIso: string,
  taken: TakenNames = NO_NAMES,
): CustomResourceDefinitionStatus {
  const info = crdInfo(crd);
  const stored = [...((withoutNulls(crd) as CustomResourceDefinition).status?.storedVersions ?? [])];
  if (info.storageVersion !== undefined && !stored.includes(info.storageVersion))
    stored.push(info.storageVersion);
  return {
    acceptedNames: naming(crd, taken).accepted,
    conditions: establishedConditions(crd, nowIso, taken),
    storedVersions: stored,
  };
}

/** The conditions while a CRD's objects are being deleted (`Terminating` True, `InstanceDeletionInProgress`). */
export function terminatingConditions(crd: CustomResourceDefinition, nowIso: string): Condition[] {
  const conditions = [...((withoutNulls(crd) as CustomResourceDefinition).status?.conditions ?? [])];
  setCondition(
    conditions,
    {
      type: 'Terminating',
      status: 'True',
      reason: 'InstanceDeletionInProgress',
      message: 'CustomResource deletion is in progress',
    },
    nowIso,
  );
  return conditions;
}
