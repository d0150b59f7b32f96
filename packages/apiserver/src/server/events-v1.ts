/**
 * `events.k8s.io/v1` Event rules (a view of the stored core/v1 Events): the field selectors its
 * field-label conversion accepts, and `ValidateEventCreate`/`ValidateEventUpdate` as they apply
 * to requests in events.k8s.io/v1 (`pkg/apis/core/validation/events.go`). Field paths in errors are
 * the internal (core) names, as upstream reports them.
 */
import type { KubeObject, StatusCause } from '@converge/runtime';
import type { JsonObject, MutableObject, Strategy } from './api-resource.ts';
import { eventsV1Converter, withEventsV1ZeroValues } from './event-conversion.ts';
import { cause } from './field-causes.ts';
import { asObject, getPath } from './json-util.ts';

/** The field selectors of events.k8s.io/v1 Events besides metadata.name/namespace. */
export const EVENTS_V1_SELECTABLE_FIELDS: readonly string[] = [
  'reason',
  'regarding.apiVersion',
  'regarding.fieldPath',
  'regarding.kind',
  'regarding.name',
  'regarding.namespace',
  'regarding.resourceVersion',
  'regarding.uid',
  'reportingController',
  'source',
  'type',
];

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * Reads an events.k8s.io field label from an Event in either shape (stored core/v1 or served
 * events.k8s.io/v1): `regarding.*` is `involvedObject.*`, `reportingController` is
 * `reportingComponent`, `source` is the source component or else the reporting controller.
 */
export function eventsV1FieldValue(object: KubeObject, path: string): string | undefined {
  const o = object as unknown as JsonObject;
  if (path.startsWith('regarding.')) {
    const key = path.slice('regarding.'.length);
    return text(getPath(o, `regarding.${key}`) ?? getPath(o, `involvedObject.${key}`)) ?? '';
  }
  if (path === 'reportingController') return text(o.reportingController ?? o.reportingComponent) ?? '';
  if (path === 'source') {
    const component = text(getPath(o, 'source.component') ?? getPath(o, 'deprecatedSource.component')) ?? '';
    return component !== '' ? component : (text(o.reportingController ?? o.reportingComponent) ?? '');
  }
  return text(getPath(o, path)) ?? '';
}

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `validation.IsQualifiedName`. */
function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  let name = value;
  const errors: string[] = [];
  if (parts.length === 2) {
    const [prefix, rest] = parts as [string, string];
    name = rest;
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else if (prefix.length > 253) errors.push('prefix part must be no more than 253 bytes');
    else if (!DNS1123_SUBDOMAIN.test(prefix))
      errors.push(
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      );
  } else if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push('name part must be no more than 63 bytes');
  if (!QUALIFIED_NAME.test(name))
    errors.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  return errors;
}

function str(object: JsonObject, key: string): string {
  return typeof object[key] === 'string' ? (object[key] as string) : '';
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** `legacyValidateEvent` (core field names), on an Event in the events.k8s.io/v1 shape. */
function legacy(event: MutableObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const namespace = typeof event.metadata.namespace === 'string' ? event.metadata.namespace : '';
  const involvedNamespace = str(asObject(event.regarding) ?? {}, 'namespace');
  if (!isSet(event.eventTime)) {
    const agrees =
      involvedNamespace === ''
        ? namespace === '' || namespace === 'default'
        : namespace === involvedNamespace;
    if (!agrees)
      causes.push(
        cause.invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace'),
      );
    return causes;
  }
  if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system')
    causes.push(
      cause.invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace'),
    );
  const controller = str(event, 'reportingController');
  if (controller === '') causes.push(cause.required('reportingController'));
  for (const message of qualifiedNameErrors(controller))
    causes.push(cause.invalid('reportingController', controller, message));
  const limit = (field: string, path: string, max: number, required: boolean): void => {
    const value = str(event, field);
    if (required && value === '') causes.push(cause.required(path));
    if (value.length > max) causes.push(cause.invalid(path, '', `can have at most ${max} characters`));
  };
  limit('reportingInstance', 'reportingInstance', 128, true);
  limit('action', 'action', 128, true);
  limit('reason', 'reason', 128, true);
  limit('note', 'message', 1024, false);
  return causes;
}

/** `validateV1EventSeries`. */
function series(event: MutableObject): StatusCause[] {
  const value = asObject(event.series);
  if (value === undefined) return [];
  const causes: StatusCause[] = [];
  if (typeof value.count !== 'number' || value.count < 2)
    causes.push(cause.invalid('series.count', '', 'should be at least 2'));
  if (!isSet(value.lastObservedTime)) causes.push(cause.required('series.lastObservedTime'));
  return causes;
}

/** `ValidateEventCreate` for a request in events.k8s.io/v1. */
function validateCreate(event: MutableObject): StatusCause[] {
  const causes = [...legacy(event), ...series(event)];
  if (!isSet(event.eventTime)) causes.push(cause.required('eventTime'));
  const type = str(event, 'type');
  if (type !== 'Normal' && type !== 'Warning')
    causes.push(cause.invalid('type', '', `has invalid value: ${type}`));
  if (isSet(event.deprecatedFirstTimestamp))
    causes.push(cause.invalid('firstTimestamp', '', 'needs to be unset'));
  if (isSet(event.deprecatedLastTimestamp))
    causes.push(cause.invalid('lastTimestamp', '', 'needs to be unset'));
  if (isSet(event.deprecatedCount) && event.deprecatedCount !== 0)
    causes.push(cause.invalid('count', '', 'needs to be unset'));
  const source = asObject(event.deprecatedSource) ?? {};
  if (str(source, 'component') !== '' || str(source, 'host') !== '')
    causes.push(cause.invalid('source', '', 'needs to be unset'));
  return causes;
}

/** events.k8s.io/v1 field → the internal field it is reported as; all immutable on update. */
const IMMUTABLE: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'],
  ['reason', 'reason'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['type', 'type'],
  ['eventTime', 'eventTime'],
  ['action', 'action'],
  ['related', 'related'],
  ['reportingController', 'reportingController'],
  ['reportingInstance', 'reportingInstance'],
];

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** The strategy of events.k8s.io/v1 Events (validation only; the store keeps core/v1 Events). */
export const eventsV1Strategy: Strategy = {
  prepareForCreate(object) {
    return validateCreate(object);
  },
  prepareForUpdate(object, old) {
    const previous = eventsV1Converter.fromStorage(old) as JsonObject;
    // compared as Go compares them: an unset field is its zero value (`null` time, `{}` struct)
    const next = withEventsV1ZeroValues(object);
    const causes = legacy(object);
    if (!same(object.series, previous.series)) causes.push(...series(object));
    for (const [field, path] of IMMUTABLE)
      if (!same(next[field], previous[field]))
        causes.push(cause.invalid(path, object[field] ?? null, 'field is immutable'));
    return causes;
  },
};
