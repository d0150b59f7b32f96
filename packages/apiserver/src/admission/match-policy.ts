/**
 * `matchPolicy` of admission webhooks, as kube-apiserver's `ShouldCallHook`: rules naming the
 * request's own group/version/resource match under both policies; under `Equivalent` (the
 * default) a rule naming another served version of the same resource matches too, and the webhook
 * then sees the request as that version — `kind`/`resource` and the objects converted to it,
 * `requestKind`/`requestResource` what the client used.
 */
import { InternalError } from '@converge/runtime';
import { webhookMatches } from './match.ts';
import type { AdmissionAttributes, JsonObject, Webhook } from './types.ts';

function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** The attributes of `attributes` as seen in another version `version` (objects not yet converted). */
function inVersion(attributes: AdmissionAttributes, version: string, kind: string): AdmissionAttributes {
  const { group, resource } = attributes.resource;
  return {
    ...attributes,
    kind: { group, version, kind },
    resource: { group, version, resource },
    requestKind: attributes.requestKind ?? attributes.kind,
    requestResource: attributes.requestResource ?? attributes.resource,
  };
}

/** How a webhook matched: the request itself, or an equivalent version of its resource. */
export type MatchedVersion = { readonly version: string; readonly kind: string } | 'request';

/**
 * Which version a webhook's rules match: the request's (`'request'`), else under `Equivalent` the
 * first equivalent version they name, else undefined (not called).
 */
export function matchedVersion(
  webhook: Webhook,
  attributes: AdmissionAttributes,
): MatchedVersion | undefined {
  if (webhookMatches(webhook, attributes)) return 'request';
  const equivalents = attributes.equivalents;
  if (webhook.matchPolicy === 'Exact' || equivalents === undefined) return undefined;
  return equivalents.versions.find((v) => webhookMatches(webhook, inVersion(attributes, v.version, v.kind)));
}

function internal(error: unknown): InternalError {
  return new InternalError(`Internal error occurred: ${(error as Error).message}`, { cause: error });
}

/**
 * The attributes a webhook is called with: the request's, or — matched in an equivalent version —
 * that version's kind and resource with `object`/`oldObject` converted to it. A failed conversion
 * is kube's 500 `Internal error occurred: conversion webhook for … failed: …`.
 */
export async function invocationOf(
  attributes: AdmissionAttributes,
  matched: MatchedVersion,
): Promise<AdmissionAttributes> {
  const equivalents = attributes.equivalents;
  if (matched === 'request' || equivalents === undefined) return attributes;
  const candidate = inVersion(attributes, matched.version, matched.kind);
  const apiVersion = apiVersionOf(attributes.resource.group, matched.version);
  const convert = async (object: JsonObject | null): Promise<JsonObject | null> => {
    if (object === null) return null;
    try {
      return (await equivalents.convert([object], apiVersion))[0] ?? null;
    } catch (error) {
      throw internal(error);
    }
  };
  return {
    ...candidate,
    object: await convert(attributes.object),
    oldObject: await convert(attributes.oldObject),
  };
}

/**
 * A mutating webhook's result in the version the request was made in: `patched` (in the
 * invocation's version) converted back when the webhook matched an equivalent version.
 */
export async function backToRequest(
  patched: JsonObject,
  matched: MatchedVersion,
  request: AdmissionAttributes,
): Promise<JsonObject> {
  if (matched === 'request' || request.equivalents === undefined) return patched;
  const apiVersion = apiVersionOf(request.resource.group, request.resource.version);
  try {
    return (await request.equivalents.convert([patched], apiVersion))[0] ?? patched;
  } catch (error) {
    throw internal(error);
  }
}
