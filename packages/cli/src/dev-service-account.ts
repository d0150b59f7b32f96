/**
 * `converge dev --as-service-account`: the operator runs as the ServiceAccount `converge
 * manifests` generates for it, against the embedded API server, so a permission missing from its
 * RBAC fails in dev with the 403 a cluster would give. As admin (in process), the generated
 * Namespace, CRDs, ServiceAccount, Roles and bindings are applied; a token is minted for the
 * ServiceAccount with a TokenRequest; and the operators' manager talks HTTP to the server with it.
 */

import { request as plainRequest } from 'node:http';
import { request } from 'node:https';
import type { ApiServer } from '@converge/apiserver';
import {
  KubeBackend,
  type KubeConfig,
  loadKubeconfig,
  type Manifest,
  type ManifestSet,
} from '@converge/kube';
import {
  apiVersionOf,
  ConvergeError,
  isAlreadyExists,
  type Logger,
  type ResourceType,
} from '@converge/runtime';
import { describeError } from './errors.ts';
import { generatedFiles } from './manifests-cmd.ts';
import type { RunIo } from './process-io.ts';

/** How long the RBAC the ServiceAccount got may take to be in force (the authorizer follows a watch). */
const RBAC_WAIT_MS = 10_000;

/** The code of {@link ServiceAccountSetupError}. */
export const DEV_SERVICE_ACCOUNT_FAILED = 'CONVERGE_ERR_CLI_DEV_SERVICE_ACCOUNT_FAILED';

/**
 * `converge dev --as-service-account` could not set up the ServiceAccount: its manifests could not
 * be applied, the TokenRequest failed, or the server checks no tokens. `cause` is what failed.
 */
export class ServiceAccountSetupError extends ConvergeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(DEV_SERVICE_ACCOUNT_FAILED, message, options);
  }
}

/** The operators' backend as the ServiceAccount, and what to print about it. */
export interface ServiceAccountBackend {
  readonly backend: KubeBackend;
  /** `system:serviceaccount:NS:NAME`. */
  readonly username: string;
  readonly namespace: string;
  readonly name: string;
}

/** The objects applied as admin: everything but the Deployment and Service (no pods run in dev). */
function adminObjects(set: ManifestSet): readonly Manifest[] {
  return [
    set.namespace,
    ...set.crds,
    set.serviceAccount,
    ...set.roles,
    ...set.roleBindings,
    ...set.leaderElection,
  ];
}

function typeOf(server: ApiServer, object: Manifest): ResourceType {
  const type = server.store
    .types()
    .find((t) => apiVersionOf(t) === object.apiVersion && t.kind === object.kind);
  if (type === undefined)
    throw new Error(`the embedded server does not serve ${object.apiVersion} ${object.kind}`);
  return type;
}

/** Creates `object`, or replaces what is stored under its name (the RBAC may have changed since the last dev). */
async function createOrReplace(server: ApiServer, object: Manifest): Promise<void> {
  const type = typeOf(server, object);
  try {
    await server.store.create(type, object as never);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    const key = { name: object.metadata.name, namespace: object.metadata.namespace ?? '' };
    const stored = await server.store.get(type, key);
    await server.store.update(type, {
      ...object,
      metadata: { ...stored.metadata, ...object.metadata, resourceVersion: stored.metadata.resourceVersion },
    } as never);
  }
}

/** Waits until every CRD of the set is served (the CRD controller registers them asynchronously). */
async function waitForCrds(server: ApiServer, set: ManifestSet): Promise<void> {
  const deadline = Date.now() + RBAC_WAIT_MS;
  for (const crd of set.crds) {
    const spec = crd.spec as { group: string; names: { plural: string } };
    while (!server.store.types().some((t) => t.group === spec.group && t.plural === spec.names.plural)) {
      if (Date.now() > deadline)
        throw new Error(`CRD ${crd.metadata.name} is not served after ${RBAC_WAIT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** POSTs JSON to the API server as `token`; resolves with the status code and the parsed body. */
function post(
  config: KubeConfig,
  token: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: unknown }> {
  const url = new URL(path, config.server);
  const send = url.protocol === 'https:' ? request : plainRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        ...(config.tls.ca === undefined ? {} : { ca: config.tls.ca }),
        ...(config.tls.insecureSkipTlsVerify === true ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
          } catch {
            reject(new Error(`${url.pathname} answered ${res.statusCode ?? 0} with a body that is not JSON`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function adminToken(config: KubeConfig): string {
  if (config.auth.type !== 'token')
    throw new ServiceAccountSetupError(
      '--as-service-account needs the server to check tokens (drop --insecure)',
    );
  return config.auth.token;
}

/** Mints a token for the ServiceAccount (TokenRequest, `POST serviceaccounts/NAME/token`) as admin. */
async function mintToken(config: KubeConfig, namespace: string, name: string): Promise<string> {
  const { status, body } = await post(
    config,
    adminToken(config),
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 86_400 } },
  );
  const token = (body as { status?: { token?: unknown } } | undefined)?.status?.token;
  if (status !== 201 || typeof token !== 'string')
    throw new ServiceAccountSetupError(
      `TokenRequest for ServiceAccount ${namespace}/${name} failed (${status}): ${JSON.stringify(body)}`,
    );
  return token;
}

/** One question for a SelfSubjectAccessReview. */
interface Access {
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly verb: string;
  readonly namespace?: string;
}

/** Every verb of every rule of the set's roles, on the first resource of each rule. */
function accessesOf(set: ManifestSet): Access[] {
  return [...set.roles, ...set.leaderElection].flatMap((role) => {
    const rules = (role.rules ?? []) as readonly {
      apiGroups: string[];
      resources: string[];
      verbs: string[];
    }[];
    return rules.flatMap((rule) => {
      const [resource = '', subresource] = (rule.resources[0] ?? '').split('/');
      return rule.verbs.map((verb) => ({
        group: rule.apiGroups[0] ?? '',
        resource,
        verb,
        ...(subresource === undefined ? {} : { subresource }),
        ...(role.metadata.namespace === undefined ? {} : { namespace: role.metadata.namespace }),
      }));
    });
  });
}

/**
 * Waits until the authorizer grants the ServiceAccount every verb its roles hold (the RBAC objects
 * reach it through a watch; an earlier run on the same data directory may have left older ones),
 * asking as the ServiceAccount with SelfSubjectAccessReviews. Gives up quietly after
 * {@link RBAC_WAIT_MS}: the operator's own requests will then say what is missing.
 */
async function waitForRbac(config: KubeConfig, token: string, set: ManifestSet): Promise<void> {
  let pending = accessesOf(set);
  const deadline = Date.now() + RBAC_WAIT_MS;
  while (pending.length > 0 && Date.now() < deadline) {
    const answers = await Promise.all(
      pending.map((attributes) =>
        post(config, token, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: attributes },
        }).then(
          ({ body }) => (body as { status?: { allowed?: unknown } } | undefined)?.status?.allowed === true,
        ),
      ),
    );
    pending = pending.filter((_, i) => !answers[i]);
    if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Generates the operator's manifests from `modules` (as `converge manifests` would, nothing
 * written), applies the Namespace, CRDs, ServiceAccount and RBAC as admin, mints a token for the
 * ServiceAccount and returns a backend that uses it. The name and namespace are those of
 * `converge manifests` in the working directory (package.json's name, NAME-system).
 */
export async function serviceAccountBackend(
  server: ApiServer,
  kubeconfig: string,
  modules: readonly string[],
  logger: Logger,
  io: RunIo,
  cwd: string = process.cwd(),
): Promise<ServiceAccountBackend> {
  const { set } = await generatedFiles(
    {
      modules,
      out: 'config',
      name: undefined,
      namespace: undefined,
      image: undefined,
      check: true,
      helm: false,
      force: false,
      leaderElection: false,
      fencingPolicy: false,
    },
    cwd,
  );
  const { name, namespace } = set.options;
  try {
    for (const object of adminObjects(set)) await createOrReplace(server, object);
    await waitForCrds(server, set);
  } catch (error) {
    throw new ServiceAccountSetupError(
      `the ServiceAccount's manifests could not be applied: ${describeError(error)}`,
      {
        cause: error,
      },
    );
  }
  const admin = loadKubeconfig({ path: kubeconfig });
  let token: string;
  try {
    token = await mintToken(admin, namespace, name);
  } catch (error) {
    if (error instanceof ServiceAccountSetupError) throw error;
    throw new ServiceAccountSetupError(
      `TokenRequest for ServiceAccount ${namespace}/${name} failed: ${describeError(error)}`,
      {
        cause: error,
      },
    );
  }
  await waitForRbac(admin, token, set);
  const config: KubeConfig = {
    ...admin,
    namespace,
    auth: { type: 'token', token },
    source: `ServiceAccount ${namespace}/${name}`,
  };
  const username = `system:serviceaccount:${namespace}:${name}`;
  io.out(
    `converge: operators run as ServiceAccount ${namespace}/${name} (${username}) with the RBAC converge manifests generates; a missing permission fails with the API server's 403`,
  );
  return { backend: new KubeBackend({ config, logger, fieldManager: name }), username, namespace, name };
}
