import { delimiter } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  b64,
  cluster,
  config,
  context,
  kubeconfigError,
  PEM_CA,
  PEM_CERT,
  user,
  useTempDir,
  writeFile,
} from './kubeconfig-test-support.ts';
import { loadKubeconfig } from './load-kubeconfig.ts';

const tempDir = useTempDir();
const file = (name: string, content: unknown): string => writeFile(tempDir(), name, content);

describe('loadKubeconfig errors name the file and the field', () => {
  const good = {
    clusters: [cluster('c', 'https://x')],
    users: [user('u', { token: 't' })],
    contexts: [context('k', 'c', 'u')],
    current: 'k',
  };
  const cases: [string, () => unknown, string][] = [
    ['text that is not YAML', () => 'clusters: [\n  - {', '(document)'],
    ['a document that is a list', () => '- a\n- b\n', '(document)'],
    ['a kind other than Config', () => ({ ...config(good), kind: 'Pod' }), 'kind'],
    ['clusters that are not a list', () => ({ ...config(good), clusters: { c: 1 } }), 'clusters'],
    [
      'a cluster without a name',
      () => config({ ...good, clusters: [{ cluster: { server: 'https://x' } }] }),
      'clusters[0].name',
    ],
    [
      'two clusters with one name',
      () => config({ ...good, clusters: [cluster('c', 'https://x'), cluster('c', 'https://y')] }),
      'clusters[1].name',
    ],
    [
      'a server that is a number',
      () => config({ ...good, clusters: [cluster('c', 42 as never)] }),
      'clusters[0].cluster.server',
    ],
    [
      'a cluster without server',
      () => config({ ...good, clusters: [{ name: 'c', cluster: {} }] }),
      'clusters[0].cluster.server',
    ],
    [
      'a server that is not http(s)',
      () => config({ ...good, clusters: [cluster('c', 'ftp://x')] }),
      'clusters[0].cluster.server',
    ],
    [
      'insecure-skip-tls-verify as a string',
      () => config({ ...good, clusters: [cluster('c', 'https://x', { 'insecure-skip-tls-verify': 'yes' })] }),
      'clusters[0].cluster.insecure-skip-tls-verify',
    ],
    [
      'insecure together with a CA',
      () =>
        config({
          ...good,
          clusters: [
            cluster('c', 'https://x', {
              'insecure-skip-tls-verify': true,
              'certificate-authority-data': b64(PEM_CA),
            }),
          ],
        }),
      'clusters[0].cluster.insecure-skip-tls-verify',
    ],
    [
      'CA data that is not base64',
      () =>
        config({
          ...good,
          clusters: [cluster('c', 'https://x', { 'certificate-authority-data': 'not base64!' })],
        }),
      'clusters[0].cluster.certificate-authority-data',
    ],
    [
      'CA data that is not PEM',
      () =>
        config({
          ...good,
          clusters: [cluster('c', 'https://x', { 'certificate-authority-data': b64('hello') })],
        }),
      'clusters[0].cluster.certificate-authority-data',
    ],
    [
      'a CA file that does not exist',
      () =>
        config({ ...good, clusters: [cluster('c', 'https://x', { 'certificate-authority': 'nope.crt' })] }),
      'clusters[0].cluster.certificate-authority',
    ],
    [
      'a proxy-url',
      () => config({ ...good, clusters: [cluster('c', 'https://x', { 'proxy-url': 'http://proxy' })] }),
      'clusters[0].cluster.proxy-url',
    ],
    [
      'a context naming a missing cluster',
      () => config({ ...good, contexts: [context('k', 'nope', 'u')] }),
      'contexts[0].context.cluster',
    ],
    [
      'a context naming a missing user',
      () => config({ ...good, contexts: [context('k', 'c', 'nope')] }),
      'contexts[0].context.user',
    ],
    [
      'a current-context naming a missing context',
      () => config({ ...good, current: 'nope' }),
      'current-context',
    ],
    ['no current-context', () => config({ ...good, current: undefined as never }), 'current-context'],
    [
      'a user with a token and an exec plugin',
      () => config({ ...good, users: [user('u', { token: 't', exec: { command: 'x' } })] }),
      'users[0].user',
    ],
    [
      'a client certificate without its key',
      () => config({ ...good, users: [user('u', { 'client-certificate-data': b64(PEM_CERT) })] }),
      'users[0].user.client-key',
    ],
    [
      'an exec plugin without apiVersion',
      () => config({ ...good, users: [user('u', { exec: { command: 'x' } })] }),
      'users[0].user.exec.apiVersion',
    ],
    [
      'an exec plugin without command',
      () =>
        config({
          ...good,
          users: [user('u', { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1' } })],
        }),
      'users[0].user.exec.command',
    ],
    [
      'a v1 exec plugin without interactiveMode',
      () =>
        config({
          ...good,
          users: [user('u', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'x' } })],
        }),
      'users[0].user.exec.interactiveMode',
    ],
    [
      'exec args that are not strings',
      () =>
        config({
          ...good,
          users: [
            user('u', {
              exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'x', args: [1] },
            }),
          ],
        }),
      'users[0].user.exec.args[0]',
    ],
    [
      'an exec env entry without name',
      () =>
        config({
          ...good,
          users: [
            user('u', {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1beta1',
                command: 'x',
                env: [{ value: 'v' }],
              },
            }),
          ],
        }),
      'users[0].user.exec.env[0].name',
    ],
    [
      'an auth-provider',
      () => config({ ...good, users: [user('u', { 'auth-provider': { name: 'oidc' } })] }),
      'users[0].user.auth-provider',
    ],
  ];
  for (const [what, content, field] of cases) {
    it(`${what} is a KubeconfigError on ${field}`, () => {
      const path = file('broken', content());
      const error = kubeconfigError(() => loadKubeconfig({ path, env: {} }));
      expect(error.field).toBe(field);
      expect(error.file).toContain(path);
      expect(error.message).toContain(path);
    });
  }

  it('names the file of a merged config where the broken entry was written', () => {
    const first = file('first', config(good));
    const second = file('second', config({ users: [user('other', { token: 1 as never })] }));
    const error = kubeconfigError(() =>
      loadKubeconfig({ env: { KUBECONFIG: `${first}${delimiter}${second}` } }),
    );
    expect(error).toMatchObject({ file: second, field: 'users[0].user.token' });
  });
});
