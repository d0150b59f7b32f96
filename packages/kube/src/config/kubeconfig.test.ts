import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KubeconfigNotFoundError } from '../errors.ts';
import {
  b64,
  cluster,
  config,
  context,
  PEM_CA,
  PEM_CERT,
  PEM_KEY,
  user,
  useTempDir,
  writeFile,
} from './kubeconfig-test-support.ts';
import { loadConfig, loadKubeconfig } from './load-kubeconfig.ts';

const tempDir = useTempDir();
const file = (name: string, content: unknown): string => writeFile(tempDir(), name, content);

describe('loadKubeconfig', () => {
  it('resolves the current context of one file: server, namespace, CA data and token', () => {
    const path = file(
      'config',
      config({
        clusters: [cluster('c', 'https://10.0.0.1:6443', { 'certificate-authority-data': b64(PEM_CA) })],
        users: [user('u', { token: 'secret' })],
        contexts: [context('ctx', 'c', 'u', 'team')],
        current: 'ctx',
      }),
    );
    expect(loadKubeconfig({ path, env: {} })).toEqual({
      server: 'https://10.0.0.1:6443',
      namespace: 'team',
      tls: { ca: PEM_CA },
      auth: { type: 'token', token: 'secret' },
      context: 'ctx',
      source: path,
    });
  });

  it('merges KUBECONFIG files as kubectl does: the first file defining a name wins, current-context comes from the first file setting it', () => {
    const first = file(
      'first',
      config({ clusters: [cluster('shared', 'https://first:6443')], users: [user('u', { token: 'first' })] }),
    );
    const second = file(
      'second',
      config({
        clusters: [cluster('shared', 'https://second:6443'), cluster('only-second', 'https://other:6443')],
        users: [user('u', { token: 'second' })],
        contexts: [context('a', 'shared', 'u'), context('b', 'only-second', 'u')],
        current: 'a',
      }),
    );
    const third = file('third', config({ contexts: [context('a', 'only-second')], current: 'b' }));
    const env = { KUBECONFIG: [first, second, third].join(delimiter) };
    const resolved = loadKubeconfig({ env });
    expect(resolved.context).toBe('a');
    expect(resolved.server).toBe('https://first:6443');
    expect(resolved.auth).toEqual({ type: 'token', token: 'first' });
    expect(resolved.source).toBe([first, second, third].join(', '));
    expect(loadKubeconfig({ env, context: 'b' }).server).toBe('https://other:6443');
  });

  it('skips KUBECONFIG files that do not exist, and throws KubeconfigNotFoundError when none does', () => {
    const real = file(
      'real',
      config({ clusters: [cluster('c', 'https://x')], contexts: [context('k', 'c')], current: 'k' }),
    );
    const missing = join(tempDir(), 'missing');
    expect(loadKubeconfig({ env: { KUBECONFIG: `${missing}${delimiter}${real}` } }).server).toBe('https://x');
    expect(() => loadKubeconfig({ env: { KUBECONFIG: missing } })).toThrow(KubeconfigNotFoundError);
  });

  it('throws KubeconfigNotFoundError for an explicit path that does not exist, naming it', () => {
    const missing = join(tempDir(), 'nope');
    expect(() => loadKubeconfig({ path: missing, env: {} })).toThrow(missing);
    expect(() => loadKubeconfig({ path: missing, env: {} })).toThrow(KubeconfigNotFoundError);
  });

  it('reads ~/.kube/config from HOME without KUBECONFIG', () => {
    file(
      '.kube/config',
      config({ clusters: [cluster('c', 'https://home')], contexts: [context('k', 'c')], current: 'k' }),
    );
    expect(loadKubeconfig({ env: { HOME: tempDir() } }).server).toBe('https://home');
  });

  it('reads certificate, key, CA and token files relative to the kubeconfig that names them', () => {
    file('certs/ca.crt', PEM_CA);
    file('certs/client.crt', PEM_CERT);
    file('certs/client.key', PEM_KEY);
    file('certs/token', 'file-token\n');
    const path = file(
      'nested/config',
      config({
        clusters: [
          cluster('c', 'https://x', { 'certificate-authority': '../certs/ca.crt', 'tls-server-name': 'api' }),
        ],
        users: [
          user('u', {
            'client-certificate': '../certs/client.crt',
            'client-key': '../certs/client.key',
            tokenFile: '../certs/token',
          }),
        ],
        contexts: [context('k', 'c', 'u')],
        current: 'k',
      }),
    );
    const resolved = loadKubeconfig({ path, env: {} });
    expect(resolved.tls).toEqual({ ca: PEM_CA, cert: PEM_CERT, key: PEM_KEY, serverName: 'api' });
    expect(resolved.auth).toEqual({ type: 'tokenFile', path: join(tempDir(), 'certs/token') });
  });

  it('prefers *-data over files and token over tokenFile, as client-go does', () => {
    const path = file(
      'config',
      config({
        clusters: [
          cluster('c', 'https://x', {
            'certificate-authority-data': b64(PEM_CA),
            'certificate-authority': 'missing.crt',
          }),
        ],
        users: [
          user('u', {
            token: 't',
            tokenFile: 'missing-token',
            'client-certificate-data': b64(PEM_CERT),
            'client-key-data': b64(PEM_KEY),
          }),
        ],
        contexts: [context('k', 'c', 'u')],
        current: 'k',
      }),
    );
    const resolved = loadKubeconfig({ path, env: {} });
    expect(resolved.tls).toEqual({ ca: PEM_CA, cert: PEM_CERT, key: PEM_KEY });
    expect(resolved.auth).toEqual({ type: 'token', token: 't' });
  });

  it('applies the namespace option over the context namespace, which defaults to default', () => {
    const path = file(
      'config',
      config({ clusters: [cluster('c', 'x:6443')], contexts: [context('k', 'c')], current: 'k' }),
    );
    const resolved = loadKubeconfig({ path, env: {} });
    expect(resolved.namespace).toBe('default');
    expect(resolved.server, 'a server without a scheme is https').toBe('https://x:6443');
    expect(loadKubeconfig({ path, env: {}, namespace: 'other' }).namespace).toBe('other');
  });

  it('keeps a path prefix of the server URL and insecure-skip-tls-verify', () => {
    const path = file(
      'config',
      config({
        clusters: [cluster('c', 'https://rancher/k8s/clusters/c-1/', { 'insecure-skip-tls-verify': true })],
        users: [user('u', { username: 'admin', password: 'pw' })],
        contexts: [context('k', 'c', 'u')],
        current: 'k',
      }),
    );
    const resolved = loadKubeconfig({ path, env: {} });
    expect(resolved.server).toBe('https://rancher/k8s/clusters/c-1');
    expect(resolved.tls).toEqual({ insecureSkipTlsVerify: true });
    expect(resolved.auth).toEqual({ type: 'basic', username: 'admin', password: 'pw' });
  });

  it('resolves an exec plugin, with a relative command against the kubeconfig directory and a bare one left to PATH', () => {
    const exec = (command: string) => ({
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command,
        args: ['token', '--cluster', 'x'],
        env: [{ name: 'AWS_PROFILE', value: 'dev' }],
        interactiveMode: 'Never',
        provideClusterInfo: true,
      },
    });
    const path = file(
      'sub/config',
      config({
        clusters: [cluster('c', 'https://x')],
        users: [user('rel', exec('./bin/plugin')), user('bare', exec('aws'))],
        contexts: [context('rel', 'c', 'rel'), context('bare', 'c', 'bare')],
        current: 'rel',
      }),
    );
    expect(loadKubeconfig({ path, env: {} }).auth).toEqual({
      type: 'exec',
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: join(tempDir(), 'sub/bin/plugin'),
        args: ['token', '--cluster', 'x'],
        env: [{ name: 'AWS_PROFILE', value: 'dev' }],
        interactiveMode: 'Never',
        provideClusterInfo: true,
      },
    });
    const bare = loadKubeconfig({ path, env: {}, context: 'bare' }).auth;
    expect(bare.type === 'exec' && bare.exec.command).toBe('aws');
  });
});

describe('loadConfig', () => {
  it('uses a kubeconfig when one exists and the in-cluster config otherwise', () => {
    const sa = join(tempDir(), 'sa');
    file('sa/token', 'pod-token');
    file('sa/ca.crt', PEM_CA);
    file('sa/namespace', 'pods');
    const inCluster = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
    expect(loadConfig({ env: inCluster, serviceAccountDir: sa })).toMatchObject({
      server: 'https://10.96.0.1:443',
      namespace: 'pods',
      source: 'in-cluster',
    });
    const path = file('config', config(good()));
    expect(loadConfig({ env: { ...inCluster, KUBECONFIG: path }, serviceAccountDir: sa }).server).toBe(
      'https://x',
    );
    expect(() => loadConfig({ env: {}, serviceAccountDir: sa })).toThrow(KubeconfigNotFoundError);
  });
});

function good(): Parameters<typeof config>[0] {
  return { clusters: [cluster('c', 'https://x')], contexts: [context('k', 'c')], current: 'k' };
}
