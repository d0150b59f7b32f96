import { isConvergeError, type KubeObject, type ResourceType } from '@converge/runtime';
import type { Store } from '@converge/store';

/** Kinds whose objects are bookkeeping, not state: left out of the differential comparison. */
const BOOKKEEPING = new Set(['coordination.k8s.io/Lease', '/Event', 'events.k8s.io/Event']);

export function isBookkeeping(type: ResourceType): boolean {
  return BOOKKEEPING.has(`${type.group}/${type.kind}`);
}

/** Every object of every type the store serves, by type. */
export async function everything(
  store: Store,
): Promise<{ readonly type: ResourceType; readonly items: readonly KubeObject[] }[]> {
  const all = [];
  for (const type of store.types()) {
    const page = await store.list(type);
    all.push({ type, items: page.items });
  }
  return all;
}

/** Objects being deleted whose finalizers nobody removed. */
export function stuckFinalizers(world: Awaited<ReturnType<typeof everything>>): string[] {
  const stuck: string[] = [];
  for (const { type, items } of world) {
    for (const o of items) {
      const m = o.metadata;
      if (m.deletionTimestamp !== undefined && (m.finalizers?.length ?? 0) > 0)
        stuck.push(
          `${type.kind} ${name(o)} is being deleted and still has finalizers ${JSON.stringify(m.finalizers)}`,
        );
    }
  }
  return stuck;
}

/** Objects whose every owner reference names an object that no longer exists (by uid). */
export function orphans(world: Awaited<ReturnType<typeof everything>>): string[] {
  const uids = new Set<string>();
  for (const { items } of world)
    for (const o of items) if (o.metadata.uid !== undefined) uids.add(o.metadata.uid);
  const found: string[] = [];
  for (const { type, items } of world) {
    for (const o of items) {
      const refs = o.metadata.ownerReferences ?? [];
      if (refs.length === 0 || o.metadata.deletionTimestamp !== undefined) continue;
      if (refs.every((r) => !uids.has(r.uid)))
        found.push(
          `${type.kind} ${name(o)} is owned by ${refs.map((r) => `${r.kind} ${r.name} (uid ${r.uid})`).join(', ')}, which no longer exist${refs.length === 1 ? 's' : ''}`,
        );
    }
  }
  return found;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The state as the differential oracle compares it: per type, the multiset of objects without
 * what differs between two correct runs (uids, resourceVersions, generations, timestamps, field
 * managers, the random suffix of generated names, owner uids, observedGeneration).
 */
export function comparable(world: Awaited<ReturnType<typeof everything>>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { type, items } of world) {
    if (isBookkeeping(type) || items.length === 0) continue;
    const key = `${type.group ? `${type.group}/` : ''}${type.kind}`;
    out.set(key, items.map((o) => JSON.stringify(scrub(normalizeObject(o)))).sort());
  }
  return out;
}

function normalizeObject(o: KubeObject): unknown {
  const m = o.metadata;
  const metadata: Record<string, unknown> = {
    name: m.generateName !== undefined && m.generateName !== '' ? `${m.generateName}*` : m.name,
  };
  if (m.namespace !== undefined) metadata.namespace = m.namespace;
  if (m.labels !== undefined) metadata.labels = m.labels;
  if (m.annotations !== undefined) metadata.annotations = m.annotations;
  if (m.finalizers !== undefined) metadata.finalizers = m.finalizers;
  if (m.deletionTimestamp !== undefined) metadata.deleting = true;
  if (m.ownerReferences !== undefined)
    metadata.ownerReferences = m.ownerReferences.map(({ uid: _uid, ...rest }) => rest);
  const { metadata: _m, ...rest } = o as unknown as Record<string, unknown>;
  return { ...rest, metadata };
}

function scrub(value: unknown): unknown {
  if (typeof value === 'string') return TIMESTAMP.test(value) ? '<time>' : value;
  if (Array.isArray(value)) return value.map(scrub);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      if (k === 'observedGeneration' || k === 'resourceVersion' || k === 'uid') continue;
      out[k] = scrub((value as Record<string, unknown>)[k]);
    }
    return out;
  }
  return value;
}

/** The first difference between two comparable states, in words; undefined when equal. */
export function difference(faulty: Map<string, string[]>, clean: Map<string, string[]>): string | undefined {
  const kinds = [...new Set([...faulty.keys(), ...clean.keys()])].sort();
  for (const kind of kinds) {
    const a = faulty.get(kind) ?? [];
    const b = clean.get(kind) ?? [];
    if (a.length !== b.length) {
      const extra = a.length > b.length ? a.filter((x) => !b.includes(x)) : b.filter((x) => !a.includes(x));
      return `${kind}: ${a.length} object${a.length === 1 ? '' : 's'} with faults, ${b.length} without${extra.length > 0 ? `; ${a.length > b.length ? 'only with faults' : 'only without'}: ${short(extra[0] as string)}` : ''}`;
    }
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i]) {
        const onlyA = a.find((x) => !b.includes(x));
        const onlyB = b.find((x) => !a.includes(x));
        return `${kind}: with faults ${short(onlyA ?? (a[i] as string))}, without ${short(onlyB ?? (b[i] as string))}`;
      }
    }
  }
  return undefined;
}

function short(text: string): string {
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

function name(o: KubeObject): string {
  return `${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

/** An error's one-line description. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = isConvergeError(error) ? ` [${(error as { code: string }).code}]` : '';
    return `${error.name}: ${error.message}${code}`;
  }
  return String(error);
}
