/**
 * Printers of core/v1 Endpoints, discovery.k8s.io/v1 EndpointSlice and the networking.k8s.io/v1
 * kinds (kube-apiserver 1.32's columns and cells).
 */
import { arr, at, type Json, obj, objects, str } from '../fields.ts';
import { AGE_COLUMN, column, NAME_COLUMN, type Printer } from '../printer.ts';
import { formatLabelSelector } from '../selectors.ts';
import { ageSince } from '../time.ts';

const name = (o: Json) => str(at(o, 'metadata', 'name'));
const age = (o: Json, nowMs: number) => ageSince(at(o, 'metadata', 'creationTimestamp'), nowMs);

const MAX_SHOWN = 3;

/** The first three entries comma-joined, then ` + N more...`; `empty` when there are none. */
function firstThree(list: readonly string[], empty: string): string {
  if (list.length === 0) return empty;
  const shown = list.slice(0, MAX_SHOWN).join(',');
  return list.length > MAX_SHOWN ? `${shown} + ${list.length - MAX_SHOWN} more...` : shown;
}

/** `ip:port` per port and address of every subset (`ip` when a subset has no ports). */
function endpointAddresses(o: Json): string[] {
  const out: string[] = [];
  for (const subset of objects(o.subsets)) {
    const addresses = objects(subset.addresses).map((a) => str(a.ip));
    const ports = objects(subset.ports);
    if (ports.length === 0) out.push(...addresses);
    else for (const port of ports) for (const ip of addresses) out.push(`${ip}:${String(port.port ?? 0)}`);
  }
  return out;
}

/** NAME ENDPOINTS AGE. */
export const endpointsPrinter: Printer = {
  columns: [NAME_COLUMN, column('Endpoints', 'string', 'Endpoints of the service'), AGE_COLUMN],
  row: (o, nowMs) => ({ cells: [name(o), firstThree(endpointAddresses(o), '<none>'), age(o, nowMs)] }),
};

/** NAME ADDRESSTYPE PORTS ENDPOINTS AGE. */
export const endpointSlicePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('AddressType', 'string', 'The type of addresses held by the slice.'),
    column('Ports', 'string', 'The ports of the slice.'),
    column('Endpoints', 'string', 'The addresses of the slice.'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => {
    const ports = objects(o.ports).map((p) => (typeof p.port === 'number' ? String(p.port) : '<unset>'));
    const addresses = objects(o.endpoints).flatMap((e) => arr(e.addresses).map(str));
    return {
      cells: [
        name(o),
        str(o.addressType),
        ports.length === 0 ? '<unset>' : ports.join(','),
        firstThree(addresses, '<unset>'),
        age(o, nowMs),
      ],
    };
  },
};

function ingressHosts(o: Json): string {
  const hosts = objects(at(o, 'spec', 'rules'))
    .map((r) => str(r.host))
    .filter((h) => h !== '');
  return firstThree(hosts, '*');
}

function loadBalancerAddresses(o: Json): string {
  const addresses = objects(at(o, 'status', 'loadBalancer', 'ingress')).flatMap((i) =>
    [str(i.ip), str(i.hostname)].filter((a) => a !== ''),
  );
  return addresses.join(',');
}

/** NAME CLASS HOSTS ADDRESS PORTS AGE. */
export const ingressPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Class', 'string', 'The name of the IngressClass resource.'),
    column('Hosts', 'string', 'Hosts that incoming requests are matched against.'),
    column('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
    column('Ports', 'string', 'Ports of TLS configurations that open'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => {
    const className = str(at(o, 'spec', 'ingressClassName'));
    return {
      cells: [
        name(o),
        className === '' ? '<none>' : className,
        ingressHosts(o),
        loadBalancerAddresses(o),
        arr(at(o, 'spec', 'tls')).length > 0 ? '80, 443' : '80',
        age(o, nowMs),
      ],
    };
  },
};

/** NAME CONTROLLER PARAMETERS AGE. */
export const ingressClassPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Controller', 'string', 'Controller that is responsible for handling this class'),
    column('Parameters', 'string', 'A reference to a resource with additional parameters'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => {
    const params = at(o, 'spec', 'parameters');
    let text = '<none>';
    if (typeof params === 'object' && params !== null) {
      const p = obj(params);
      const group = str(p.apiGroup);
      text = `${group === '' ? str(p.kind) : `${str(p.kind)}.${group}`}/${str(p.name)}`;
    }
    return { cells: [name(o), str(at(o, 'spec', 'controller')), text, age(o, nowMs)] };
  },
};

/** NAME POD-SELECTOR AGE. */
export const networkPolicyPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Pod-Selector', 'string', 'Selects the pods to which this NetworkPolicy object applies.'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => ({ cells: [name(o), formatLabelSelector(at(o, 'spec', 'podSelector')), age(o, nowMs)] }),
};
