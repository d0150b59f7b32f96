import type { KubeObject, ResourceType } from '@converge/runtime';
import { ALL_VERBS, type ApiResource, type JsonObject, type ScaleSpec } from './api-resource.ts';
import {
  type ConversionWebhookOptions,
  type ConversionWebhookSpec,
  conversionConverter,
  noneConversion,
  webhookConversion,
} from './conversion-webhook.ts';
import { apiVersionConverter } from './event-conversion.ts';
import { asObject } from './json-util.ts';

/** What a CustomResourceDefinition serves. */
export interface CrdServing {
  /** The store type holding its objects (the storage version). */
  readonly storeType: ResourceType;
  /** One REST resource per served version. */
  readonly resources: readonly ApiResource[];
  /** The names with defaults, for `status.acceptedNames`. */
  readonly names: JsonObject;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function scaleOf(subresources: JsonObject | undefined): ScaleSpec | undefined {
  const scale = asObject(subresources?.scale);
  if (scale === undefined) return undefined;
  const spec = typeof scale.specReplicasPath === 'string' ? scale.specReplicasPath : '.spec.replicas';
  const status = typeof scale.statusReplicasPath === 'string' ? scale.statusReplicasPath : '.status.replicas';
  return {
    specReplicasPath: spec,
    statusReplicasPath: status,
    ...(typeof scale.labelSelectorPath === 'string' ? { labelSelectorPath: scale.labelSelectorPath } : {}),
  };
}

/**
 * The types a CRD serves: its storage version becomes a store type (status subresource as that
 * version declares it, generation tracked, updates need a resourceVersion as for every custom
 * resource), and each served version a REST resource over it (other versions rewrite `apiVersion`
 * with conversion strategy None, or convert through the CRD's conversion webhook with strategy
 * Webhook, called as `webhooks` says). `keepStorageVersion` keeps an earlier storage version so
 * existing objects stay reachable. Returns undefined for a CRD too malformed to serve.
 */
export function crdServing(
  crd: KubeObject,
  keepStorageVersion?: string,
  webhooks?: ConversionWebhookOptions,
): CrdServing | undefined {
  const spec = asObject((crd as unknown as JsonObject).spec);
  const names = asObject(spec?.names);
  const group = spec?.group;
  const kind = names?.kind;
  const plural = names?.plural;
  if (typeof group !== 'string' || typeof kind !== 'string' || typeof plural !== 'string') return undefined;
  const versions = (Array.isArray(spec?.versions) ? spec.versions : []).map((v) => asObject(v) ?? {});
  const storage =
    versions.find((v) => v.name === keepStorageVersion) ??
    versions.find((v) => v.storage === true) ??
    versions[0];
  if (storage === undefined || typeof storage.name !== 'string') return undefined;
  const singular =
    typeof names?.singular === 'string' && names.singular !== '' ? names.singular : kind.toLowerCase();
  const listKind =
    typeof names?.listKind === 'string' && names.listKind !== '' ? names.listKind : `${kind}List`;
  const shortNames = strings(names?.shortNames);
  const categories = strings(names?.categories);
  const namespaced = spec?.scope !== 'Cluster';
  const storageVersion = storage.name;
  const storeType: ResourceType = {
    group,
    version: storageVersion,
    kind,
    plural,
    namespaced,
    singular,
    shortNames,
    statusSubresource: asObject(asObject(storage.subresources)?.status) !== undefined,
    generation: true,
    requireResourceVersionOnUpdate: true,
  };
  const conversionSpec = asObject(spec?.conversion);
  const conversion =
    conversionSpec?.strategy === 'Webhook'
      ? webhookConversion(
          crd.metadata.name ?? '',
          (asObject(conversionSpec.webhook) ?? {}) as ConversionWebhookSpec,
          webhooks,
        )
      : undefined;
  const prune = webhooks?.prune;
  const pruneConverted =
    prune === undefined
      ? undefined
      : (apiVersion: string, object: JsonObject): void => {
          prune(crd, apiVersion.slice(group.length + 1), object);
        };
  const resources: ApiResource[] = [];
  for (const version of versions) {
    if (version.served !== true || typeof version.name !== 'string') continue;
    const subresources = asObject(version.subresources);
    const scale = scaleOf(subresources);
    const selectable = (Array.isArray(version.selectableFields) ? version.selectableFields : [])
      .map((f) => asObject(f)?.jsonPath)
      .filter((p): p is string => typeof p === 'string')
      .map((p) => p.replace(/^\./, ''));
    resources.push({
      group,
      version: version.name,
      kind,
      plural,
      singular,
      listKind,
      namespaced,
      shortNames,
      categories,
      verbs: ALL_VERBS,
      storage: storeType,
      ...(version.name === storageVersion
        ? {}
        : {
            converter:
              conversion === undefined
                ? apiVersionConverter(`${group}/${version.name}`, `${group}/${storageVersion}`)
                : conversionConverter(
                    conversion,
                    `${group}/${version.name}`,
                    `${group}/${storageVersion}`,
                    listKind,
                    pruneConverted,
                  ),
          }),
      conversion: conversion ?? noneConversion,
      statusSubresource: asObject(subresources?.status) !== undefined,
      ...(scale === undefined ? {} : { scale }),
      strategy: {},
      selectableFields: selectable,
      crd,
      strategicMergePatch: false,
    });
  }
  const accepted: JsonObject = { plural, singular, kind, listKind };
  if (shortNames.length > 0) accepted.shortNames = shortNames;
  if (categories.length > 0) accepted.categories = categories;
  return { storeType, resources, names: accepted };
}
