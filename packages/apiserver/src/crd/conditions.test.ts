import { describe, expect, it } from 'vitest';
import { crdStatus, establishedConditions, takenNames, terminatingConditions } from './conditions.ts';
import { CrdInvalidError } from './errors.ts';
import { databaseCrd, variant, websiteCrd } from './testdata/crds.ts';

const NOW = '2026-05-01T10:00:00Z';
const LATER = '2026-05-01T11:00:00Z';

describe('establishedConditions', () => {
  it("accepts the names and establishes a new CRD with kube's reasons and messages", () => {
    expect(establishedConditions(websiteCrd, NOW)).toEqual([
      {
        type: 'NamesAccepted',
        status: 'True',
        lastTransitionTime: NOW,
        reason: 'NoConflicts',
        message: 'no conflicts found',
      },
      {
        type: 'Established',
        status: 'True',
        lastTransitionTime: NOW,
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
      },
    ]);
  });

  it('keeps the transition time when the status does not change', () => {
    const crd = { ...websiteCrd, status: { conditions: establishedConditions(websiteCrd, NOW) } };
    expect(establishedConditions(crd, LATER).map((c) => c.lastTransitionTime)).toEqual([NOW, NOW]);
  });

  it('refuses a plural another CRD of the group already has', () => {
    const other = variant(websiteCrd, (d) => {
      d.metadata.name = 'sites.example.com';
      d.spec.names = { plural: 'sites', kind: 'Site' };
      d.status = {
        acceptedNames: { plural: 'websites', singular: 'website', kind: 'Website', listKind: 'WebsiteList' },
      };
    });
    const taken = takenNames([other], 'example.com');
    expect(establishedConditions(websiteCrd, NOW, taken)).toEqual([
      {
        type: 'NamesAccepted',
        status: 'False',
        lastTransitionTime: NOW,
        reason: 'ListKindConflict',
        message: '"WebsiteList" is already in use',
      },
      {
        type: 'Established',
        status: 'False',
        lastTransitionTime: NOW,
        reason: 'NotAccepted',
        message: 'not all names are accepted',
      },
    ]);
  });

  it('reports a short-name conflict and keeps an established CRD established', () => {
    const established = { ...websiteCrd, status: { conditions: establishedConditions(websiteCrd, NOW) } };
    const taken = { resources: new Set(['ws']), kinds: new Set<string>() };
    const conditions = establishedConditions(established, LATER, taken);
    expect(conditions[0]).toEqual({
      type: 'NamesAccepted',
      status: 'False',
      lastTransitionTime: LATER,
      reason: 'ShortNamesConflict',
      message: '"ws" is already in use',
    });
    expect(conditions[1]?.status).toBe('True');
  });

  it('ignores names of CRDs in other groups', () => {
    expect(
      takenNames(
        [databaseCrd, { ...websiteCrd, status: { acceptedNames: websiteCrd.spec.names } }],
        'data.example.org',
      ),
    ).toEqual({
      resources: new Set(),
      kinds: new Set(),
    });
  });

  it('refuses a CRD that does not validate', () => {
    expect(() =>
      establishedConditions(
        variant(websiteCrd, (d) => (d.spec.group = 'nodot')),
        NOW,
      ),
    ).toThrow(CrdInvalidError);
  });
});

describe('crdStatus', () => {
  it('reports accepted names, conditions and the stored version', () => {
    const status = crdStatus(websiteCrd, NOW);
    expect(status.acceptedNames).toEqual({
      plural: 'websites',
      singular: 'website',
      kind: 'Website',
      listKind: 'WebsiteList',
      shortNames: ['ws'],
      categories: ['all'],
    });
    expect(status.storedVersions).toEqual(['v1']);
    expect(status.conditions?.map((c) => c.type)).toEqual(['NamesAccepted', 'Established']);
  });
});

describe('terminatingConditions', () => {
  it('adds Terminating True while the objects are deleted', () => {
    expect(terminatingConditions(websiteCrd, NOW)).toEqual([
      {
        type: 'Terminating',
        status: 'True',
        lastTransitionTime: NOW,
        reason: 'InstanceDeletionInProgress',
        message: 'CustomResource deletion is in progress',
      },
    ]);
  });
});
