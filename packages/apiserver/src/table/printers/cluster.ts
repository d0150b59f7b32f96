/**
 * Printers of coordination.k8s.io Lease, apiextensions.k8s.io CustomResourceDefinition and the
 * admissionregistration.k8s.io kinds.
 */

import * as doc from '../descriptions.ts';
import { CREATION_TIMESTAMP } from '../descriptions.ts';
import { arr, at, type Json, obj, str } from '../fields.ts';
import { AGE_COLUMN, column, NAME_COLUMN, type Printer } from '../printer.ts';
import { goLabelSelectorDebugString } from '../selectors.ts';
import { ageSince, formatRfc3339 } from '../time.ts';

const name = (o: Json) => str(at(o, 'metadata', 'name'));
const age = (o: Json, nowMs: number) => ageSince(at(o, 'metadata', 'creationTimestamp'), nowMs);

/** NAME HOLDER AGE. */
export const leasePrinter: Printer = {
  columns: [NAME_COLUMN, column('Holder', 'string', doc.LEASE_HOLDER_IDENTITY), AGE_COLUMN],
  row: (o, nowMs) => ({ cells: [name(o), str(at(o, 'spec', 'holderIdentity')), age(o, nowMs)] }),
};

/**
 * NAME CREATED AT: kube-apiserver's default table convertor, which serves CustomResourceDefinitions.
 * CREATED AT is a `date` column holding the RFC 3339 creation time in UTC (kubectl shows it as is).
 */
export const defaultConvertorPrinter: Printer = {
  columns: [NAME_COLUMN, column('Created At', 'date', CREATION_TIMESTAMP)],
  row: (o) => ({ cells: [name(o), formatRfc3339(at(o, 'metadata', 'creationTimestamp'))] }),
};

/** NAME WEBHOOKS AGE, for Mutating- and ValidatingWebhookConfigurations. */
export const webhookConfigurationPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column(
      'Webhooks',
      'integer',
      'Webhooks indicates the number of webhooks registered in this configuration',
    ),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => ({ cells: [name(o), arr(o.webhooks).length, age(o, nowMs)] }),
};

/** NAME VALIDATIONS PARAMKIND AGE. */
export const validatingAdmissionPolicyPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column(
      'Validations',
      'integer',
      'Validations indicates the number of validation rules defined in this configuration',
    ),
    column(
      'ParamKind',
      'string',
      'ParamKind specifies the kind of resources used to parameterize this policy',
    ),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => {
    const paramKind = at(o, 'spec', 'paramKind');
    const kind =
      typeof paramKind === 'object' && paramKind !== null
        ? `${str(at(paramKind, 'apiVersion'))}/${str(at(paramKind, 'kind'))}`
        : '<unset>';
    return { cells: [name(o), arr(at(o, 'spec', 'validations')).length, kind, age(o, nowMs)] };
  },
};

/** NAME POLICYNAME PARAMREF AGE. */
export const validatingAdmissionPolicyBindingPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column(
      'PolicyName',
      'string',
      'PolicyName indicates the policy definition which the policy binding binded to',
    ),
    column('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => {
    const paramRef = at(o, 'spec', 'paramRef');
    let param = '<unset>';
    if (typeof paramRef === 'object' && paramRef !== null) {
      const refName = str(at(paramRef, 'name'));
      const namespace = str(at(paramRef, 'namespace'));
      const selector = at(paramRef, 'selector');
      if (refName !== '') param = namespace === '' ? `*/${refName}` : `${namespace}/${refName}`;
      else if (typeof selector === 'object' && selector !== null)
        param = goLabelSelectorDebugString(obj(selector));
    }
    return { cells: [name(o), str(at(o, 'spec', 'policyName')), param, age(o, nowMs)] };
  },
};
