/**
 * Run-wide state of the `process` project: the folder the packed tarballs are shared in
 * (test/packs.ts), made empty before the first test and removed after the last.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'converge-packs-'));
  project.provide('convergePacks', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
