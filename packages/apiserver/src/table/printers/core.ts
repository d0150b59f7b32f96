/** Printers of core/v1 Namespace, ConfigMap, Secret, ServiceAccount and Service. */
import * as doc from '../descriptions.ts';
import { arr, at, int, obj, objects, size, str } from '../fields.ts';
import { compareUtf8 } from '../go-format.ts';
import { AGE_COLUMN, column, NAME_COLUMN, type Printer } from '../printer.ts';
import { formatLabels } from '../selectors.ts';
import { ageSince } from '../time.ts';

const age = (object: unknown, nowMs: number) => ageSince(at(object, 'metadata', 'creationTimestamp'), nowMs);
const name = (object: unknown) => str(at(object, 'metadata', 'name'));

/** NAME STATUS AGE; status is `status.phase`. */
export const namespacePrinter: Printer = {
  columns: [NAME_COLUMN, column('Status', 'string', 'The status of the namespace'), AGE_COLUMN],
  row: (o, now) => ({ cells: [name(o), str(at(o, 'status', 'phase')), age(o, now)] }),
};

/** NAME DATA AGE; data counts `data` and `binaryData` keys. */
export const configMapPrinter: Printer = {
  columns: [NAME_COLUMN, column('Data', 'string', doc.CONFIG_MAP_DATA), AGE_COLUMN],
  row: (o, now) => ({ cells: [name(o), size(o.data) + size(o.binaryData), age(o, now)] }),
};

/**
 * NAME TYPE DATA AGE. DATA counts the keys of `data` and `stringData` together, as the stored
 * Secret has them merged (the apiserver folds `stringData` into `data` on write).
 */
export const secretPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Type', 'string', doc.SECRET_TYPE),
    column('Data', 'string', doc.SECRET_DATA),
    AGE_COLUMN,
  ],
  row: (o, now) => {
    const keys = new Set([...Object.keys(obj(o.data)), ...Object.keys(obj(o.stringData))]);
    return { cells: [name(o), str(o.type), keys.size, age(o, now)] };
  },
};

/** NAME SECRETS AGE. */
export const serviceAccountPrinter: Printer = {
  columns: [NAME_COLUMN, column('Secrets', 'string', doc.SERVICE_ACCOUNT_SECRETS), AGE_COLUMN],
  row: (o, now) => ({ cells: [name(o), arr(o.secrets).length, age(o, now)] }),
};

/**
 * NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE, + SELECTOR with `-o wide`. A missing `type`
 * counts as ClusterIP and a missing port protocol as TCP: the apiserver defaults both on write.
 */
export const servicePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Type', 'string', doc.SERVICE_TYPE),
    column('Cluster-IP', 'string', doc.SERVICE_CLUSTER_IP),
    column('External-IP', 'string', doc.SERVICE_EXTERNAL_IPS),
    column('Port(s)', 'string', doc.SERVICE_PORTS),
    AGE_COLUMN,
    column('Selector', 'string', doc.SERVICE_SELECTOR, { priority: 1 }),
  ],
  row: (o, now) => {
    const spec = at(o, 'spec');
    const type = str(at(spec, 'type')) || 'ClusterIP';
    const clusterIPs = arr(at(spec, 'clusterIPs')).map(str);
    const clusterIP = clusterIPs[0] ?? (str(at(spec, 'clusterIP')) || '<none>');
    const ports = objects(at(spec, 'ports'))
      .map((p) => {
        const protocol = str(p.protocol) || 'TCP';
        const nodePort = int(p.nodePort);
        return nodePort > 0 ? `${int(p.port)}:${nodePort}/${protocol}` : `${int(p.port)}/${protocol}`;
      })
      .join(',');
    return {
      cells: [
        name(o),
        type,
        clusterIP,
        externalIP(type, o),
        ports === '' ? '<none>' : ports,
        age(o, now),
        formatLabels(at(spec, 'selector')),
      ],
    };
  },
};

/** kubectl's `getServiceExternalIP` for wide output (load balancer addresses are not clipped). */
function externalIP(type: string, service: unknown): string {
  const externalIPs = arr(at(service, 'spec', 'externalIPs')).map(str);
  switch (type) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = objects(at(service, 'status', 'loadBalancer', 'ingress'))
        .map((i) => str(i.ip) || str(i.hostname))
        .filter((address) => address !== '');
      const addresses = [...new Set(ingress)].sort(compareUtf8);
      if (externalIPs.length > 0) return [...addresses, ...externalIPs].join(',');
      return addresses.length > 0 ? addresses.join(',') : '<pending>';
    }
    case 'ExternalName':
      return str(at(service, 'spec', 'externalName'));
    default:
      return '<unknown>';
  }
}
