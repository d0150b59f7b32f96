import type { ResourceType } from '@converge/runtime';
import { ALL_VERBS, type ApiResource } from './api-resource.ts';
import { BUILTIN_SPECS, type BuiltinSpec, WORKLOAD_SCALE } from './builtin-specs.ts';
import { coreEventConverter, eventsV1Converter } from './event-conversion.ts';
import { EVENTS_V1_SELECTABLE_FIELDS, eventsV1FieldValue, eventsV1Strategy } from './events-v1.ts';
import { hpaV1Converter } from './hpa-conversion.ts';
import { POD_SUBRESOURCES_DISCOVERY, SERVICE_ACCOUNT_SUBRESOURCES_DISCOVERY } from './pod-subresources.ts';
import { hpaV1Strategy } from './strategies-apps.ts';

function storeTypeOf(spec: BuiltinSpec): ResourceType {
  return {
    group: spec.group,
    version: spec.version,
    kind: spec.kind,
    plural: spec.plural,
    namespaced: spec.namespaced,
    singular: spec.kind.toLowerCase(),
    ...(spec.shortNames === undefined ? {} : { shortNames: spec.shortNames }),
    statusSubresource: spec.status === 'native',
    generation: spec.generation,
    requireResourceVersionOnUpdate: false,
  };
}

function resourceOf(spec: BuiltinSpec, storage: ResourceType): ApiResource {
  return {
    group: spec.group,
    version: spec.version,
    kind: spec.kind,
    plural: spec.plural,
    singular: spec.kind.toLowerCase(),
    listKind: `${spec.kind}List`,
    namespaced: spec.namespaced,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    verbs: spec.verbs ?? ALL_VERBS,
    storage,
    statusSubresource: spec.status !== undefined,
    emulateStatus: spec.status === 'emulated',
    ...(spec.scale === true ? { scale: WORKLOAD_SCALE } : spec.scale ? { scale: spec.scale } : {}),
    strategy: spec.strategy,
    selectableFields: spec.selectableFields ?? [],
    ...(spec.fieldValue === undefined ? {} : { fieldValue: spec.fieldValue }),
    topLevelFields: new Set(['apiVersion', 'kind', 'metadata', ...spec.fields.split(' ')]),
    strategicMergePatch: true,
  };
}

/**
 * Pods and ServiceAccounts list the subresources pod-subresources.ts and token-request.ts serve;
 * CertificateSigningRequests their `approval` (dispatch.ts writes it as status).
 */
function withSubresources(resource: ApiResource): ApiResource {
  if (resource.group === 'certificates.k8s.io' && resource.plural === 'certificatesigningrequests')
    return {
      ...resource,
      subresources: [{ name: 'approval', kind: resource.kind, verbs: ['get', 'patch', 'update'] }],
    };
  if (resource.group !== '') return resource;
  if (resource.plural === 'pods') return { ...resource, subresources: POD_SUBRESOURCES_DISCOVERY };
  if (resource.plural === 'serviceaccounts')
    return { ...resource, subresources: SERVICE_ACCOUNT_SUBRESOURCES_DISCOVERY };
  return resource;
}

/** The built-in kinds: the store types to register and the REST resources that serve them. */
export function builtinResources(): { storeTypes: ResourceType[]; resources: ApiResource[] } {
  const storeTypes: ResourceType[] = [];
  const resources: ApiResource[] = [];
  let coreEvent: ResourceType | undefined;
  for (const spec of BUILTIN_SPECS) {
    const storage = storeTypeOf(spec);
    // the create-only review kinds store nothing
    if (spec.verbs === undefined || spec.verbs.includes('get')) storeTypes.push(storage);
    const resource = withSubresources(resourceOf(spec, storage));
    if (spec.group === '' && spec.kind === 'Event') {
      // served with Go's zero values written out (`firstTimestamp: null`, `source: {}`)
      resources.push({ ...resource, converter: coreEventConverter });
      coreEvent = storage;
    } else resources.push(resource);
    if (spec.group === 'autoscaling' && spec.kind === 'HorizontalPodAutoscaler') {
      // autoscaling/v1: a view of the stored autoscaling/v2 objects
      const v1 = resourceOf(
        { ...spec, version: 'v1', strategy: hpaV1Strategy, fields: 'spec status' },
        storage,
      );
      resources.push({ ...v1, converter: hpaV1Converter });
    }
  }
  if (coreEvent !== undefined) {
    resources.push({
      group: 'events.k8s.io',
      version: 'v1',
      kind: 'Event',
      plural: 'events',
      singular: 'event',
      listKind: 'EventList',
      namespaced: true,
      shortNames: ['ev'],
      categories: [],
      verbs: ALL_VERBS,
      storage: coreEvent,
      converter: eventsV1Converter,
      statusSubresource: false,
      strategy: eventsV1Strategy,
      selectableFields: EVENTS_V1_SELECTABLE_FIELDS,
      fieldValue: eventsV1FieldValue,
      topLevelFields: new Set(
        'apiVersion kind metadata eventTime series reportingController reportingInstance action reason regarding related note type deprecatedSource deprecatedFirstTimestamp deprecatedLastTimestamp deprecatedCount'.split(
          ' ',
        ),
      ),
      strategicMergePatch: true,
    });
  }
  return { storeTypes, resources };
}
