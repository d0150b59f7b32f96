import type { KubeObject, StatusCause } from '@converge/runtime';
import type { JsonObject, MutableObject, Strategy } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { asObject, ensureObject, getPath, setDefault } from './json-util.ts';
import {
  dnsLabel,
  ipAddress,
  items,
  labelSelector,
  portName,
  portNumber,
  portNumberOrName,
  protocol,
  requiredString,
  sameJson,
} from './strategy-rules.ts';

/** Strategies of Services, Endpoints, EndpointSlices and the networking.k8s.io kinds. */

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

function clusterIp(random: () => number): string {
  const n = 2 + Math.floor(random() * 0xffffd);
  return `10.${96 + (n >> 16)}.${(n >> 8) & 0xff}.${n & 0xff}`;
}

function nodePort(random: () => number): number {
  return 30000 + Math.floor(random() * 2768);
}

function servicePortCauses(spec: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const ports = items(spec.ports);
  const names = new Set<string>();
  const keys = new Set<string>();
  for (const [port, i] of ports) {
    const at = `spec.ports[${i}]`;
    if (ports.length > 1 || port.name !== undefined) {
      if (typeof port.name !== 'string' || port.name === '') {
        if (ports.length > 1) causes.push(cause.required(`${at}.name`));
      } else {
        causes.push(...dnsLabel(`${at}.name`, port.name));
        if (names.has(port.name)) causes.push(cause.duplicate(`${at}.name`, port.name));
        names.add(port.name);
      }
    }
    causes.push(...portNumber(`${at}.port`, port.port));
    causes.push(...protocol(`${at}.protocol`, port.protocol));
    if (port.targetPort !== undefined && port.targetPort !== 0)
      causes.push(...portNumberOrName(`${at}.targetPort`, port.targetPort));
    if (port.nodePort !== undefined) {
      if (spec.type === 'ClusterIP' || spec.type === 'ExternalName')
        causes.push(
          cause.forbidden(`${at}.nodePort`, `may not be used when \`type\` is '${String(spec.type)}'`),
        );
      else causes.push(...portNumber(`${at}.nodePort`, port.nodePort));
    }
    const key = `${String(port.protocol)}/${String(port.port)}`;
    if (keys.has(key)) causes.push(cause.duplicate(at, { port: port.port, protocol: port.protocol }));
    keys.add(key);
  }
  return causes;
}

function prepareService(object: MutableObject, random: () => number, old?: KubeObject): StatusCause[] {
  const spec = ensureObject(object, 'spec');
  const previous = asObject(getPath(old, 'spec')) ?? {};
  setDefault(spec, 'type', 'ClusterIP');
  setDefault(spec, 'sessionAffinity', 'None');
  const causes: StatusCause[] = [];
  if (!SERVICE_TYPES.includes(String(spec.type)))
    causes.push(cause.unsupported('spec.type', spec.type, SERVICE_TYPES));
  for (const [port] of items(spec.ports)) {
    setDefault(port, 'protocol', 'TCP');
    setDefault(port, 'targetPort', port.port);
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
      const kept = items(previous.ports).find(([p]) => p.port === port.port && p.protocol === port.protocol);
      setDefault(port, 'nodePort', kept?.[0].nodePort ?? nodePort(random));
    }
  }
  if (spec.type === 'ExternalName') {
    if (typeof spec.externalName !== 'string' || spec.externalName === '')
      causes.push(cause.required('spec.externalName'));
    if (spec.clusterIP !== undefined && spec.clusterIP !== '')
      causes.push(cause.forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
  } else {
    for (const field of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy'])
      if (spec[field] === undefined && previous[field] !== undefined) spec[field] = previous[field];
    if (spec.clusterIP === '') delete spec.clusterIP;
    setDefault(spec, 'clusterIP', clusterIp(random));
    setDefault(spec, 'clusterIPs', [spec.clusterIP]);
    if (spec.clusterIP !== 'None') causes.push(...ipAddress('spec.clusterIPs[0]', spec.clusterIP));
    setDefault(spec, 'ipFamilies', ['IPv4']);
    setDefault(spec, 'ipFamilyPolicy', 'SingleStack');
    setDefault(spec, 'internalTrafficPolicy', 'Cluster');
    if (spec.type !== 'ClusterIP') setDefault(spec, 'externalTrafficPolicy', 'Cluster');
    if (spec.type === 'LoadBalancer') setDefault(spec, 'allocateLoadBalancerNodePorts', true);
    if (spec.clusterIP !== 'None' && items(spec.ports).length === 0)
      causes.push(cause.required('spec.ports'));
  }
  const affinities = ['ClientIP', 'None'];
  if (!affinities.includes(String(spec.sessionAffinity)))
    causes.push(cause.unsupported('spec.sessionAffinity', spec.sessionAffinity, affinities));
  causes.push(...servicePortCauses(spec));
  return causes;
}

/** core/v1 Service: type ClusterIP, a cluster IP, node ports, port defaults and checks; IPs fixed. */
export const serviceStrategy: Strategy = {
  allowCreateOnUpdate: true,
  prepareForCreate(object, context) {
    const causes = prepareService(object, context.random);
    object.status = { loadBalancer: {} };
    return causes;
  },
  prepareForUpdate(object, old, context) {
    const causes = prepareService(object, context.random, old);
    const spec = asObject(object.spec) ?? {};
    const previous = asObject(getPath(old, 'spec')) ?? {};
    const toOrFromExternal = spec.type === 'ExternalName' || previous.type === 'ExternalName';
    if (!toOrFromExternal && !sameJson(spec.clusterIPs, previous.clusterIPs))
      causes.push(cause.invalid('spec.clusterIPs[0]', spec.clusterIPs ?? [], 'may not change once set'));
    return causes;
  },
};

/** core/v1 Endpoints: PUT creates; ports default to TCP; addresses have IPs. */
export const endpointsStrategy: Strategy = {
  allowCreateOnUpdate: true,
  prepareForCreate: (object) => endpointsCauses(object),
  prepareForUpdate: (object) => endpointsCauses(object),
};

function endpointsCauses(object: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [subset, i] of items(object.subsets)) {
    const at = `subsets[${i}]`;
    for (const kind of ['addresses', 'notReadyAddresses'])
      for (const [address, j] of items(subset[kind])) {
        const field = `${at}.${kind}[${j}].ip`;
        causes.push(
          ...(address.ip === undefined || address.ip === ''
            ? requiredString(field, address.ip)
            : ipAddress(field, address.ip)),
        );
      }
    for (const [port, j] of items(subset.ports)) {
      setDefault(port, 'protocol', 'TCP');
      if (port.name !== undefined && port.name !== '')
        causes.push(...dnsLabel(`${at}.ports[${j}].name`, port.name));
      causes.push(...portNumber(`${at}.ports[${j}].port`, port.port));
      causes.push(...protocol(`${at}.ports[${j}].protocol`, port.protocol));
    }
  }
  return causes;
}

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];

/** discovery.k8s.io/v1 EndpointSlice: addressType required and fixed; ports default to TCP. */
export const endpointSliceStrategy: Strategy = {
  prepareForCreate: (object) => endpointSliceCauses(object),
  prepareForUpdate(object, old) {
    const causes = endpointSliceCauses(object);
    const previous = (old as unknown as JsonObject).addressType;
    if (!sameJson(object.addressType, previous))
      causes.push(cause.invalid('addressType', object.addressType ?? '', 'field is immutable'));
    return causes;
  },
};

function endpointSliceCauses(object: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  if (object.addressType === undefined || object.addressType === '')
    causes.push(cause.required('addressType'));
  else if (!ADDRESS_TYPES.includes(String(object.addressType)))
    causes.push(cause.unsupported('addressType', object.addressType, ADDRESS_TYPES));
  if (!Array.isArray(object.endpoints)) object.endpoints = [];
  for (const [endpoint, i] of items(object.endpoints)) {
    const addresses = Array.isArray(endpoint.addresses) ? endpoint.addresses : [];
    if (addresses.length === 0)
      causes.push(cause.required(`endpoints[${i}].addresses`, 'must contain at least 1 address'));
    if (addresses.length > 100) causes.push(cause.tooLong(`endpoints[${i}].addresses`, 100));
  }
  for (const [port, i] of items(object.ports)) {
    setDefault(port, 'protocol', 'TCP');
    setDefault(port, 'name', '');
    if (port.port !== undefined) causes.push(...portNumber(`ports[${i}].port`, port.port));
    causes.push(...protocol(`ports[${i}].protocol`, port.protocol));
    if (port.name !== '') causes.push(...dnsLabel(`ports[${i}].name`, port.name));
  }
  return causes;
}

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];

function backendCauses(at: string, backend: unknown): StatusCause[] {
  const object = asObject(backend);
  if (object === undefined) return [cause.required(at)];
  const service = asObject(object.service);
  const resource = asObject(object.resource);
  if (service !== undefined && resource !== undefined)
    return [cause.invalid(at, '', 'cannot set both resource and service backends')];
  if (service === undefined && resource === undefined)
    return [cause.invalid(at, '', 'resource or service backend is required')];
  if (service === undefined) return [];
  const causes = dnsLabel(`${at}.service.name`, service.name);
  const port = asObject(service.port);
  if (port === undefined || (port.name === undefined && port.number === undefined))
    causes.push(cause.required(`${at}.service.port`, 'port name or number is required'));
  else if (port.name !== undefined && port.number !== undefined)
    causes.push(cause.invalid(`${at}.service.port`, port, 'cannot set both port name & port number'));
  else if (port.number !== undefined) causes.push(...portNumber(`${at}.service.port.number`, port.number));
  else causes.push(...portName(`${at}.service.port.name`, String(port.name)));
  return causes;
}

function ingressCauses(object: JsonObject): StatusCause[] {
  const spec = asObject(object.spec) ?? {};
  const causes: StatusCause[] = [];
  const rules = items(spec.rules);
  if (spec.defaultBackend === undefined && rules.length === 0)
    causes.push(cause.invalid('spec.rules', [], 'either `defaultBackend` or `rules` must be specified'));
  if (spec.defaultBackend !== undefined)
    causes.push(...backendCauses('spec.defaultBackend', spec.defaultBackend));
  for (const [rule, i] of rules) {
    if (typeof rule.host === 'string' && rule.host !== '') {
      const host = rule.host.startsWith('*.') ? rule.host.slice(2) : rule.host;
      if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(host))
        causes.push(
          cause.invalid(
            `spec.rules[${i}].host`,
            rule.host,
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
          ),
        );
    }
    const http = asObject(rule.http);
    if (http === undefined) continue;
    const paths = items(http.paths);
    if (paths.length === 0) causes.push(cause.required(`spec.rules[${i}].http.paths`));
    for (const [path, j] of paths) {
      const at = `spec.rules[${i}].http.paths[${j}]`;
      if (path.pathType === undefined)
        causes.push(cause.required(`${at}.pathType`, 'pathType must be specified'));
      else if (!PATH_TYPES.includes(String(path.pathType)))
        causes.push(cause.unsupported(`${at}.pathType`, path.pathType, PATH_TYPES));
      if (path.pathType === 'Exact' || path.pathType === 'Prefix') {
        if (typeof path.path !== 'string' || !path.path.startsWith('/'))
          causes.push(cause.invalid(`${at}.path`, path.path ?? '', 'must be an absolute path'));
      }
      causes.push(...backendCauses(`${at}.backend`, path.backend));
    }
  }
  return causes;
}

/** networking.k8s.io/v1 Ingress: rules or a default backend; paths with a type; one backend each. */
export const ingressStrategy: Strategy = {
  prepareForCreate: (object) => ingressCauses(object),
  prepareForUpdate: (object) => ingressCauses(object),
};

/** networking.k8s.io/v1 IngressClass: a controller, which never changes. */
export const ingressClassStrategy: Strategy = {
  prepareForCreate: (object) => requiredString('spec.controller', getPath(object, 'spec.controller')),
  prepareForUpdate(object, old) {
    const causes = requiredString('spec.controller', getPath(object, 'spec.controller'));
    if (!sameJson(getPath(object, 'spec.controller'), getPath(old, 'spec.controller')))
      causes.push(
        cause.invalid('spec.controller', getPath(object, 'spec.controller') ?? '', 'field is immutable'),
      );
    return causes;
  },
};

function networkPolicyCauses(object: JsonObject): StatusCause[] {
  const spec = ensureObject(object, 'spec');
  setDefault(spec, 'podSelector', {});
  const causes = labelSelector('spec.podSelector', spec.podSelector);
  for (const direction of ['ingress', 'egress'])
    for (const [rule, i] of items(spec[direction]))
      for (const [port, j] of items(rule.ports)) {
        setDefault(port, 'protocol', 'TCP');
        const at = `spec.${direction}[${i}].ports[${j}]`;
        causes.push(...protocol(`${at}.protocol`, port.protocol));
        if (port.port !== undefined) causes.push(...portNumberOrName(`${at}.port`, port.port));
      }
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    const egress = Array.isArray(spec.egress) && spec.egress.length > 0;
    spec.policyTypes = egress ? ['Ingress', 'Egress'] : ['Ingress'];
  }
  for (const [i, type] of (spec.policyTypes as unknown[]).entries())
    if (type !== 'Ingress' && type !== 'Egress')
      causes.push(cause.unsupported(`spec.policyTypes[${i}]`, type, ['Egress', 'Ingress']));
  return causes;
}

/** networking.k8s.io/v1 NetworkPolicy: policyTypes from the rules, TCP ports; selectors and ports checked. */
export const networkPolicyStrategy: Strategy = {
  prepareForCreate: (object) => networkPolicyCauses(object),
  prepareForUpdate: (object) => networkPolicyCauses(object),
};
