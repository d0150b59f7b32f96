import { describe, expect, it } from 'vitest';
import { backToRequest, invocationOf, matchedVersion } from './match-policy.ts';
import type { AdmissionAttributes, JsonObject, Webhook } from './types.ts';

const converted: string[] = [];
const request: AdmissionAttributes = {
  operation: 'CREATE',
  kind: { group: 'example.com', version: 'v2', kind: 'Widget' },
  resource: { group: 'example.com', version: 'v2', resource: 'widgets' },
  subResource: '',
  namespaced: true,
  namespace: 'default',
  name: 'w',
  object: { apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'w' } },
  oldObject: null,
  dryRun: false,
  options: {},
  userInfo: { username: 'admin' },
  equivalents: {
    versions: [
      { version: 'v1', kind: 'Widget' },
      { version: 'v3', kind: 'Widget' },
    ],
    convert: (objects: readonly JsonObject[], apiVersion: string) => {
      converted.push(apiVersion);
      return Promise.resolve(objects.map((o) => ({ ...o, apiVersion })));
    },
  },
};

const hook = (apiVersions: string[], matchPolicy?: 'Exact' | 'Equivalent'): Webhook => ({
  name: 'w.example.com',
  clientConfig: { url: 'https://x' },
  rules: [{ operations: ['*'], apiGroups: ['example.com'], apiVersions, resources: ['widgets'] }],
  ...(matchPolicy === undefined ? {} : { matchPolicy }),
});

describe('matchPolicy', () => {
  it('the request version matches under both policies; another only under Equivalent (the default)', () => {
    expect(matchedVersion(hook(['v2'], 'Exact'), request)).toBe('request');
    expect(matchedVersion(hook(['v3', 'v1']), request)).toEqual({ version: 'v1', kind: 'Widget' });
    expect(matchedVersion(hook(['v1'], 'Exact'), request)).toBeUndefined();
    expect(matchedVersion(hook(['v9']), request)).toBeUndefined();
    const { equivalents: _none, ...plain } = request;
    expect(matchedVersion(hook(['v1']), plain)).toBeUndefined();
  });

  it('an equivalent invocation converts the objects and keeps what the client requested', async () => {
    converted.length = 0;
    const invoked = await invocationOf(request, { version: 'v1', kind: 'Widget' });
    expect(invoked).toMatchObject({
      kind: { version: 'v1' },
      resource: { version: 'v1', resource: 'widgets' },
      requestKind: request.kind,
      requestResource: request.resource,
      object: { apiVersion: 'example.com/v1' },
      oldObject: null,
    });
    expect(converted).toEqual(['example.com/v1']);
    expect(await invocationOf(request, 'request')).toBe(request);
    const back = await backToRequest(
      invoked.object as JsonObject,
      { version: 'v1', kind: 'Widget' },
      request,
    );
    expect(back.apiVersion).toBe('example.com/v2');
  });

  it('a failed conversion is a 500 Internal error', async () => {
    const failing = {
      ...request,
      equivalents: {
        versions: [],
        convert: () => Promise.reject(new Error('conversion webhook for x failed: y')),
      },
    };
    await expect(invocationOf(failing, { version: 'v1', kind: 'Widget' })).rejects.toMatchObject({
      status: 500,
      reason: 'InternalError',
      message: 'Internal error occurred: conversion webhook for x failed: y',
    });
  });
});
