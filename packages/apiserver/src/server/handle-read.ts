import {
  BadRequestError,
  type KubeObject,
  type ListOptions,
  PARTIAL_OBJECT_METADATA,
} from '@converge/runtime';
import { encodeProtobufObject } from '../protobuf/index.ts';
import { groupVersion, type JsonObject } from './api-resource.ts';
import type { RequestContext } from './context.ts';
import { cloneJson } from './json-util.ts';
import { streamList } from './list-stream.ts';
import { negotiateObject, type ObjectFormat } from './media.ts';
import { fromStorage, manyToResponse, toResponse } from './object-io.ts';
import { servesProtobuf, writeProtobuf } from './protobuf-io.ts';
import { parseListQuery } from './query.ts';
import { writeValue } from './respond.ts';
import { listSelection } from './selection.ts';

function tableContentType(version: 'v1' | 'v1beta1'): string {
  return `application/json;as=Table;v=${version};g=meta.k8s.io`;
}

function format(ctx: RequestContext): ObjectFormat {
  const tables = ctx.server.extensions.toTable !== undefined;
  return negotiateObject(ctx.req.headers.accept, tables, servesProtobuf(ctx.resource));
}

function partial(object: KubeObject): JsonObject {
  const { kind, apiVersion } = PARTIAL_OBJECT_METADATA;
  return { kind, apiVersion, metadata: object.metadata };
}

/** The `includeObject` parameter of a Table request: None, Metadata (default) or Object; else 400. */
export function includeObject(query: URLSearchParams): 'None' | 'Metadata' | 'Object' {
  const value = query.get('includeObject') ?? '';
  if (value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw new BadRequestError(
    `includeObject: unsupported value ${JSON.stringify(value)}: supported values: "None", "Metadata", "Object"`,
  );
}

/** Metadata of a list or object as a Table carries it. */
interface TableMeta {
  readonly resourceVersion: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

function table(
  ctx: RequestContext,
  objects: readonly JsonObject[],
  meta: TableMeta,
  version: 'v1' | 'v1beta1',
): JsonObject {
  const toTable = ctx.server.extensions.toTable as NonNullable<typeof ctx.server.extensions.toTable>;
  return toTable(ctx.resource, objects, {
    includeObject: includeObject(ctx.query),
    tableVersion: version,
    nowMs: ctx.server.clock.now(),
    ...meta,
  });
}

/** GET of one object, as JSON, YAML, a Table or PartialObjectMetadata by `Accept`. */
export async function handleGet(ctx: RequestContext, name: string): Promise<void> {
  const chosen = format(ctx);
  const { resource } = ctx;
  const stored = await ctx.server.store.get(resource.storage, { namespace: ctx.target.namespace, name });
  const encoding = { pretty: ctx.pretty };
  switch (chosen.format) {
    case 'table':
      writeValue(
        ctx.res,
        200,
        table(
          ctx,
          [await fromStorage(resource, stored)],
          { resourceVersion: stored.metadata.resourceVersion ?? '' },
          chosen.version,
        ),
        { ...encoding, contentType: tableContentType(chosen.version) },
      );
      return;
    case 'partial':
      writeValue(ctx.res, 200, partial(stored), encoding);
      return;
    case 'protobuf':
      writeProtobuf(ctx.res, 200, encodeProtobufObject((await toResponse(resource, stored)) as JsonObject));
      return;
    case 'json':
    case 'yaml':
      writeValue(ctx.res, 200, await toResponse(resource, stored), {
        ...encoding,
        yaml: chosen.format === 'yaml',
      });
  }
}

/**
 * The selected items and, unless only metadata is wanted, them as `resource` serves them —
 * converted in one call. Through a conversion webhook, kind-specific field selectors match the
 * converted objects (the requested version's paths), as kube-apiserver's per-version storage does.
 */
async function selectAndConvert(
  ctx: RequestContext,
  stored: readonly KubeObject[],
  extra: ((object: KubeObject) => boolean) | undefined,
  metadataOnly: boolean,
): Promise<{ items: readonly KubeObject[]; served: readonly unknown[] }> {
  const { resource } = ctx;
  if (extra === undefined || resource.converter?.fromStorageMany === undefined) {
    const items = extra === undefined ? stored : stored.filter(extra);
    return { items, served: metadataOnly ? [] : await manyToResponse(resource, items) };
  }
  const all = await manyToResponse(resource, stored);
  const keep = all.map((o) => extra(o as KubeObject));
  return { items: stored.filter((_, i) => keep[i]), served: all.filter((_, i) => keep[i]) };
}

/**
 * LIST: label/field selectors, `limit` + `continue` (one consistent snapshot), resourceVersion and
 * resourceVersionMatch (served by the store's MVCC). JSON lists are streamed item by item; a
 * selector on a kind-specific field is matched here and answered in one page.
 */
export async function handleList(ctx: RequestContext): Promise<void> {
  const query = parseListQuery(ctx.query);
  const chosen = format(ctx);
  const { resource, server } = ctx;
  const selection = listSelection(
    ctx,
    query.labelSelector,
    query.fieldSelector,
    undefined,
    query.shardSelector,
  );
  const options: ListOptions = {
    ...selection.storeOptions,
    ...(selection.extra === undefined && query.limit > 0 ? { limit: query.limit } : {}),
    ...(query.continue === '' ? {} : { continue: query.continue }),
    ...(query.resourceVersion === '' ? {} : { resourceVersion: query.resourceVersion }),
    ...(query.resourceVersionMatch === ''
      ? {}
      : { resourceVersionMatch: query.resourceVersionMatch as 'Exact' | 'NotOlderThan' }),
  };
  const page = await server.store.list(resource.storage, options);
  const { items, served } = await selectAndConvert(
    ctx,
    page.items,
    selection.extra,
    chosen.format === 'partial',
  );
  const metadata: JsonObject = { resourceVersion: page.resourceVersion };
  if (page.continue !== undefined) metadata.continue = page.continue;
  if (page.remainingItemCount !== undefined) metadata.remainingItemCount = page.remainingItemCount;
  // KEP-5866: the applied shard selector, echoed as sent, tells clients the list is one shard
  // (absent: a server that ignored the parameter). Not in protobuf: 1.32's ListMeta has no field.
  if (query.shardSelector !== '') metadata.shardInfo = { selector: query.shardSelector };
  const envelope = { kind: resource.listKind, apiVersion: groupVersion(resource), metadata };
  switch (chosen.format) {
    case 'table':
      writeValue(
        ctx.res,
        200,
        table(
          ctx,
          served.map((o) => cloneJson(o) as JsonObject),
          {
            resourceVersion: page.resourceVersion,
            ...(page.continue === undefined ? {} : { continue: page.continue }),
            ...(page.remainingItemCount === undefined ? {} : { remainingItemCount: page.remainingItemCount }),
          },
          chosen.version,
        ),
        { pretty: ctx.pretty, contentType: tableContentType(chosen.version) },
        ctx.warnings,
      );
      return;
    case 'partial':
      await streamList(
        ctx.res,
        { ...envelope, kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' },
        items,
        (i) => JSON.stringify(partial(i as KubeObject)),
        ctx.warnings,
      );
      return;
    case 'yaml':
      writeValue(ctx.res, 200, { ...envelope, items: served }, { yaml: true }, ctx.warnings);
      return;
    case 'protobuf': {
      const { shardInfo: _, ...listMeta } = metadata;
      const message = { ...envelope, metadata: listMeta, items: served };
      writeProtobuf(ctx.res, 200, encodeProtobufObject(message), ctx.warnings);
      return;
    }
    case 'json':
      if (ctx.pretty) {
        writeValue(ctx.res, 200, { ...envelope, items: served }, { pretty: true }, ctx.warnings);
        return;
      }
      await streamList(ctx.res, envelope, served, (item) => JSON.stringify(item), ctx.warnings);
  }
}
