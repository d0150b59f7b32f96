import type { KubeObject, StatusCause } from '@converge/runtime';
import type { JsonObject, MutableObject, Strategy } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { goJsonObjectError } from './go-json-error.ts';
import { asObject, ensureObject, setDefault } from './json-util.ts';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** What kube-apiserver shows instead of a Secret value in an Invalid field error. */
const REDACTED = '<secret contents redacted>';

/** kube-apiserver's `MaxSecretSize`: ConfigMap data + binaryData, and Secret data, at most 1 MiB. */
export const MAX_DATA_BYTES = 1024 * 1024;

/** apimachinery's `IsConfigMapKey`: the reasons `key` is no valid ConfigMap/Secret key. */
export function configKeyErrors(key: string): string[] {
  const errors: string[] = [];
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: keys of up to 84 units need no count.
  if (key.length > 84 && Buffer.byteLength(key, 'utf8') > 253)
    errors.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key)) {
    errors.push(
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    );
  }
  if (key === '.') errors.push("must not be '.'");
  else if (key === '..') errors.push("must not be '..'");
  else if (key.startsWith('..')) errors.push("must not start with '..'");
  return errors;
}

/** Invalid causes at `<field>[<key>]` for each bad key of `map`. */
function keyCauses(field: string, map: unknown): StatusCause[] {
  return Object.keys(asObject(map) ?? {}).flatMap((key) =>
    configKeyErrors(key).map((message) => cause.invalid(`${field}[${key}]`, key, message)),
  );
}

/** Bytes a base64 string decodes to (without decoding it). */
function base64Bytes(value: string): number {
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  return Math.floor((value.length * 3) / 4) - padding;
}

/**
 * The data size check of `ValidateConfigMap` / `ValidateSecret`: values' bytes (base64 values as
 * decoded) summed; over 1 MiB is FieldValueTooLong at `field` ("" — the whole object — for
 * ConfigMaps, `data` for Secrets, as upstream).
 */
function dataSizeCauses(field: string, maps: readonly [unknown, 'utf8' | 'base64'][]): StatusCause[] {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: the bytes are counted (a native call per
  // value) only when that bound is over the limit.
  if (dataBytes(maps, (value) => value.length * 3) <= MAX_DATA_BYTES) return [];
  const total = dataBytes(maps, (value) => Buffer.byteLength(value, 'utf8'));
  return total > MAX_DATA_BYTES ? [cause.tooLong(field, MAX_DATA_BYTES)] : [];
}

/** The bytes of the maps' string values: base64 ones as decoded, others as `utf8Bytes` counts them. */
function dataBytes(
  maps: readonly [unknown, 'utf8' | 'base64'][],
  utf8Bytes: (value: string) => number,
): number {
  let total = 0;
  for (const [map, encoding] of maps) {
    for (const value of Object.values(asObject(map) ?? {})) {
      if (typeof value !== 'string') continue;
      total += encoding === 'base64' ? base64Bytes(value) : utf8Bytes(value);
    }
  }
  return total;
}

/** ConfigMap and Secret: once `immutable` is true, data and immutable may not change. */
function immutableCauses(object: JsonObject, old: KubeObject, fields: readonly string[]): StatusCause[] {
  const previous = old as unknown as JsonObject;
  if (previous.immutable !== true) return [];
  const causes: StatusCause[] = [];
  if (object.immutable !== true) {
    causes.push(cause.forbidden('immutable', 'field is immutable when `immutable` is set'));
  }
  for (const field of fields) {
    if (JSON.stringify(object[field] ?? null) !== JSON.stringify(previous[field] ?? null)) {
      causes.push(cause.forbidden(field, 'field is immutable when `immutable` is set'));
    }
  }
  return causes;
}

/**
 * `ValidateConfigMap`: keys of `data` (each also refused when `binaryData` has it) and of
 * `binaryData`, then the 1 MiB total.
 */
function configMapCauses(object: JsonObject): StatusCause[] {
  const binary = asObject(object.binaryData) ?? {};
  const causes: StatusCause[] = [];
  for (const key of Object.keys(asObject(object.data) ?? {})) {
    for (const message of configKeyErrors(key)) causes.push(cause.invalid(`data[${key}]`, key, message));
    if (Object.hasOwn(binary, key)) {
      causes.push(cause.invalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    }
  }
  causes.push(...keyCauses('binaryData', binary));
  causes.push(
    ...dataSizeCauses('', [
      [object.data, 'utf8'],
      [object.binaryData, 'base64'],
    ]),
  );
  return causes;
}

/** ConfigMap: valid data keys; immutable ConfigMaps. */
export const configMapStrategy: Strategy = {
  prepareForCreate(object) {
    return configMapCauses(object);
  },
  prepareForUpdate(object, old) {
    return [...immutableCauses(object, old, ['data', 'binaryData']), ...configMapCauses(object)];
  },
};

/** The decoded value of `data[key]`, or undefined when absent (or not base64). */
function secretValue(data: JsonObject, key: string): Buffer | undefined {
  const value = data[key];
  return typeof value === 'string' && BASE64.test(value) ? Buffer.from(value, 'base64') : undefined;
}

/** The `dockercfg` check: the key is required and must hold a JSON object (or null). */
function dockerConfigCauses(data: JsonObject, key: string): StatusCause[] {
  if (!Object.hasOwn(data, key)) return [cause.required(`data[${key}]`)];
  const bytes = secretValue(data, key);
  if (bytes === undefined) return [];
  const error = goJsonObjectError(bytes.toString('utf8'));
  return error === undefined ? [] : [cause.invalid(`data[${key}]`, REDACTED, error)];
}

/** The per-type checks of `ValidateSecret` (kubernetes.io/tls, dockerconfigjson, …). */
function secretTypeCauses(object: JsonObject): StatusCause[] {
  const data = asObject(object.data) ?? {};
  const has = (key: string): boolean => Object.hasOwn(data, key);
  switch (object.type) {
    case 'kubernetes.io/service-account-token': {
      const name = asObject(asObject(object.metadata)?.annotations)?.['kubernetes.io/service-account.name'];
      return typeof name === 'string' && name !== ''
        ? []
        : [cause.required('metadata.annotations[kubernetes.io/service-account.name]')];
    }
    case 'kubernetes.io/dockercfg':
      return dockerConfigCauses(data, '.dockercfg');
    case 'kubernetes.io/dockerconfigjson':
      return dockerConfigCauses(data, '.dockerconfigjson');
    case 'kubernetes.io/basic-auth':
      // either key may be empty, but one of them must be there
      return has('username') || has('password')
        ? []
        : [cause.required('data[username]'), cause.required('data[password]')];
    case 'kubernetes.io/ssh-auth':
      return (secretValue(data, 'ssh-privatekey')?.length ?? 0) > 0
        ? []
        : [cause.required('data[ssh-privatekey]')];
    case 'kubernetes.io/tls':
      return [
        ...(has('tls.crt') ? [] : [cause.required('data[tls.crt]')]),
        ...(has('tls.key') ? [] : [cause.required('data[tls.key]')]),
      ];
    default:
      return [];
  }
}

/** Merges `stringData` into base64 `data` (never stored) and defaults `type: Opaque`. */
function normalizeSecret(object: MutableObject): void {
  const stringData = asObject(object.stringData);
  if (stringData !== undefined) {
    const data = ensureObject(object, 'data');
    for (const [key, value] of Object.entries(stringData)) {
      if (typeof value === 'string') data[key] = Buffer.from(value, 'utf8').toString('base64');
    }
  }
  delete object.stringData;
  setDefault(object, 'type', 'Opaque');
}

/** `ValidateSecret`: keys and base64 of `data`, its 1 MiB total, then the checks of the type. */
function secretCauses(object: JsonObject): StatusCause[] {
  const causes = keyCauses('data', object.data);
  for (const [key, value] of Object.entries(asObject(object.data) ?? {})) {
    if (typeof value !== 'string' || !BASE64.test(value)) {
      causes.push(cause.invalid(`data[${key}]`, REDACTED, 'must be base64 encoded'));
    }
  }
  causes.push(...dataSizeCauses('data', [[object.data, 'base64']]));
  causes.push(...secretTypeCauses(object));
  return causes;
}

/** Secret: stringData, default type, type checks, immutable secrets, immutable type. */
export const secretStrategy: Strategy = {
  prepareForCreate(object) {
    normalizeSecret(object);
    return secretCauses(object);
  },
  prepareForUpdate(object, old) {
    normalizeSecret(object);
    const previous = old as unknown as JsonObject;
    const causes: StatusCause[] = [];
    if (object.type !== previous.type) causes.push(cause.invalid('type', object.type, 'field is immutable'));
    causes.push(...immutableCauses(object, old, ['data']), ...secretCauses(object));
    return causes;
  },
};
