import { FieldSet } from './field-set.ts';
import { fromFieldsV1, toFieldsV1 } from './fields-v1.ts';
import { compareStrings, isJsonObject, type JsonObject, ownKeys } from './json.ts';
import { fieldElement } from './path-element.ts';

/**
 * One entry of `metadata.managedFields`: the fields one manager owns through one kind of operation.
 * `time` is absent only on entries a client wrote without one.
 */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: unknown;
  subresource?: string;
}

/** A decoded entry: its identity fields and its set. */
export interface Managed {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly apiVersion: string;
  readonly time: string | undefined;
  readonly subresource: string | undefined;
  readonly set: FieldSet;
}

/** Decoded managed fields by manager identity. */
export type Managers = Map<string, Managed>;

/**
 * The identity of a manager: appliers are one manager whatever apiVersion they apply, updaters are
 * one manager per apiVersion; the subresource is part of both.
 */
export function identityOf(m: Pick<Managed, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  const version = m.operation === 'Update' ? m.apiVersion : '';
  return JSON.stringify([m.manager, m.operation, version, m.subresource ?? '']);
}

/** Decodes `metadata.managedFields`; undefined when it is not a valid list of entries. */
export function decodeManagedFields(value: unknown): Managers | undefined {
  if (value === undefined || value === null) return new Map();
  if (!Array.isArray(value)) return undefined;
  const out: Managers = new Map();
  for (const entry of value) {
    const managed = decodeEntry(entry);
    if (managed === undefined) return undefined;
    out.set(identityOf(managed), managed);
  }
  return out;
}

function optionalString(entry: JsonObject, key: string): string | undefined | null {
  const value = entry[key];
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : null;
}

function decodeEntry(entry: unknown): Managed | undefined {
  if (!isJsonObject(entry)) return undefined;
  const { operation, apiVersion, fieldsType } = entry;
  if (operation !== 'Apply' && operation !== 'Update') return undefined;
  if (typeof apiVersion !== 'string' || apiVersion === '' || fieldsType !== 'FieldsV1') return undefined;
  const manager = optionalString(entry, 'manager');
  const time = optionalString(entry, 'time');
  const subresource = optionalString(entry, 'subresource');
  if (manager === null || time === null || subresource === null) return undefined;
  const set =
    entry.fieldsV1 === undefined || entry.fieldsV1 === null ? new FieldSet() : fromFieldsV1(entry.fieldsV1);
  if (set === undefined) return undefined;
  return { manager: manager ?? '', operation, apiVersion, time, subresource, set };
}

/** True for managedFields a client sent to clear them: `[]` or `[{}]`. */
export function isResetRequest(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  if (value.length === 0) return true;
  return value.length === 1 && isJsonObject(value[0]) && ownKeys(value[0]).length === 0;
}

function seconds(time: string | undefined): number {
  const ms = time === undefined ? Number.NaN : Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** Encodes managers in the apiserver's order: Apply before Update, then by time, manager, apiVersion. */
export function encodeManagedFields(managers: Managers): ManagedFieldsEntry[] {
  const entries = [...managers.values()].filter((m) => !m.set.empty);
  entries.sort(
    (a, b) =>
      compareStrings(a.operation, b.operation) ||
      seconds(a.time) - seconds(b.time) ||
      compareStrings(a.manager, b.manager) ||
      compareStrings(a.apiVersion, b.apiVersion) ||
      compareStrings(a.subresource ?? '', b.subresource ?? ''),
  );
  return entries.map((m) => {
    const entry: ManagedFieldsEntry = {
      manager: m.manager,
      operation: m.operation,
      apiVersion: m.apiVersion,
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(m.set),
    };
    if (m.time !== undefined) entry.time = m.time;
    if (m.subresource !== undefined) entry.subresource = m.subresource;
    return entry;
  });
}

const META = ['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation'];
const STRIPPED = [
  [fieldElement('apiVersion')],
  [fieldElement('kind')],
  [fieldElement('metadata')],
  ...[...META, 'managedFields', 'resourceVersion'].map((name) => [
    fieldElement('metadata'),
    fieldElement(name),
  ]),
].reduce((set, path) => set.insert(path), new FieldSet());

/** A set without the fields no manager ever owns: apiVersion, kind, and server-set metadata. */
export function stripMeta(set: FieldSet): FieldSet {
  return set.difference(STRIPPED);
}

/** Most Update managers an object keeps; older ones merge into `ancient-changes`. */
export const MAX_UPDATE_MANAGERS = 10;

/**
 * Keeps at most {@link MAX_UPDATE_MANAGERS} Update entries by merging the oldest, per apiVersion,
 * into an `ancient-changes` entry, as the apiserver does.
 */
export function capUpdateManagers(managers: Managers): Managers {
  const updaters = [...managers.entries()].filter(([, m]) => m.operation === 'Update');
  if (updaters.length <= MAX_UPDATE_MANAGERS) return managers;
  updaters.sort(([ia, a], [ib, b]) => seconds(a.time) - seconds(b.time) || compareStrings(ia, ib));
  const out: Managers = new Map(managers);
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const [id, m] of updaters) {
    if (length <= MAX_UPDATE_MANAGERS) break;
    const bucket = identityOf({
      manager: 'ancient-changes',
      operation: 'Update',
      apiVersion: m.apiVersion,
      subresource: undefined,
    });
    const first = firstOfVersion.get(m.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(m.apiVersion, id);
      continue;
    }
    let existing = out.get(bucket);
    if (existing === undefined) {
      // The first updater of this version becomes the bucket.
      existing = out.get(first);
      out.delete(first);
    }
    out.delete(id);
    out.set(bucket, {
      manager: 'ancient-changes',
      operation: 'Update',
      apiVersion: m.apiVersion,
      time: m.time,
      subresource: undefined,
      set: (existing?.set ?? new FieldSet()).union(m.set),
    });
    length--;
  }
  return out;
}
