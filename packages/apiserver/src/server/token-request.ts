import { BadRequestError, InvalidError, type StatusCause } from '@converge/runtime';
import type { JsonObject } from './api-resource.ts';
import { requestAuth } from './auth.ts';
import { readBodyValue, requireObject } from './body.ts';
import type { RequestContext } from './context.ts';
import { methodNotAllowed } from './errors.ts';
import { getStored } from './handle-update.ts';
import { writeValue } from './respond.ts';
import { BodyReader } from './review-body.ts';
import { API_AUDIENCES, issueToken, tokenKeys } from './service-account-token.ts';

const GROUP_VERSION = 'authentication.k8s.io/v1';
/** TokenRequestSpec defaults: one hour. */
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;

/**
 * POST `serviceaccounts/NAME/token` (TokenRequest, `pkg/registry/core/serviceaccount/storage/
 * token.go`): a token for the ServiceAccount, for `spec.audiences` (default: the API server's) and
 * `spec.expirationSeconds` (default 3600, at least 600, at most 2^32); 201 with
 * `status.token` and `status.expirationTimestamp`. The ServiceAccount must exist (404).
 * `boundObjectRef` is accepted but not checked (no Pods or Secrets binding is tracked).
 */
export async function handleTokenRequest(ctx: RequestContext, name: string): Promise<void> {
  const { apiToken } = requestAuth(ctx.req);
  if (ctx.req.method !== 'POST') throw methodNotAllowed();
  const decode = ctx.server.extensions.decodeProtobuf;
  const expected = { apiVersion: GROUP_VERSION, kind: 'TokenRequest' };
  const body = requireObject(
    await readBodyValue(ctx.req, decode === undefined ? undefined : (bytes) => decode(bytes, expected)),
  );
  if (body.apiVersion !== undefined && body.apiVersion !== '' && body.apiVersion !== GROUP_VERSION)
    throw new BadRequestError(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${GROUP_VERSION})`,
    );
  if (body.kind !== undefined && body.kind !== '' && body.kind !== 'TokenRequest')
    throw new BadRequestError(
      `the kind in the data (${String(body.kind)}) does not match the expected kind (TokenRequest)`,
    );
  const read = new BodyReader('TokenRequest', 'v1');
  const spec = read.object(body, 'spec', 'TokenRequestSpec', 'spec') ?? {};
  const requested = read.strings(spec, 'audiences', 'TokenRequestSpec', 'spec.audiences');
  const seconds =
    read.integer(spec, 'expirationSeconds', 'TokenRequestSpec', 'spec.expirationSeconds') ??
    DEFAULT_EXPIRATION_SECONDS;
  const bound = read.object(spec, 'boundObjectRef', 'BoundObjectReference', 'spec.boundObjectRef');
  const causes: StatusCause[] = [];
  if (seconds < MIN_EXPIRATION_SECONDS)
    causes.push({
      field: 'spec.expirationSeconds',
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${seconds}: may not specify a duration less than 10 minutes`,
    });
  if (seconds > MAX_EXPIRATION_SECONDS)
    causes.push({
      field: 'spec.expirationSeconds',
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${seconds}: may not specify a duration larger than 2^32 seconds`,
    });
  if (causes.length > 0) {
    const text = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
    throw new InvalidError(`TokenRequest.authentication.k8s.io ${JSON.stringify(name)} is invalid: ${text}`, {
      details: { name, group: 'authentication.k8s.io', kind: 'TokenRequest', causes },
    });
  }
  const sa = await getStored(ctx, name);
  const audiences = requested.length === 0 ? API_AUDIENCES : requested;
  const nowMs = ctx.server.clock.now();
  const { token, expiresAtSeconds } = issueToken(tokenKeys(apiToken), {
    namespace: ctx.target.namespace,
    name,
    uid: sa.metadata.uid ?? '',
    audiences,
    expirationSeconds: seconds,
    nowMs,
  });
  const outSpec: JsonObject = {
    audiences: [...audiences],
    expirationSeconds: seconds,
    boundObjectRef: bound ?? null,
  };
  const out = {
    kind: 'TokenRequest',
    apiVersion: GROUP_VERSION,
    metadata: {
      name,
      namespace: ctx.target.namespace,
      creationTimestamp: new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    },
    spec: outSpec,
    status: {
      token,
      expirationTimestamp: new Date(expiresAtSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    },
  };
  writeValue(ctx.res, 201, out, { pretty: ctx.pretty });
}
