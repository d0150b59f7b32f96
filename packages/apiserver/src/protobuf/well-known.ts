/**
 * The apimachinery types whose JSON is not their protobuf structure: times, durations, quantities,
 * int-or-string, raw JSON. Shared by the generic decoder and encoder.
 */

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';

/** How a message is written in JSON when it is not an object of its fields. */
export type WellKnown =
  | 'time'
  | 'microtime'
  | 'duration'
  | 'quantity'
  | 'int-or-string'
  | 'raw-json'
  | 'string-array';

const WELL_KNOWN: ReadonlyMap<string, WellKnown> = new Map<string, WellKnown>([
  [`${META}Time`, 'time'],
  [`${META}MicroTime`, 'microtime'],
  [`${META}Duration`, 'duration'],
  [`${META}FieldsV1`, 'raw-json'],
  [`${META}Verbs`, 'string-array'],
  ['k8s.io.apimachinery.pkg.api.resource.Quantity', 'quantity'],
  ['k8s.io.apimachinery.pkg.util.intstr.IntOrString', 'int-or-string'],
  ['k8s.io.apimachinery.pkg.runtime.RawExtension', 'raw-json'],
]);

/** The special JSON form of a message, or undefined for an ordinary one. */
export function wellKnown(message: string): WellKnown | undefined {
  const known = WELL_KNOWN.get(message);
  if (known !== undefined) return known;
  // `ExtraValue` (authentication, authorization, certificates) is a `[]string` in Go.
  return message.endsWith('.ExtraValue') ? 'string-array' : undefined;
}

/**
 * Scalar fields that are pointers in Go (`*int32`, `*bool`), so an explicit zero is kept in JSON.
 * Go's protobuf encoder writes every non-pointer scalar, also when it is zero, and kube-apiserver's
 * JSON then drops it (`omitempty`): the decoder drops zero scalars except these and required ones.
 */
export const POINTER_SCALARS: ReadonlySet<string> = new Set([
  'replicas',
  'controller',
  'blockOwnerDeletion',
  'revisionHistoryLimit',
  'progressDeadlineSeconds',
  'parallelism',
  'completions',
  'backoffLimit',
  'backoffLimitPerIndex',
  'maxFailedIndexes',
  'activeDeadlineSeconds',
  'ttlSecondsAfterFinished',
  'suspend',
  'startingDeadlineSeconds',
  'successfulJobsHistoryLimit',
  'failedJobsHistoryLimit',
  'immutable',
  'automountServiceAccountToken',
  'terminationGracePeriodSeconds',
  'enableServiceLinks',
  'shareProcessNamespace',
  'hostUsers',
  'runAsUser',
  'runAsGroup',
  'runAsNonRoot',
  'fsGroup',
  'privileged',
  'allowPrivilegeEscalation',
  'readOnlyRootFilesystem',
  'optional',
  'defaultMode',
  'mode',
  'priority',
  'leaseDurationSeconds',
  'leaseTransitions',
  'allocateLoadBalancerNodePorts',
  'ready',
  'serving',
  'terminating',
  'minReplicas',
  'targetCPUUtilizationPercentage',
  'deletionGracePeriodSeconds',
  'expirationSeconds',
  'value',
]);

const NS_PER_SECOND = 1_000_000_000n;

/** RFC 3339 in UTC: second precision (`Time`) or microseconds (`MicroTime`), as Go formats them. */
export function formatTime(seconds: bigint, nanos: number, micro: boolean): string {
  const ms = Number(seconds) * 1000;
  const base = new Date(ms).toISOString().slice(0, 19);
  if (!micro) return `${base}Z`;
  const micros = Math.trunc(nanos / 1000)
    .toString()
    .padStart(6, '0');
  return `${base}.${micros}Z`;
}

/** Seconds and nanos of an RFC 3339 text; undefined if it does not parse. */
export function parseTime(text: string): { seconds: bigint; nanos: number } | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  if (m === null) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  const fraction = (m[2] ?? '.').slice(1).padEnd(9, '0').slice(0, 9);
  return { seconds: BigInt(Math.floor(ms / 1000)), nanos: Number(fraction) };
}

const UNITS: readonly [string, bigint][] = [
  ['h', 3600n * NS_PER_SECOND],
  ['m', 60n * NS_PER_SECOND],
  ['s', NS_PER_SECOND],
  ['ms', 1_000_000n],
  ['us', 1000n],
  ['µs', 1000n],
  ['ns', 1n],
];

/** Go's `time.Duration.String()` of nanoseconds (`1h0m0s`, `1.5s`, `300ms`, `0s`). */
export function formatDuration(ns: bigint): string {
  if (ns === 0n) return '0s';
  const sign = ns < 0n ? '-' : '';
  let v = ns < 0n ? -ns : ns;
  if (v < NS_PER_SECOND) {
    const [unit, size] = v < 1000n ? ['ns', 1n] : v < 1_000_000n ? ['µs', 1000n] : ['ms', 1_000_000n];
    return `${sign}${fraction(v, size)}${unit}`;
  }
  const hours = v / (3600n * NS_PER_SECOND);
  v -= hours * 3600n * NS_PER_SECOND;
  const minutes = v / (60n * NS_PER_SECOND);
  v -= minutes * 60n * NS_PER_SECOND;
  const seconds = fraction(v, NS_PER_SECOND);
  if (hours > 0n) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

function fraction(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const rest = value % unit;
  if (rest === 0n) return whole.toString();
  const digits = unit.toString().length - 1;
  return `${whole}.${rest.toString().padStart(digits, '0').replace(/0+$/, '')}`;
}

/** Go's `time.ParseDuration` (nanoseconds), or undefined for malformed text. */
export function parseDuration(text: string): bigint | undefined {
  let rest = text;
  let sign = 1n;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1n;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return undefined;
  let total = 0n;
  while (rest !== '') {
    const m = /^(\d*)(?:\.(\d*))?(h|ms|m|s|us|µs|ns)/.exec(rest);
    if (m === null || (m[1] === '' && (m[2] ?? '') === '')) return undefined;
    const size = UNITS.find(([unit]) => unit === m[3])?.[1] ?? 1n;
    const frac = m[2] ?? '';
    total += BigInt(m[1] === '' ? '0' : (m[1] as string)) * size;
    if (frac !== '') total += (BigInt(frac) * size) / 10n ** BigInt(frac.length);
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}
