import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiV3ForCrd } from './openapi.ts';
import { websiteCrd } from './testdata/crds.ts';

function hasKubectl(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Just enough discovery for kubectl to find `websites`, plus the generated OpenAPI document. */
function fakeApiserver(requests: string[]) {
  const doc = JSON.stringify(openApiV3ForCrd(websiteCrd));
  const send = (res: ServerResponse, code: number, body: unknown): void => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  return createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    requests.push(`${req.method} ${req.url}`);
    if (path === '/version') return send(res, 200, { major: '1', minor: '32', gitVersion: 'v1.32.4' });
    if (path === '/api')
      return send(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
    if (path === '/api/v1')
      return send(res, 200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'v1', resources: [] });
    if (path === '/apis') {
      const version = { groupVersion: 'example.com/v1', version: 'v1' };
      return send(res, 200, {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [{ name: 'example.com', versions: [version], preferredVersion: version }],
      });
    }
    if (path === '/apis/example.com/v1') {
      const resource = {
        name: 'websites',
        singularName: 'website',
        namespaced: true,
        kind: 'Website',
        verbs: ['create', 'get', 'list', 'patch'],
        shortNames: ['ws'],
      };
      return send(res, 200, {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: 'example.com/v1',
        resources: [resource],
      });
    }
    if (path === '/openapi/v3')
      return send(res, 200, {
        paths: { 'apis/example.com/v1': { serverRelativeURL: '/openapi/v3/apis/example.com/v1?hash=1' } },
      });
    if (path === '/openapi/v3/apis/example.com/v1') return send(res, 200, doc);
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => send(res, 201, body));
      return;
    }
    return send(res, 404, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'NotFound',
      code: 404,
      message: 'not found',
    });
  });
}

describe.skipIf(!hasKubectl())('the generated OpenAPI document with the real kubectl', () => {
  const requests: string[] = [];
  const server = fakeApiserver(requests);
  const dir = mkdtempSync(join(tmpdir(), 'converge-crd-'));
  let kubectl: (...args: string[]) => Promise<string>;

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    kubectl = async (...args) => {
      const flags = [`--server=http://127.0.0.1:${port}`, `--cache-dir=${join(dir, 'cache')}`];
      const env = { ...process.env, KUBECONFIG: '/dev/null' };
      return (await promisify(execFile)('kubectl', [...flags, ...args], { encoding: 'utf8', env })).stdout;
    };
  });

  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl explain shows the kind, its fields and the ObjectMeta behind metadata', async () => {
    const kind = await kubectl('explain', 'websites');
    expect(kind).toMatch(/KIND:\s+Website/);
    expect(kind).toContain('Website is a static site served by the operator.');
    expect(kind).toMatch(/metadata\s+<ObjectMeta>/);
    expect(await kubectl('explain', 'websites.spec.domain')).toContain('Public host name.');
    expect(await kubectl('explain', 'websites.metadata.labels')).toMatch(
      /FIELD: labels <map\[string\]string>/,
    );
  });

  it('kubectl apply finds fieldValidation on the PATCH operation and sends fieldValidation=Strict', async () => {
    const manifest = join(dir, 'website.yaml');
    writeFileSync(
      manifest,
      'apiVersion: example.com/v1\nkind: Website\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  domain: a.example\n',
    );
    expect(await kubectl('apply', '-f', manifest)).toContain('website.example.com/w1 created');
    expect(requests).toContain(
      'POST /apis/example.com/v1/namespaces/default/websites?fieldManager=kubectl-client-side-apply&fieldValidation=Strict',
    );
    expect(requests.some((r) => r.startsWith('GET /openapi/v2'))).toBe(false);
  });
});
