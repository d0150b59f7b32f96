/**
 * Bind addresses as controller-runtime takes them, importable alone (`@converge/metrics/bind-address`):
 * the `converge` command checks its bind-address flags while it parses them, and loading the
 * metrics registry (prom-client, OpenTelemetry's API) for that cost every start a quarter second.
 */
import { OptionsError } from '@converge/runtime';

/** Where a server listens. */
export interface BindAddress {
  /** Undefined: every interface. */
  readonly host: string | undefined;
  readonly port: number;
  /** As given, for logs and errors. */
  readonly text: string;
}

/**
 * Parses a bind address as controller-runtime takes them: `:8080` (every interface),
 * `127.0.0.1:8080`, `[::1]:8080`, `localhost:0` (a free port), or `0` (disabled: undefined).
 *
 * @throws OptionsError for anything else.
 */
export function parseBindAddress(field: string, value: string): BindAddress | undefined {
  if (typeof value !== 'string')
    throw new OptionsError(field, value, "an address such as ':8080', or '0' to disable");
  if (value === '0') return undefined;
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]*)):(\d{1,5})$/.exec(value);
  const port = match === null ? Number.NaN : Number(match[3]);
  if (match === null || !Number.isInteger(port) || port > 65_535) {
    throw new OptionsError(
      field,
      value,
      "an address such as ':8080', '127.0.0.1:8080', '[::1]:8080', or '0' to disable",
    );
  }
  const host = match[1] ?? match[2];
  return { host: host === '' ? undefined : host, port, text: value };
}
