/**
 * Test support for the kubeconfig tests (not part of the package's API): a temporary directory
 * per test, kubeconfig builders and PEM stand-ins (only their PEM framing is checked).
 *
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { stringify } from 'yaml';
import { KubeconfigError } from '../errors.ts';

export const PEM_CA = '-----BEGIN CERTIFICATE-----\nQ0EK\n-----END CERTIFICATE-----\n';
export const PEM_CERT = '-----BEGIN CERTIFICATE-----\nQ0VSVAo=\n-----END CERTIFICATE-----\n';
export const PEM_KEY = '-----BEGIN PRIVATE KEY-----\nS0VZCg==\n-----END PRIVATE KEY-----\n';
export const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** A fresh temporary directory per test of the calling file; `dir()` is the current one. */
export function useTempDir(): () => string {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}

/** Writes a kubeconfig (an object serialised as YAML, or raw text) under `dir` and returns its path. */
export function writeFile(dir: string, name: string, content: unknown): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, typeof content === 'string' ? content : stringify(content));
  return path;
}

export interface ConfigParts {
  clusters?: unknown[];
  users?: unknown[];
  contexts?: unknown[];
  current?: string;
}

export function config(options: ConfigParts): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: options.clusters ?? [],
    users: options.users ?? [],
    contexts: options.contexts ?? [],
    ...(options.current === undefined ? {} : { 'current-context': options.current }),
  };
}

export const cluster = (name: string, server: string, extra: Record<string, unknown> = {}) => ({
  name,
  cluster: { server, ...extra },
});
export const user = (name: string, spec: Record<string, unknown>) => ({ name, user: spec });
export const context = (name: string, clusterName: string, userName?: string, namespace?: string) => ({
  name,
  context: { cluster: clusterName, ...(userName && { user: userName }), ...(namespace && { namespace }) },
});

/** The KubeconfigError thrown by `load`, with its file and field. */
export function kubeconfigError(load: () => unknown): { file: string; field: string; message: string } {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(KubeconfigError);
    const e = error as KubeconfigError;
    return { file: e.file, field: e.field, message: e.message };
  }
  return expect.fail('expected a KubeconfigError');
}
