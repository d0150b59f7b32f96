/**
 * kubectl's server-side printers for the built-in kinds the server serves, by group and kind
 * (kube-apiserver 1.32's `pkg/printers/internalversion`, rewritten over JSON objects).
 *
 * @module
 */
import type { Printer } from '../printer.ts';
import {
  defaultConvertorPrinter,
  leasePrinter,
  validatingAdmissionPolicyBindingPrinter,
  validatingAdmissionPolicyPrinter,
  webhookConfigurationPrinter,
} from './cluster.ts';
import {
  configMapPrinter,
  namespacePrinter,
  secretPrinter,
  serviceAccountPrinter,
  servicePrinter,
} from './core.ts';
import { coreEventPrinter, eventsEventPrinter } from './event.ts';
import { podPrinter } from './pod.ts';
import { deploymentPrinter, jobPrinter, replicaSetPrinter, statefulSetPrinter } from './workloads.ts';

const PRINTERS: ReadonlyMap<string, Printer> = new Map([
  ['/Namespace', namespacePrinter],
  ['/ConfigMap', configMapPrinter],
  ['/Secret', secretPrinter],
  ['/ServiceAccount', serviceAccountPrinter],
  ['/Service', servicePrinter],
  ['/Pod', podPrinter],
  ['/Event', coreEventPrinter],
  ['apps/Deployment', deploymentPrinter],
  ['apps/ReplicaSet', replicaSetPrinter],
  ['apps/StatefulSet', statefulSetPrinter],
  ['batch/Job', jobPrinter],
  ['events.k8s.io/Event', eventsEventPrinter],
  ['coordination.k8s.io/Lease', leasePrinter],
  ['apiextensions.k8s.io/CustomResourceDefinition', defaultConvertorPrinter],
  ['admissionregistration.k8s.io/MutatingWebhookConfiguration', webhookConfigurationPrinter],
  ['admissionregistration.k8s.io/ValidatingWebhookConfiguration', webhookConfigurationPrinter],
  ['admissionregistration.k8s.io/ValidatingAdmissionPolicy', validatingAdmissionPolicyPrinter],
  ['admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding', validatingAdmissionPolicyBindingPrinter],
]);

/** The printer of a built-in kind (`group` '' for core), or undefined for other kinds. */
export function builtinPrinter(group: string, kind: string): Printer | undefined {
  return PRINTERS.get(`${group}/${kind}`);
}
