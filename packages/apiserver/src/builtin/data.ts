import { DEFINITIONS_JSON } from './definitions.ts';
import { PROTOBUF_JSON } from './protobuf.ts';

/** One schema of the generated definitions (an OpenAPI v2 schema without descriptions). */
export interface DefinitionSchema {
  readonly type?: string;
  readonly format?: string;
  readonly $ref?: string;
  readonly items?: DefinitionSchema;
  readonly additionalProperties?: DefinitionSchema | boolean;
  readonly properties?: Readonly<Record<string, DefinitionSchema>>;
  readonly required?: readonly string[];
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-group-version-kind'?: readonly {
    group: string;
    version: string;
    kind: string;
  }[];
  readonly [extension: `x-${string}`]: unknown;
}

/** `[jsonName, number, type, label]`: type is a scalar (`string`, `int32`, …) or a message name. */
export type ProtoRow = readonly [
  json: string,
  number: number,
  type: string,
  label: 'optional' | 'repeated' | 'map' | 'inline',
];

interface Definitions {
  readonly definitions: Readonly<Record<string, DefinitionSchema>>;
  readonly kinds: Readonly<Record<string, string>>;
}
interface Protobuf {
  readonly messages: Readonly<Record<string, readonly ProtoRow[]>>;
  readonly kinds: Readonly<Record<string, string>>;
}

let definitions: Definitions | undefined;
let protobuf: Protobuf | undefined;

function loadDefinitions(): Definitions {
  definitions ??= JSON.parse(DEFINITIONS_JSON) as Definitions;
  return definitions;
}

function loadProtobuf(): Protobuf {
  protobuf ??= JSON.parse(PROTOBUF_JSON) as Protobuf;
  return protobuf;
}

function kindKey(group: string, version: string, kind: string): string {
  return group === '' ? `${version}/${kind}` : `${group}/${version}/${kind}`;
}

/** Every generated definition by name (`io.k8s.api.apps.v1.Deployment`). */
export function builtinDefinitions(): Readonly<Record<string, DefinitionSchema>> {
  return loadDefinitions().definitions;
}

/** The definition name of a built-in kind that kube-apiserver 1.32 serves by default, or undefined. */
export function builtinDefinitionName(group: string, version: string, kind: string): string | undefined {
  return loadDefinitions().kinds[kindKey(group, version, kind)];
}

/** The definition name a `$ref` (`#/definitions/…`) points to. */
export function definitionOfRef(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1);
}

/** Every generated protobuf message by name (`k8s.io.api.apps.v1.Deployment`). */
export function protoMessages(): Readonly<Record<string, readonly ProtoRow[]>> {
  return loadProtobuf().messages;
}

/** The protobuf message of a built-in kind (`apps/v1` + `Deployment`), or undefined. */
export function protoMessageOfKind(apiVersion: string, kind: string): string | undefined {
  const key = `${apiVersion}/${kind}`;
  if (key === 'v1/Status') return 'k8s.io.apimachinery.pkg.apis.meta.v1.Status';
  return loadProtobuf().kinds[key];
}
