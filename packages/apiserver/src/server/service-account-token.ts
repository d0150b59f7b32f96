/**
 * ServiceAccount tokens as kube-apiserver's TokenRequest issues them: JWTs signed with ES256
 * (ECDSA P-256, SHA-256) through node:crypto — no dependency, a 64-byte signature, and a key that
 * can be derived from a secret. The signing key is derived (HKDF) from the server's bearer token,
 * so tokens stay valid across restarts of a server with the same token; in insecure mode it is
 * random per process. Claims follow `pkg/serviceaccount/claims.go`: `iss`, `sub`
 * (`system:serviceaccount:NS:NAME`), `aud`, `exp`, `iat`, `nbf`, `jti` and the private
 * `kubernetes.io` claim naming the namespace and the ServiceAccount (name, uid).
 */
import {
  createECDH,
  createHash,
  createPrivateKey,
  createPublicKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  randomUUID,
  sign,
  verify,
} from 'node:crypto';

/** The issuer and default audience of a kubeadm/kind cluster's tokens. */
export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
/** The API server's own audiences (`--api-audiences` defaults to the issuer). */
export const API_AUDIENCES: readonly string[] = [SERVICE_ACCOUNT_ISSUER];

/** What a valid token says about its holder. */
export interface ServiceAccountClaims {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly audiences: readonly string[];
  readonly expiresAtSeconds: number;
  readonly issuedAtSeconds: number;
  readonly jti: string;
}

/** What a token is issued for. */
export interface TokenSpec {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly audiences: readonly string[];
  readonly expirationSeconds: number;
  readonly nowMs: number;
}

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/** The signing key pair and its key id. */
export interface TokenKeys {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly kid: string;
}

const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

function deriveKeys(secret: Buffer): TokenKeys {
  for (let counter = 0; ; counter++) {
    const d = Buffer.from(
      hkdfSync('sha256', secret, 'converge', `service-account-signing-key/${counter}`, 32),
    );
    const scalar = BigInt(`0x${d.toString('hex')}`);
    if (scalar === 0n || scalar >= P256_ORDER) continue;
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(d);
    const point = ecdh.getPublicKey();
    const jwk = {
      kty: 'EC',
      crv: 'P-256',
      x: base64url(point.subarray(1, 33)),
      y: base64url(point.subarray(33, 65)),
    };
    const privateKey = createPrivateKey({ key: { ...jwk, d: base64url(d) }, format: 'jwk' });
    const publicKey = createPublicKey({ key: jwk, format: 'jwk' });
    const der = publicKey.export({ type: 'spki', format: 'der' });
    return { privateKey, publicKey, kid: base64url(createHash('sha256').update(der).digest()) };
  }
}

const keysBySecret = new Map<string, TokenKeys>();
let processKeys: TokenKeys | undefined;

/** The keys of a server with bearer token `apiToken` (random per process when undefined). */
export function tokenKeys(apiToken: string | undefined): TokenKeys {
  if (apiToken === undefined) {
    processKeys ??= deriveKeys(randomBytes(32));
    return processKeys;
  }
  let keys = keysBySecret.get(apiToken);
  if (keys === undefined) {
    keys = deriveKeys(Buffer.from(apiToken, 'utf8'));
    keysBySecret.set(apiToken, keys);
  }
  return keys;
}

/** Issues a signed token; returns it with its expiry (seconds since the epoch). */
export function issueToken(keys: TokenKeys, spec: TokenSpec): { token: string; expiresAtSeconds: number } {
  const iat = Math.floor(spec.nowMs / 1000);
  const exp = iat + spec.expirationSeconds;
  const header = { alg: 'ES256', kid: keys.kid };
  const payload = {
    aud: spec.audiences,
    exp,
    iat,
    iss: SERVICE_ACCOUNT_ISSUER,
    jti: randomUUID(),
    'kubernetes.io': { namespace: spec.namespace, serviceaccount: { name: spec.name, uid: spec.uid } },
    nbf: iat,
    sub: `system:serviceaccount:${spec.namespace}:${spec.name}`,
  };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
  const signature = sign('sha256', Buffer.from(input), { key: keys.privateKey, dsaEncoding: 'ieee-p1363' });
  return { token: `${input}.${base64url(signature)}`, expiresAtSeconds: exp };
}

/** Why a token was not accepted (TokenReview's `status.error`; empty when it is not a token of this issuer). */
export type TokenVerdict =
  | { readonly ok: true; readonly claims: ServiceAccountClaims }
  | { readonly ok: false; readonly error: string };

function parseSegment(segment: string): unknown {
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a token's form, signature, issuer, validity window and audiences (`audiences` empty:
 * the API server's own). Never throws: anything that is not a token of this server is a verdict.
 */
export function verifyToken(
  keys: TokenKeys,
  token: string,
  nowMs: number,
  audiences: readonly string[] = API_AUDIENCES,
): TokenVerdict {
  const invalid = (error: string): TokenVerdict => ({ ok: false, error });
  const parts = token.split('.');
  // not a JWT of this issuer: no opinion (no error), as the service account authenticator
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p))) return invalid('');
  const [h, p, s] = parts as [string, string, string];
  const header = parseSegment(h);
  const payload = parseSegment(p);
  if (!isObject(header) || !isObject(payload) || payload.iss !== SERVICE_ACCOUNT_ISSUER) return invalid('');
  if (header.alg !== 'ES256') return invalid('[invalid bearer token, token could not be validated.]');
  const signature = Buffer.from(s, 'base64url');
  const signed =
    signature.length === 64 &&
    verify('sha256', Buffer.from(`${h}.${p}`), { key: keys.publicKey, dsaEncoding: 'ieee-p1363' }, signature);
  if (!signed) return invalid('[invalid bearer token, token could not be validated.]');
  const now = Math.floor(nowMs / 1000);
  const { exp, iat, nbf, jti } = payload;
  if (typeof exp !== 'number' || typeof iat !== 'number' || typeof nbf !== 'number')
    return invalid('[invalid bearer token, token could not be validated.]');
  if (now > exp) return invalid('[invalid bearer token, service account token has expired]');
  if (now < nbf) return invalid('[invalid bearer token, token could not be validated.]');
  const aud = Array.isArray(payload.aud) ? payload.aud.filter((a): a is string => typeof a === 'string') : [];
  const matched = audiences.filter((a) => aud.includes(a));
  if (matched.length === 0)
    return invalid('[invalid bearer token, token audiences is invalid for the target audiences]');
  const k8s = payload['kubernetes.io'];
  const sa = isObject(k8s) ? k8s.serviceaccount : undefined;
  if (!isObject(k8s) || !isObject(sa) || typeof k8s.namespace !== 'string' || typeof sa.name !== 'string')
    return invalid('[invalid bearer token, token could not be validated.]');
  return {
    ok: true,
    claims: {
      namespace: k8s.namespace,
      name: sa.name,
      uid: typeof sa.uid === 'string' ? sa.uid : '',
      audiences: matched,
      expiresAtSeconds: exp,
      issuedAtSeconds: iat,
      jti: typeof jti === 'string' ? jti : '',
    },
  };
}

/** The user a ServiceAccount token authenticates (`serviceaccount.UserInfo`). */
export function serviceAccountUser(claims: ServiceAccountClaims): {
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
} {
  return {
    username: `system:serviceaccount:${claims.namespace}:${claims.name}`,
    uid: claims.uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${claims.namespace}`, 'system:authenticated'],
    extra: claims.jti === '' ? {} : { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
  };
}
