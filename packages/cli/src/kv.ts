/**
 * `converge kv apply|get|delete`: objects in NATS JetStream KV, through the NATS backend, so what
 * the command writes is what a NATS-backed operator reads (one bucket per type, same keys, same
 * metadata semantics).
 */
import { readFile } from 'node:fs/promises';
import { defaultBucketName, NatsBackend } from '@converge/nats';
import {
  type Condition,
  deepEqual,
  isNotFound,
  type KubeObject,
  type ObjectKey,
  OptionsError,
  type ResourceType,
  typeId,
} from '@converge/runtime';
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { parseAllDocuments, stringify } from 'yaml';
import { KvFileError, UnknownKindError } from './errors.ts';
import type { KvArgs } from './kv-args.ts';
import { qualifiedKind, typeFromArgument, typeFromDocument } from './kv-types.ts';
import { connectNats, natsUrl } from './nats-connection.ts';
import { natsBucketPrefix } from './nats-objects.ts';

export { DEFAULT_NATS_URL } from './nats-connection.ts';

/** Where output goes. */
export interface KvIo {
  readonly out: (line: string) => void;
}

/** An object named in a file or on the command line: its type and key (and the document, from a file). */
interface Target {
  readonly type: ResourceType;
  readonly key: ObjectKey;
  readonly document?: KubeObject;
}

/** Runs `converge kv …`; returns the exit code. Errors are thrown (main prints them). */
export async function runKv(
  args: KvArgs,
  io: KvIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const url = natsUrl(args.nats, env);
  const prefix = args.bucketPrefix ?? natsBucketPrefix(env);
  // Files are read and checked before connecting: a bad file writes nothing.
  const fromFiles = args.files.length > 0 ? await readTargets(args) : undefined;
  const connection: NatsConnection = await connectNats(url, { name: 'converge-kv' });
  let backend: NatsBackend;
  try {
    backend = await NatsBackend.connect({ connection, bucketPrefix: prefix, garbageCollection: false });
  } catch (error) {
    await connection.close();
    throw error;
  }
  try {
    const serve = async (type: ResourceType, create: boolean): Promise<void> => {
      if (!create) {
        const bucket = defaultBucketName(prefix, type);
        if (!(await bucketExists(connection, bucket))) {
          throw new UnknownKindError(
            `${type.plural}${type.group === '' ? '' : `.${type.group}`}`,
            bucket,
            url,
          );
        }
      }
      await backend.registerType(type);
    };
    if (args.verb === 'apply') {
      for (const target of fromFiles ?? []) {
        await serve(target.type, true);
        io.out(`${qualifiedKind(target.type)}/${target.key.name} ${await apply(backend, target)}`);
      }
      return 0;
    }
    // `get TYPE` without names lists; every other form names its objects.
    const listed =
      fromFiles === undefined && args.names.length === 0
        ? typeFromArgument(args.resource ?? '', args)
        : undefined;
    const targets = fromFiles ?? (listed === undefined ? targetsFromArguments(args) : []);
    const types = new Map(targets.map((t) => [typeId(t.type), t.type]));
    if (listed !== undefined) types.set(typeId(listed), listed);
    for (const type of types.values()) await serve(type, false);
    if (args.verb === 'delete') {
      for (const { type, key } of targets) {
        const result = await backend.delete(type, key);
        const what = `${qualifiedKind(type)} "${key.name}"`;
        io.out(
          result.status === 'deleted' ? `${what} deleted` : `${what} deletion started (finalizers pending)`,
        );
      }
      return 0;
    }
    const objects =
      listed === undefined
        ? await Promise.all(targets.map(({ type, key }) => backend.get(type, key)))
        : await list(backend, listed, args);
    print(io, args, objects, targets.length === 1);
    return 0;
  } finally {
    await backend.close();
    await connection.close();
  }
}

async function bucketExists(connection: NatsConnection, bucket: string): Promise<boolean> {
  try {
    await (await jetstreamManager(connection)).streams.info(`KV_${bucket}`);
    return true;
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return false;
    throw error;
  }
}

/** Creates the document's object, or updates it to the document (status and server fields kept). */
async function apply(backend: NatsBackend, { type, key, document }: Target): Promise<string> {
  const wanted = document as KubeObject;
  let current: KubeObject;
  try {
    current = await backend.get(type, key);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    // Fields the server sets (a file saved with `kv get -o yaml` has them) are not sent on create.
    const {
      resourceVersion: _v,
      uid: _u,
      creationTimestamp: _c,
      generation: _g,
      ...metadata
    } = wanted.metadata;
    await backend.create(type, { ...wanted, metadata });
    return 'created';
  }
  const { status: _ignored, ...fields } = wanted as KubeObject & { status?: unknown };
  const metadata = { ...current.metadata, ...wanted.metadata, namespace: current.metadata.namespace };
  const next = { ...fields, metadata, status: (current as { status?: unknown }).status } as KubeObject;
  const strip = ({ status: _s, ...rest }: KubeObject & { status?: unknown }) => rest;
  if (deepEqual(strip(next), strip(current))) return 'unchanged';
  await backend.update(type, next);
  return 'configured';
}

/** Every object of every file, checked: an object with apiVersion, kind and metadata.name. */
async function readTargets(args: KvArgs): Promise<Target[]> {
  const targets: Target[] = [];
  for (const file of args.files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new KvFileError(file, `cannot read it (${(error as Error).message})`, { cause: error });
    }
    parseAllDocuments(text).forEach((doc, i) => {
      const where = `document ${i + 1}`;
      const problem = doc.errors[0];
      if (problem !== undefined)
        throw new KvFileError(file, `${where} is not YAML or JSON: ${problem.message}`);
      const value: unknown = doc.toJS();
      if (value === null || value === undefined) return; // an empty document
      const items =
        (value as { kind?: unknown }).kind === 'List' ? (value as { items?: unknown }).items : [value];
      if (!Array.isArray(items)) throw new KvFileError(file, `${where}: a List without items`);
      for (const item of items) targets.push(target(file, where, item, args));
    });
  }
  if (targets.length === 0) throw new KvFileError(args.files.join(', '), 'no objects in the file');
  return targets;
}

function target(file: string, where: string, value: unknown, args: KvArgs): Target {
  const object = value as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata?: { name?: unknown; namespace?: unknown };
  };
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    throw new KvFileError(file, `${where} is not an object`);
  }
  const { apiVersion, kind, metadata } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof metadata?.name !== 'string') {
    throw new KvFileError(file, `${where} needs apiVersion, kind and metadata.name`);
  }
  let type: ResourceType;
  try {
    type = typeFromDocument(apiVersion, kind, args);
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error;
    throw new KvFileError(file, `${where} (${kind}): ${error.message}`, { cause: error });
  }
  const inFile = typeof metadata.namespace === 'string' ? metadata.namespace : undefined;
  if (inFile !== undefined && args.namespace !== undefined && inFile !== args.namespace) {
    throw new KvFileError(file, `${where}: namespace ${inFile} does not match --namespace ${args.namespace}`);
  }
  if (!type.namespaced && inFile !== undefined) {
    throw new KvFileError(file, `${where}: a cluster-scoped object has no namespace`);
  }
  const namespace = type.namespaced ? (inFile ?? args.namespace ?? 'default') : '';
  const document = { ...object, metadata: { ...metadata, ...(type.namespaced ? { namespace } : {}) } };
  return { type, key: { namespace, name: metadata.name }, document: document as KubeObject };
}

function targetsFromArguments(args: KvArgs): Target[] {
  const type = typeFromArgument(args.resource ?? '', args);
  const namespace = type.namespaced ? (args.namespace ?? 'default') : '';
  return args.names.map((name) => ({ type, key: { namespace, name } }));
}

async function list(backend: NatsBackend, type: ResourceType, args: KvArgs): Promise<KubeObject[]> {
  const namespace = type.namespaced && !args.allNamespaces ? (args.namespace ?? 'default') : undefined;
  return [...(await backend.list(type, namespace === undefined ? {} : { namespace })).items];
}

function print(io: KvIo, args: KvArgs, objects: readonly KubeObject[], single: boolean): void {
  const wrapped = single ? objects[0] : { apiVersion: 'v1', kind: 'List', items: objects };
  if (args.output === 'json') io.out(JSON.stringify(wrapped, null, 2));
  else if (args.output === 'yaml') io.out(stringify(wrapped).trimEnd());
  else if (args.output === 'name') {
    for (const o of objects) io.out(`${(o.kind ?? '').toLowerCase()}/${o.metadata.name}`);
  } else if (objects.length === 0) io.out('No resources found.');
  else table(io, args.allNamespaces, objects);
}

/** NAME, READY (the Ready condition's status) and AGE, as kubectl prints custom resources. */
function table(io: KvIo, allNamespaces: boolean, objects: readonly KubeObject[]): void {
  const rows = objects.map((o) => [
    ...(allNamespaces ? [o.metadata.namespace ?? ''] : []),
    o.metadata.name ?? '',
    readiness(o),
    age(o.metadata.creationTimestamp),
  ]);
  const header = [...(allNamespaces ? ['NAMESPACE'] : []), 'NAME', 'READY', 'AGE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows]) {
    io.out(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + 3))).join(''));
  }
}

/** The status of the Ready condition, or `-`. */
function readiness(object: KubeObject): string {
  const conditions = (object as { status?: { conditions?: readonly Condition[] } }).status?.conditions;
  return conditions?.find((c) => c.type === 'Ready')?.status ?? '-';
}

/** `42s`, `5m`, `3h`, `2d`, as kubectl shows ages. */
function age(timestamp: string | undefined): string {
  if (timestamp === undefined) return '<unknown>';
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(timestamp)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
