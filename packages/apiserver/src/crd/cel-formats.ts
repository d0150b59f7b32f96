/**
 * The named formats of Kubernetes' CEL format library (`format.named("dns1123Label")`), with
 * apimachinery's validators and messages.
 */
import type { FormatValidator } from '../cel/index.ts';
import {
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
} from './names.ts';

/** `maskTrailingDash`: a prefix may end with '-' (a generated name follows). */
const prefixed =
  (validate: FormatValidator): FormatValidator =>
  (value) =>
    validate(value.length > 1 && value.endsWith('-') ? `${value.slice(0, -1)}a` : value);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The formats by the names the library uses. */
export const formatValidators: Readonly<Record<string, FormatValidator>> = Object.freeze({
  dns1123Label: isDns1123Label,
  dns1123Subdomain: isDns1123Subdomain,
  dns1035Label: isDns1035Label,
  qualifiedName: isQualifiedName,
  dns1123LabelPrefix: prefixed(isDns1123Label),
  dns1123SubdomainPrefix: prefixed(isDns1123Subdomain),
  dns1035LabelPrefix: prefixed(isDns1035Label),
  labelValue: isValidLabelValue,
  uuid: (value: string) => (UUID.test(value) ? [] : ['does not match the UUID format']),
  byte: (value: string) =>
    /^[A-Za-z0-9+/]*={0,2}$/.test(value) && value.length % 4 === 0 ? [] : ['invalid base64'],
  date: (value: string) =>
    /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)) ? [] : ['invalid date'],
  datetime: (value: string) => (Number.isNaN(Date.parse(value)) ? ['invalid datetime'] : []),
});
