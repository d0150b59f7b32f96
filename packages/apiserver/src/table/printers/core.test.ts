import { describe, expect, it } from 'vitest';
import {
  configMapPrinter,
  namespacePrinter,
  secretPrinter,
  serviceAccountPrinter,
  servicePrinter,
} from './core.ts';

const now = Date.UTC(2026, 0, 10, 12, 0, 0);
const meta = (name: string, created = '2026-01-10T11:59:55Z') => ({
  name,
  namespace: 'shop',
  creationTimestamp: created,
});
const names = (printer: { columns: readonly { name: string; priority: number }[] }) =>
  printer.columns.map((c) => (c.priority > 0 ? `(${c.name})` : c.name));

describe('Namespace', () => {
  it('prints NAME STATUS AGE with the phase', () => {
    expect(names(namespacePrinter)).toEqual(['Name', 'Status', 'Age']);
    const ns = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: meta('shop', '2025-12-01T00:00:00Z'),
      status: { phase: 'Active' },
    };
    expect(namespacePrinter.row(ns, now).cells).toEqual(['shop', 'Active', '40d']);
    const terminating = {
      ...ns,
      metadata: { ...ns.metadata, deletionTimestamp: '2026-01-10T11:00:00Z' },
      status: { phase: 'Terminating' },
    };
    expect(namespacePrinter.row(terminating, now).cells).toEqual(['shop', 'Terminating', '40d']);
  });
});

describe('ConfigMap', () => {
  it('prints NAME DATA AGE, counting data and binaryData keys', () => {
    expect(names(configMapPrinter)).toEqual(['Name', 'Data', 'Age']);
    const cm = {
      metadata: meta('settings'),
      data: { mode: 'fast', level: '3' },
      binaryData: { logo: 'iVBORw0=' },
    };
    expect(configMapPrinter.row(cm, now).cells).toEqual(['settings', 3, '5s']);
    expect(configMapPrinter.row({ metadata: meta('empty') }, now).cells).toEqual(['empty', 0, '5s']);
  });
});

describe('Secret', () => {
  it('prints NAME TYPE DATA AGE, counting stringData keys merged into data', () => {
    expect(names(secretPrinter)).toEqual(['Name', 'Type', 'Data', 'Age']);
    const secret = {
      metadata: meta('db', '2026-01-10T09:30:00Z'),
      type: 'kubernetes.io/basic-auth',
      data: { username: 'YWRtaW4=', password: 'cw==' },
      stringData: { password: 'new', extra: 'x' },
    };
    expect(secretPrinter.row(secret, now).cells).toEqual(['db', 'kubernetes.io/basic-auth', 3, '150m']);
  });
});

describe('ServiceAccount', () => {
  it('prints NAME SECRETS AGE', () => {
    expect(names(serviceAccountPrinter)).toEqual(['Name', 'Secrets', 'Age']);
    const sa = { metadata: meta('builder'), secrets: [{ name: 'builder-token' }] };
    expect(serviceAccountPrinter.row(sa, now).cells).toEqual(['builder', 1, '5s']);
    expect(serviceAccountPrinter.row({ metadata: meta('default') }, now).cells).toEqual(['default', 0, '5s']);
  });
});

describe('Service', () => {
  it('prints NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE, + SELECTOR wide', () => {
    expect(names(servicePrinter)).toEqual([
      'Name',
      'Type',
      'Cluster-IP',
      'External-IP',
      'Port(s)',
      'Age',
      '(Selector)',
    ]);
    const svc = {
      metadata: meta('web', '2026-01-09T11:00:00Z'),
      spec: {
        type: 'ClusterIP',
        clusterIP: '10.96.0.12',
        clusterIPs: ['10.96.0.12', 'fd00::12'],
        ports: [
          { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
          { name: 'dns', port: 53, protocol: 'UDP' },
        ],
        selector: { tier: 'front', app: 'web' },
      },
    };
    expect(servicePrinter.row(svc, now).cells).toEqual([
      'web',
      'ClusterIP',
      '10.96.0.12',
      '<none>',
      '80/TCP,53/UDP',
      '25h',
      'app=web,tier=front',
    ]);
  });

  it('shows node ports, external IPs, load balancer addresses and headless services', () => {
    const nodePort = {
      metadata: meta('np'),
      spec: {
        type: 'NodePort',
        clusterIPs: ['10.96.1.1'],
        externalIPs: ['1.2.3.4'],
        ports: [{ port: 80, nodePort: 30080 }],
      },
    };
    expect(servicePrinter.row(nodePort, now).cells.slice(1, 5)).toEqual([
      'NodePort',
      '10.96.1.1',
      '1.2.3.4',
      '80:30080/TCP',
    ]);

    const pending = {
      metadata: meta('lb'),
      spec: {
        type: 'LoadBalancer',
        clusterIP: '10.96.1.2',
        ports: [{ port: 443, nodePort: 31443, protocol: 'TCP' }],
      },
    };
    expect(servicePrinter.row(pending, now).cells.slice(1, 5)).toEqual([
      'LoadBalancer',
      '10.96.1.2',
      '<pending>',
      '443:31443/TCP',
    ]);

    const ready = {
      ...pending,
      spec: { ...pending.spec, externalIPs: ['9.9.9.9'] },
      status: {
        loadBalancer: { ingress: [{ ip: '5.6.7.8' }, { hostname: 'lb.example.com' }, { ip: '5.6.7.8' }] },
      },
    };
    expect(servicePrinter.row(ready, now).cells[3]).toBe('5.6.7.8,lb.example.com,9.9.9.9');

    const headless = { metadata: meta('db'), spec: { clusterIP: 'None', ports: [{ port: 5432 }] } };
    expect(servicePrinter.row(headless, now).cells).toEqual([
      'db',
      'ClusterIP',
      'None',
      '<none>',
      '5432/TCP',
      '5s',
      '<none>',
    ]);

    const external = {
      metadata: meta('ext'),
      spec: { type: 'ExternalName', externalName: 'db.example.com' },
    };
    expect(servicePrinter.row(external, now).cells.slice(1, 5)).toEqual([
      'ExternalName',
      '<none>',
      'db.example.com',
      '<none>',
    ]);
  });
});
