import { describe, expect, it } from 'vitest';
import { parseRequestPath } from './request-info.ts';

describe('request paths', () => {
  it('parses namespaced, cluster-scoped and subresource paths as kube-apiserver does', () => {
    expect(parseRequestPath('/api/v1/namespaces/default/configmaps/a')).toEqual({
      kind: 'resource',
      group: '',
      version: 'v1',
      namespace: 'default',
      resource: 'configmaps',
      name: 'a',
    });
    expect(parseRequestPath('/apis/apps/v1/namespaces/ns/deployments/web/scale')).toMatchObject({
      group: 'apps',
      namespace: 'ns',
      resource: 'deployments',
      name: 'web',
      subresource: 'scale',
    });
    expect(parseRequestPath('/apis/apps/v1/deployments')).toMatchObject({
      resource: 'deployments',
      namespace: '',
    });
  });

  it('treats /api/v1/namespaces/{name}/status and /finalize as the namespace subresources', () => {
    expect(parseRequestPath('/api/v1/namespaces/x/status')).toMatchObject({
      resource: 'namespaces',
      name: 'x',
      subresource: 'status',
    });
    expect(parseRequestPath('/api/v1/namespaces/x/finalize')).toMatchObject({
      resource: 'namespaces',
      name: 'x',
      subresource: 'finalize',
    });
    expect(parseRequestPath('/api/v1/namespaces/x')).toMatchObject({
      resource: 'namespaces',
      name: 'x',
      namespace: '',
    });
    expect(parseRequestPath('/api/v1/namespaces/x/pods')).toMatchObject({ resource: 'pods', namespace: 'x' });
  });

  it('recognises discovery, OpenAPI, version and health paths', () => {
    expect(parseRequestPath('/api')).toEqual({ kind: 'api' });
    expect(parseRequestPath('/apis')).toEqual({ kind: 'apis' });
    expect(parseRequestPath('/apis/apps')).toEqual({ kind: 'group', group: 'apps' });
    expect(parseRequestPath('/apis/apps/v1')).toEqual({
      kind: 'group-version',
      group: 'apps',
      version: 'v1',
    });
    expect(parseRequestPath('/api/v1')).toEqual({ kind: 'group-version', group: '', version: 'v1' });
    expect(parseRequestPath('/openapi/v3/apis/apps/v1')).toEqual({
      kind: 'openapi-v3-doc',
      path: 'apis/apps/v1',
    });
    expect(parseRequestPath('/version')).toEqual({ kind: 'version' });
    expect(parseRequestPath('/readyz')).toEqual({ kind: 'health' });
    expect(parseRequestPath('/api/v1/a/b/c/d')).toEqual({ kind: 'unknown' });
  });

  it('decodes percent-escapes and rejects malformed ones with a 400', () => {
    expect(parseRequestPath('/api/v1/namespaces/default/configmaps/a%2Eb')).toMatchObject({ name: 'a.b' });
    expect(() => parseRequestPath('/api/v1/namespaces/%E0%A4%A/configmaps')).toThrow(/invalid path/);
  });

  it('reads the deprecated watch prefix right after the version, as RequestInfoFactory does', () => {
    expect(parseRequestPath('/api/v1/watch/namespaces/default/pods/web')).toEqual({
      kind: 'resource',
      group: '',
      version: 'v1',
      namespace: 'default',
      resource: 'pods',
      name: 'web',
      watchPath: true,
    });
    expect(parseRequestPath('/apis/apps/v1/watch/deployments')).toMatchObject({
      namespace: '',
      resource: 'deployments',
      watchPath: true,
    });
    expect(parseRequestPath('/api/v1/watch/namespaces/kube-system')).toMatchObject({
      namespace: '',
      resource: 'namespaces',
      name: 'kube-system',
      watchPath: true,
    });
    expect(parseRequestPath('/api/v1/watch')).toEqual({ kind: 'unknown' });
    // a resource merely named like the prefix further down is not the prefix
    expect(parseRequestPath('/api/v1/namespaces/default/watch')).toMatchObject({ resource: 'watch' });
  });
});
