import { ProtoBuffer } from '../protobuf/index.ts';

type Json = unknown;

/** A vendor extension (`x-…`) as gnostic's NamedAny { name = 1; value = 2 Any { yaml = 2 } }; JSON is YAML. */
function vendorExtension(out: ProtoBuffer, field: number, name: string, value: Json): void {
  const any = new ProtoBuffer();
  any.string(2, JSON.stringify(value));
  const named = new ProtoBuffer();
  named.string(1, name);
  named.message(2, any);
  out.message(field, named);
}

/** gnostic's openapi.v2.Schema of a JSON schema (the fields kube-openapi's proto models read). */
function schema(source: Record<string, Json>): ProtoBuffer {
  const out = new ProtoBuffer();
  if (typeof source.$ref === 'string') out.string(1, source.$ref);
  if (typeof source.format === 'string') out.string(2, source.format);
  if (Array.isArray(source.required))
    for (const r of source.required) if (typeof r === 'string') out.string(19, r);
  const additional = source.additionalProperties;
  if (additional !== undefined) {
    const item = new ProtoBuffer();
    if (typeof additional === 'boolean') {
      item.tag(2, 0);
      item.byte(additional ? 1 : 0);
    } else if (additional !== null && typeof additional === 'object') {
      item.message(1, schema(additional as Record<string, Json>));
    }
    out.message(21, item);
  }
  if (typeof source.type === 'string') {
    const type = new ProtoBuffer();
    type.string(1, source.type);
    out.message(22, type);
  }
  if (source.items !== null && typeof source.items === 'object' && !Array.isArray(source.items)) {
    const items = new ProtoBuffer();
    items.message(1, schema(source.items as Record<string, Json>));
    out.message(23, items);
  }
  if (source.properties !== null && typeof source.properties === 'object') {
    const properties = new ProtoBuffer();
    for (const [name, value] of Object.entries(source.properties as Record<string, Json>)) {
      const named = new ProtoBuffer();
      named.string(1, name);
      named.message(2, schema(value as Record<string, Json>));
      properties.message(1, named);
    }
    out.message(25, properties);
  }
  for (const [key, value] of Object.entries(source)) {
    if (key.startsWith('x-')) vendorExtension(out, 31, key, value);
  }
  return out;
}

/**
 * The `/openapi/v2` document in gnostic's protobuf form (`openapi.v2.Document`: swagger = 1,
 * info = 2, paths = 8, definitions = 9), what kubectl asks for with
 * `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`.
 */
export function openApiV2Protobuf(document: Record<string, Json>): Uint8Array {
  const out = new ProtoBuffer();
  out.string(1, typeof document.swagger === 'string' ? document.swagger : '2.0');
  const info = new ProtoBuffer();
  const source = (document.info ?? {}) as Record<string, Json>;
  info.string(1, typeof source.title === 'string' ? source.title : 'Kubernetes');
  info.string(2, typeof source.version === 'string' ? source.version : '');
  out.message(2, info);
  out.message(8, new ProtoBuffer());
  const definitions = new ProtoBuffer();
  for (const [name, value] of Object.entries((document.definitions ?? {}) as Record<string, Json>)) {
    const named = new ProtoBuffer();
    named.string(1, name);
    named.message(2, schema(value as Record<string, Json>));
    definitions.message(1, named);
  }
  out.message(9, definitions);
  return out.view().slice();
}
