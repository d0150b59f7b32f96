// What the CEL expressions of admission (webhook matchConditions, policies) are given.
import type { AdmissionAttributes, JsonObject } from './types.ts';

/** JSON as CEL sees unstructured objects: integral numbers are `int`. */
export function celValue(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(celValue);
  if (typeof value === 'object' && value !== null) {
    // fromEntries defines own properties: a `__proto__` key stays a field, not the prototype.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, celValue(v)]));
  }
  return value;
}

/**
 * The `request` variable of CEL expressions (webhook matchConditions and policies): the
 * AdmissionRequest without uid, object and oldObject; `requestKind`/`requestResource` are what the
 * client used when `matchPolicy: Equivalent` converted the object.
 */
export function requestOf(attributes: AdmissionAttributes): JsonObject {
  const { userInfo } = attributes;
  return {
    kind: attributes.kind,
    resource: attributes.resource,
    subResource: attributes.subResource,
    requestKind: attributes.requestKind ?? attributes.kind,
    requestResource: attributes.requestResource ?? attributes.resource,
    requestSubResource: attributes.subResource,
    name: attributes.name,
    namespace: attributes.namespace,
    operation: attributes.operation,
    // kube-apiserver hands CEL the request as unstructured JSON, where UserInfo's fields are
    // omitempty: a user without extras has no `extra` key (`has(request.userInfo.extra)` is false
    // and `'k' in request.userInfo.extra` an error), likewise an empty uid or groups.
    userInfo: {
      username: userInfo.username,
      ...(userInfo.uid === undefined || userInfo.uid === '' ? {} : { uid: userInfo.uid }),
      ...(userInfo.groups === undefined || userInfo.groups.length === 0 ? {} : { groups: userInfo.groups }),
      ...(userInfo.extra === undefined || Object.keys(userInfo.extra).length === 0
        ? {}
        : { extra: userInfo.extra }),
    },
    dryRun: attributes.dryRun,
    options: attributes.options,
  };
}
