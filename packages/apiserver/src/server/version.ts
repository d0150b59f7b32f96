/**
 * What `/version` reports. kubectl's dispatcher runs the kubectl minor matching `minor`, so the
 * server says 1.32 (the Kubernetes release whose semantics it follows).
 */
export const KUBERNETES_VERSION = Object.freeze({
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.4+converge',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2025-04-22T00:00:00Z',
  goVersion: 'go1.23.8',
  compiler: 'gc',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
});
