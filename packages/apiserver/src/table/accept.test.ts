import { BadRequestError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { TableErrorCodes, TableOptionsError, wantsTable } from './index.ts';

const KUBECTL_GET =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

describe('wantsTable', () => {
  it("answers kubectl get's Accept with a v1 Table carrying PartialObjectMetadata", () => {
    expect(wantsTable(KUBECTL_GET)).toEqual({
      version: 'v1',
      includeObject: 'Metadata',
      contentType: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
  });

  it('falls back to v1beta1 when v1 is not offered, or offered with q=0', () => {
    expect(wantsTable('application/json;as=Table;v=v1beta1;g=meta.k8s.io')?.version).toBe('v1beta1');
    expect(
      wantsTable(
        'application/json;as=Table;v=v1;g=meta.k8s.io;q=0,application/json;as=Table;v=v1beta1;g=meta.k8s.io',
      )?.contentType,
    ).toBe('application/json;as=Table;v=v1beta1;g=meta.k8s.io');
  });

  it('skips Table versions, groups and media types it cannot produce, in order', () => {
    expect(wantsTable('application/json;as=Table;v=v2;g=meta.k8s.io,application/json')).toBeUndefined();
    expect(wantsTable('application/json;as=Table;v=v1;g=example.com,application/json')).toBeUndefined();
    expect(
      wantsTable(
        'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io',
      )?.version,
    ).toBe('v1');
  });

  it('is not a Table for plain JSON, YAML, */* or no Accept at all', () => {
    for (const accept of [
      undefined,
      '',
      'application/json',
      'application/yaml',
      '*/*',
      'application/json, */*',
    ]) {
      expect(wantsTable(accept), String(accept)).toBeUndefined();
    }
  });

  it('lets a plain type listed first win over a Table listed later', () => {
    expect(wantsTable(`application/json,${KUBECTL_GET}`)).toBeUndefined();
  });

  it('orders ranges by quality before position', () => {
    expect(wantsTable('application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io')?.version).toBe(
      'v1',
    );
  });

  it('reads parameter names and types case-insensitively, and quoted values', () => {
    expect(wantsTable('Application/JSON; AS="Table"; V=v1; G=meta.k8s.io')?.version).toBe('v1');
  });

  it('accepts the includeObject query parameter values None, Metadata and Object', () => {
    expect(wantsTable(KUBECTL_GET, 'Object')?.includeObject).toBe('Object');
    expect(wantsTable(KUBECTL_GET, 'None')?.includeObject).toBe('None');
    expect(wantsTable(KUBECTL_GET, null)?.includeObject).toBe('Metadata');
    expect(wantsTable(KUBECTL_GET, '')?.includeObject).toBe('Metadata');
  });

  it('rejects another includeObject value with kube-apiserver’s 400 message', () => {
    expect(() => wantsTable(KUBECTL_GET, 'object')).toThrow('unrecognized includeObject value: "object"');
    let error: unknown;
    try {
      wantsTable(KUBECTL_GET, 'All');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TableOptionsError);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as TableOptionsError).code).toBe(TableErrorCodes.INCLUDE_OBJECT_INVALID);
    expect((error as TableOptionsError).status).toBe(400);
  });

  it('checks includeObject only when a Table is wanted, as upstream does', () => {
    expect(wantsTable('application/json', 'bogus')).toBeUndefined();
  });
});
