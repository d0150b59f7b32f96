import { describe, expect, it } from 'vitest';
import { parseRequestPath } from './request-info.ts';
import { parseRequestUrl, pathSegments } from './request-url.ts';

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

describe('dot segments (DELETE …/configmaps/.. deleted the namespace)', () => {
  it('never resolves . or ..: as a name or namespace they are a 400 with kube-apiserver’s message', () => {
    expect(() => parseRequestPath('/api/v1/namespaces/victim/configmaps/..')).toThrow(
      `Name parameter invalid: "..": may not be '..'`,
    );
    expect(() => parseRequestPath('/api/v1/namespaces/victim/configmaps/.')).toThrow(
      `Name parameter invalid: ".": may not be '.'`,
    );
    expect(() => parseRequestPath('/api/v1/namespaces/victim/configmaps/%2E%2e/')).toThrow(
      `Name parameter invalid: "..": may not be '..'`,
    );
    expect(() => parseRequestPath('/api/v1/namespaces/../configmaps/a')).toThrow(
      `Namespace parameter invalid: "..": may not be '..'`,
    );
    expect(() => parseRequestPath('/api/v1/namespaces/..')).toThrow(
      `Name parameter invalid: "..": may not be '..'`,
    );
    expect(() => parseRequestPath('/api/v1/namespaces/%2e%2e/status')).toThrow(/Name parameter invalid/);
    expect(() => parseRequestPath('/api/v1/watch/namespaces/a/configmaps/..')).toThrow(
      /Name parameter invalid/,
    );
  });

  it("refuses names with '%' (decoded once) and segments decoding to '/'", () => {
    expect(() => parseRequestPath('/api/v1/namespaces/a/configmaps/%252e%252e')).toThrow(
      `Name parameter invalid: "%2e%2e": may not contain '%'`,
    );
    expect(() => parseRequestPath('/api/v1/namespaces/a/configmaps/..%2Fb')).toThrow(/may not contain '\/'/);
    expect(() => parseRequestPath('/apis/apps%2Fv1/deployments')).toThrow(/may not contain '\/'/);
  });

  it('elsewhere a dot segment is literal and addresses nothing; names that merely hold dots are names', () => {
    expect(parseRequestPath('/api/v1/namespaces/a/configmaps/b/..')).toMatchObject({
      name: 'b',
      subresource: '..',
    });
    expect(parseRequestPath('/api/v1/namespaces/a/..')).toMatchObject({ namespace: 'a', resource: '..' });
    expect(parseRequestPath('/api/..')).toEqual({ kind: 'group-version', group: '', version: '..' });
    expect(parseRequestPath('/apis/../apis/apps/v1')).toMatchObject({
      group: '..',
      version: 'apis',
      resource: 'apps',
    });
    expect(parseRequestPath('/api/v1/namespaces/a/configmaps/...')).toMatchObject({ name: '...' });
    expect(parseRequestPath('/api/v1/namespaces/a/configmaps/b.c.')).toMatchObject({ name: 'b.c.' });
  });

  it('trims leading and trailing slashes as kube does; an empty inner segment in an API path addresses nothing', () => {
    expect(parseRequestPath('//api/v1/namespaces/a/configmaps/b//')).toMatchObject({
      namespace: 'a',
      name: 'b',
    });
    expect(parseRequestPath('/api/v1/namespaces//configmaps')).toEqual({ kind: 'unknown' });
    expect(parseRequestPath('/api/v1/namespaces/a//configmaps/b')).toEqual({ kind: 'unknown' });
    // outside the API empty segments are skipped, as they always were
    expect(parseRequestPath('/healthz//ping')).toEqual({ kind: 'health' });
  });
});

describe('parseRequestUrl', () => {
  it('keeps the raw path (no dot-segment removal, no backslash rewriting) and parses the query', () => {
    const url = parseRequestUrl('/api/v1/namespaces/a/configmaps/..?pretty=1&watch=true');
    expect(url.pathname).toBe('/api/v1/namespaces/a/configmaps/..');
    expect(url.searchParams.get('pretty')).toBe('1');
    expect(parseRequestUrl('/a/%2e%2e/b\\..').pathname).toBe('/a/%2e%2e/b\\..');
    expect(parseRequestUrl('http://host:6443/api/v1/../x?y=1').pathname).toBe('/api/v1/../x');
    expect(() => parseRequestUrl('*')).toThrow(/invalid request URI/);
  });

  it('splits into segments decoded once, trimming outer slashes', () => {
    expect(pathSegments('/a/%2e%2e/%252e/')).toEqual(['a', '..', '%2e']);
    expect(pathSegments('/')).toEqual([]);
    expect(() => pathSegments('/a/%2F')).toThrow(/may not contain '\/'/);
  });
});
