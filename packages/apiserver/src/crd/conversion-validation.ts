/**
 * Validation of `spec.conversion` as apiextensions-apiserver 1.32's
 * `validateCustomResourceConversion`, with its webhook client config checks
 * (`ValidateWebhookURL`, `ValidateWebhookService` of apiserver's `util/webhook`). Field paths are
 * those of the internal version (`spec.conversion.webhookClientConfig`), as kube-apiserver reports
 * them for v1 CRDs.
 */
import type { StatusCause } from '@converge/runtime';
import { forbidden, goStrings, invalid, notSupported, path, required } from './field-errors.ts';
import { isObject, type JsonObject, own } from './json.ts';
import { isDns1035Label, isDns1123Subdomain } from './names.ts';

/** The ConversionReview versions this server speaks (`acceptedConversionReviewVersions`, sorted). */
const REVIEW_VERSIONS = ['v1', 'v1beta1'];
const FORM = '; desired format: https://host[/path]';

function str(o: JsonObject, key: string): string {
  const v = own(o, key);
  return typeof v === 'string' ? v : '';
}

function strings(o: JsonObject, key: string): string[] {
  const v = own(o, key);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** What Go's `url.Parse` makes of a URL (the parts the webhook checks read), or its error. */
interface ParsedUrl {
  readonly scheme: string;
  readonly user: string | undefined;
  readonly host: string;
  readonly rawQuery: string;
  readonly fragment: string;
}

/** The `%XX` escapes of `text` must be well formed (`invalid URL escape "%zz"`). */
function badEscape(text: string): string | undefined {
  const match = /%(?![0-9a-fA-F]{2})(.{0,2})/.exec(text);
  return match === null ? undefined : `invalid URL escape ${JSON.stringify(`%${match[1] ?? ''}`)}`;
}

/** A subset of Go's `net/url.Parse`: enough to find scheme, userinfo, host, query and fragment. */
export function parseGoUrl(raw: string): ParsedUrl | { readonly error: string } {
  const fail = (problem: string): { error: string } => ({
    error: `parse ${JSON.stringify(raw)}: ${problem}`,
  });
  if ([...raw].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    return fail('net/url: invalid control character in URL');
  const hash = raw.indexOf('#');
  const fragment = hash < 0 ? '' : raw.slice(hash + 1);
  let rest = hash < 0 ? raw : raw.slice(0, hash);
  const fragmentEscape = badEscape(fragment);
  if (fragmentEscape !== undefined) return fail(fragmentEscape);
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  if (rest.startsWith(':')) return fail('missing protocol scheme');
  rest = scheme === null ? rest : rest.slice(scheme[0].length);
  const question = rest.indexOf('?');
  const rawQuery = question < 0 ? '' : rest.slice(question + 1);
  rest = question < 0 ? rest : rest.slice(0, question);
  let user: string | undefined;
  let host = '';
  if (rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    const at = authority.lastIndexOf('@');
    user = at < 0 ? undefined : authority.slice(0, at);
    host = at < 0 ? authority : authority.slice(at + 1);
    const port = /^(\[[^\]]*\]|[^:]*)(:.*)?$/.exec(host)?.[2];
    if (port !== undefined && !/^:[0-9]*$/.test(port))
      return fail(`invalid port ${JSON.stringify(port)} after host`);
    const bad = [...host].find((c) => /[\s"<>\\^`{|}]/.test(c));
    if (bad !== undefined) return fail(`invalid character ${JSON.stringify(bad)} in host name`);
    rest = slash < 0 ? '' : rest.slice(slash);
  }
  const pathEscape = badEscape(rest);
  if (pathEscape !== undefined) return fail(pathEscape);
  return { scheme: scheme?.[1] ?? '', user, host, rawQuery, fragment };
}

/** `ValidateWebhookURL` with `forceHttps`. */
export function validateWebhookUrl(at: string, url: string, out: StatusCause[]): void {
  const parsed = parseGoUrl(url);
  if ('error' in parsed) {
    out.push(required(at, `url must be a valid URL: ${parsed.error}${FORM}`));
    return;
  }
  if (parsed.scheme !== 'https')
    out.push(invalid(at, parsed.scheme, `'https' is the only allowed URL scheme${FORM}`));
  if (parsed.host === '') out.push(invalid(at, parsed.host, `host must be specified${FORM}`));
  if (parsed.user !== undefined)
    out.push(invalid(at, parsed.user, 'user information is not permitted in the URL'));
  if (parsed.fragment !== '')
    out.push(invalid(at, parsed.fragment, 'fragments are not permitted in the URL'));
  if (parsed.rawQuery !== '')
    out.push(invalid(at, parsed.rawQuery, 'query parameters are not permitted in the URL'));
}

/**
 * `ValidateWebhookService`. kube-apiserver 1.32 passes the service's name and namespace in the
 * opposite order of the function's parameters (kubernetes/kubernetes#141353), so a missing
 * namespace is reported at `service.name` and a missing name at `service.namespace`; kept so.
 */
export function validateWebhookService(at: string, service: JsonObject, out: StatusCause[]): void {
  if (str(service, 'namespace') === '') out.push(required(path.child(at, 'name')));
  if (str(service, 'name') === '') out.push(required(path.child(at, 'namespace')));
  const port = own(service, 'port') ?? 443;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    out.push(
      invalid(path.child(at, 'port'), port, 'port is not valid: must be between 1 and 65535, inclusive'),
    );
  }
  const urlPath = own(service, 'path');
  if (typeof urlPath !== 'string' || urlPath === '' || urlPath === '/') return;
  const field = path.child(at, 'path');
  if (urlPath === '//') {
    out.push(invalid(field, urlPath, 'segment[0] may not be empty'));
    return;
  }
  if (!urlPath.startsWith('/')) out.push(invalid(field, urlPath, "must start with a '/'"));
  let check = urlPath.slice(1);
  if (check.endsWith('/')) check = check.slice(0, -1);
  check.split('/').forEach((step, i) => {
    if (step === '') {
      out.push(invalid(field, urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const problem of isDns1123Subdomain(step))
      out.push(invalid(field, urlPath, `segment[${i}]: ${problem}`));
  });
}

/** `validateConversionReviewVersions` with a recognized version required. */
function validateReviewVersions(versions: readonly string[], at: string, out: StatusCause[]): void {
  if (versions.length === 0) {
    out.push(required(at));
    return;
  }
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      out.push(invalid(path.index(at, i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const e of isDns1035Label(v)) out.push(invalid(path.index(at, i), v, e));
  });
  if (!versions.some((v) => REVIEW_VERSIONS.includes(v))) {
    out.push(invalid(at, goStrings(versions), `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  }
}

/** `validateCustomResourceConversion` (the v1 `webhook` block is kube's internal `webhookClientConfig`). */
export function validateConversion(
  conversion: unknown,
  preserveUnknownFields: boolean,
  at: string,
  out: StatusCause[],
): void {
  if (!isObject(conversion)) return;
  const strategy = str(conversion, 'strategy');
  if (strategy !== '' && strategy !== 'None' && preserveUnknownFields) {
    out.push(
      invalid(path.child(at, 'strategy'), strategy, 'must be None if spec.preserveUnknownFields is true'),
    );
  }
  if (strategy === '') out.push(required(path.child(at, 'strategy')));
  else if (strategy !== 'None' && strategy !== 'Webhook')
    out.push(notSupported(path.child(at, 'strategy'), strategy, ['None', 'Webhook']));
  const webhook = own(conversion, 'webhook');
  const clientConfig = isObject(webhook) ? own(webhook, 'clientConfig') : undefined;
  const reviewVersions = isObject(webhook) ? strings(webhook, 'conversionReviewVersions') : [];
  const cc = path.child(at, 'webhookClientConfig');
  if (strategy !== 'Webhook') {
    if (isObject(clientConfig))
      out.push(forbidden(cc, 'should not be set when strategy is not set to Webhook'));
    if (reviewVersions.length > 0) {
      out.push(
        forbidden(
          path.child(at, 'conversionReviewVersions'),
          'should not be set when strategy is not set to Webhook',
        ),
      );
    }
    return;
  }
  if (!isObject(clientConfig)) {
    out.push(required(cc, 'required when strategy is set to Webhook'));
  } else {
    const url = own(clientConfig, 'url');
    const service = own(clientConfig, 'service');
    if ((typeof url === 'string') === isObject(service)) {
      out.push(required(cc, 'exactly one of url or service is required'));
    } else if (typeof url === 'string') {
      validateWebhookUrl(path.child(cc, 'url'), url, out);
    } else {
      validateWebhookService(path.child(cc, 'service'), service as JsonObject, out);
    }
  }
  validateReviewVersions(reviewVersions, path.child(at, 'conversionReviewVersions'), out);
}

const UNRECOGNIZED = `must include at least one of ${REVIEW_VERSIONS.join(', ')}`;

/**
 * Upstream's ratchet on update: when the stored CRD's `conversionReviewVersions` already named no
 * version this server speaks (`hasValidConversionReviewVersionOrEmpty` false), an update need not
 * fix it — the `must include at least one of …` cause is dropped from `out`.
 */
export function ratchetReviewVersions(old: unknown, out: StatusCause[]): void {
  const conversion =
    isObject(old) && isObject(own(old, 'spec'))
      ? own(own(old, 'spec') as JsonObject, 'conversion')
      : undefined;
  const webhook = isObject(conversion) ? own(conversion, 'webhook') : undefined;
  const versions = isObject(webhook) ? strings(webhook, 'conversionReviewVersions') : [];
  if (versions.length === 0 || versions.some((v) => REVIEW_VERSIONS.includes(v))) return;
  const at = 'spec.conversion.conversionReviewVersions';
  for (let i = out.length - 1; i >= 0; i--) {
    const cause = out[i];
    if (cause?.field === at && cause.message.endsWith(UNRECOGNIZED)) out.splice(i, 1);
  }
}
