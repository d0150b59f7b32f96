import { isIP } from 'node:net';
import type { KubeObject, StatusCause } from '@converge/runtime';
import type { JsonObject } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { asObject } from './json-util.ts';

/**
 * Validation rules shared by the built-in strategies, worded as kube-apiserver 1.32's
 * `pkg/apis/core/validation` and apimachinery's `util/validation` word them.
 */

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const IANA_SVC_NAME = /^[-a-z0-9]+$/;

/** apimachinery's `IsDNS1123Label` detail. */
export const DNS_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
/** apimachinery's `IsDNS1123Subdomain` detail. */
export const DNS_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** The object's `.status` is the stored one (status is written only through `/status`). */
export function keepStatus(object: JsonObject, old: KubeObject): void {
  const previous = (old as unknown as JsonObject).status;
  if (previous === undefined) delete object.status;
  else object.status = previous;
}

/** JSON equality of two values (missing and null are equal). */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** `ValidateImmutableField`: `<field>: Invalid value: <new>: field is immutable`. */
export function immutable(field: string, value: unknown, old: unknown): StatusCause[] {
  return sameJson(value, old) ? [] : [cause.invalid(field, value ?? null, 'field is immutable')];
}

/** A required string (missing or empty → Required value). */
export function requiredString(field: string, value: unknown, detail = ''): StatusCause[] {
  return typeof value === 'string' && value !== '' ? [] : [cause.required(field, detail)];
}

/** `IsDNS1123Label` problems of a required or optional value. */
export function dnsLabel(field: string, value: unknown, required = true): StatusCause[] {
  if (value === undefined || value === null || value === '') return required ? [cause.required(field)] : [];
  if (typeof value !== 'string') return [cause.invalid(field, value, DNS_LABEL_MSG)];
  const causes: StatusCause[] = [];
  if (value.length > 63) causes.push(cause.invalid(field, value, 'must be no more than 63 characters'));
  if (!DNS_LABEL.test(value)) causes.push(cause.invalid(field, value, DNS_LABEL_MSG));
  return causes;
}

/** `IsDNS1123Subdomain` problems. */
export function dnsSubdomain(field: string, value: unknown, required = true): StatusCause[] {
  if (value === undefined || value === null || value === '') return required ? [cause.required(field)] : [];
  if (typeof value !== 'string') return [cause.invalid(field, value, DNS_SUBDOMAIN_MSG)];
  const causes: StatusCause[] = [];
  if (value.length > 253) causes.push(cause.invalid(field, value, 'must be no more than 253 characters'));
  if (!DNS_SUBDOMAIN.test(value)) causes.push(cause.invalid(field, value, DNS_SUBDOMAIN_MSG));
  return causes;
}

/** `IsValidPortNum`: an integer 1–65535. */
export function portNumber(field: string, value: unknown): StatusCause[] {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535) return [];
  return [cause.invalid(field, value ?? 0, 'must be between 1 and 65535, inclusive')];
}

/** `IsValidPortName` (an IANA service name): at most 15 characters, `[-a-z0-9]`, a letter, no `--`. */
export function portName(field: string, value: string): StatusCause[] {
  const problems: string[] = [];
  if (value.length > 15) problems.push('must be no more than 15 characters');
  if (!IANA_SVC_NAME.test(value))
    problems.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (value.includes('--')) problems.push('must not contain consecutive hyphens');
  if (!/[a-z]/.test(value)) problems.push('must contain at least one letter (a-z)');
  if (value.startsWith('-') || value.endsWith('-')) problems.push('must not begin or end with a hyphen');
  return problems.map((p) => cause.invalid(field, value, p));
}

/** A port given as a number or an IANA name (int-or-string `targetPort`, `containerPort` names). */
export function portNumberOrName(field: string, value: unknown): StatusCause[] {
  if (typeof value === 'string') return portName(field, value);
  return portNumber(field, value);
}

/** Protocols of ports. */
export const PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;

/** `protocol` must be TCP, UDP or SCTP. */
export function protocol(field: string, value: unknown): StatusCause[] {
  return (PROTOCOLS as readonly unknown[]).includes(value)
    ? []
    : [cause.unsupported(field, value, PROTOCOLS)];
}

/** A non-negative integer (`ValidateNonnegativeField`). */
export function nonNegative(field: string, value: unknown): StatusCause[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return [];
  return [cause.invalid(field, value, 'must be greater than or equal to 0')];
}

/** The entries of an array field that are objects, with their index. */
export function items(value: unknown): [JsonObject, number][] {
  if (!Array.isArray(value)) return [];
  const out: [JsonObject, number][] = [];
  value.forEach((item, i) => {
    const object = asObject(item);
    if (object !== undefined) out.push([object, i]);
  });
  return out;
}

/** `ValidateLabelSelector`: operators and values of `matchExpressions`. */
export function labelSelector(field: string, selector: unknown): StatusCause[] {
  const object = asObject(selector);
  if (object === undefined) return [];
  const causes: StatusCause[] = [];
  for (const [expression, i] of items(object.matchExpressions)) {
    const at = `${field}.matchExpressions[${i}]`;
    const values = Array.isArray(expression.values) ? expression.values : [];
    switch (expression.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          causes.push(cause.required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          causes.push(
            cause.forbidden(
              `${at}.values`,
              "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
          );
        break;
      default:
        causes.push(
          cause.invalid(`${at}.operator`, expression.operator ?? '', 'not a valid selector operator'),
        );
    }
    if (typeof expression.key !== 'string' || expression.key === '') causes.push(cause.required(`${at}.key`));
  }
  return causes;
}

/** Whether a LabelSelector matches a label map (matchLabels and matchExpressions). */
export function selectorMatches(selector: JsonObject, labels: JsonObject): boolean {
  for (const [key, value] of Object.entries(asObject(selector.matchLabels) ?? {}))
    if (labels[key] !== value) return false;
  for (const [expression] of items(selector.matchExpressions)) {
    const key = String(expression.key ?? '');
    const values = Array.isArray(expression.values) ? expression.values : [];
    const has = Object.hasOwn(labels, key);
    const ok =
      expression.operator === 'In'
        ? has && values.includes(labels[key])
        : expression.operator === 'NotIn'
          ? !has || !values.includes(labels[key])
          : expression.operator === 'Exists'
            ? has
            : !has;
    if (!ok) return false;
  }
  return true;
}

/** `IsValidIP` (`ValidateEndpointIP`, Service cluster IPs). */
export function ipAddress(field: string, value: unknown): StatusCause[] {
  if (typeof value === 'string' && isIP(value) !== 0) return [];
  return [cause.invalid(field, value ?? '', 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')];
}
