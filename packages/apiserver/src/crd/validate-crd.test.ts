import { describe, expect, it } from 'vitest';
import { CrdDecodeError } from './errors.ts';
import { causeText } from './field-errors.ts';
import { databaseCrd, pipelineCrd, variant, websiteCrd } from './testdata/crds.ts';
import type { CustomResourceDefinition } from './types.ts';
import { validateCrd, validateCrdUpdate } from './validate-crd.ts';

const texts = (crd: unknown): string[] => validateCrd(crd).map(causeText);
const SCHEMA = 'spec.validation.openAPIV3Schema';
const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

describe('validateCrd accepts well-formed CRDs', () => {
  it('accepts a single-version CRD with status, scale, printer columns, selectable fields and defaults', () => {
    expect(validateCrd(websiteCrd)).toEqual([]);
  });

  it('accepts a cluster-scoped CRD with two versions whose schemas differ, one deprecated', () => {
    expect(validateCrd(databaseCrd)).toEqual([]);
  });

  it('accepts embedded resources, preserve-unknown-fields and defaults inside defaults', () => {
    expect(validateCrd(pipelineCrd)).toEqual([]);
  });

  it('ignores a status sent by the client, as create resets it', () => {
    const crd = {
      ...websiteCrd,
      status: { storedVersions: ['v9'], acceptedNames: { plural: 'BAD', kind: 'x' } },
    };
    expect(validateCrd(crd)).toEqual([]);
  });
});

describe('validateCrd reports the names and versions with kube-apiserver messages', () => {
  it('requires the metadata name to be <plural>.<group>', () => {
    expect(texts(variant(websiteCrd, (d) => (d.metadata.name = 'web.example.com')))).toEqual([
      'metadata.name: Invalid value: "web.example.com": must be spec.names.plural+"."+spec.group',
    ]);
  });

  it('requires a name and reports a missing group, scope, plural and kind', () => {
    const crd = variant(websiteCrd, (d) => {
      d.metadata = {};
      d.spec.group = '';
      delete d.spec.scope;
      d.spec.names = {};
    });
    expect(texts(crd)).toEqual([
      'metadata.name: Required value: name or generateName is required',
      'spec.group: Required value',
      'spec.scope: Required value',
      'spec.names.plural: Required value',
      'spec.names.singular: Required value',
      'spec.names.kind: Required value',
      'spec.names.listKind: Required value',
    ]);
  });

  it('wants a group with a dot and a supported scope', () => {
    const crd = variant(websiteCrd, (d) => {
      d.metadata.name = 'websites.example';
      d.spec.group = 'example';
      d.spec.scope = 'Global';
    });
    expect(texts(crd)).toEqual([
      'spec.group: Invalid value: "example": should be a domain with at least one dot',
      'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
    ]);
  });

  it('checks names against DNS-1035 and keeps kind and listKind apart', () => {
    const crd = variant(websiteCrd, (d) => {
      d.metadata.name = 'Websites.example.com';
      d.spec.names = { plural: 'Websites', kind: 'Web_site', listKind: 'Web_site', shortNames: ['w s'] };
    });
    expect(texts(crd)).toEqual([
      "metadata.name: Invalid value: \"Websites.example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      `spec.names.plural: Invalid value: "Websites": ${DNS1035}`,
      `spec.names.singular: Invalid value: "web_site": ${DNS1035}`,
      `spec.names.kind: Invalid value: "Web_site": may have mixed case, but should otherwise match: ${DNS1035}`,
      `spec.names.listKind: Invalid value: "Web_site": may have mixed case, but should otherwise match: ${DNS1035}`,
      `spec.names.shortNames[0]: Invalid value: "w s": ${DNS1035}`,
      'spec.names.listKind: Invalid value: "Web_site": kind and listKind may not be the same',
    ]);
  });

  it('wants exactly one storage version and DNS-1035 version names, and every storage version stored', () => {
    const crd = variant(databaseCrd, (d) => {
      d.spec.versions[0].name = 'V1';
      d.spec.versions[0].storage = true;
    });
    const causes = validateCrd(crd);
    expect(causes.map((c) => c.field)).toEqual([
      'spec.versions[0].name',
      'spec.versions',
      'spec.version',
      'status.storedVersions',
    ]);
    expect(causes[1]?.message).toMatch(
      /^Invalid value: \[\]apiextensions\.CustomResourceDefinitionVersion\{.*\}: must have exactly one version marked as storage version$/,
    );
    expect(causes[3]?.message).toBe('Invalid value: []string{"V1"}: must have the storage version v1');
  });

  it('reports a CRD without any storage version as having no stored version', () => {
    const crd = variant(websiteCrd, (d) => (d.spec.versions[0].storage = false));
    expect(texts(crd)).toEqual([
      expect.stringMatching(
        /^spec\.versions: Invalid value: .*: must have exactly one version marked as storage version$/,
      ),
      'status.storedVersions: Invalid value: []string(nil): must have at least one stored version',
    ]);
  });

  it('requires a schema for every version', () => {
    const crd = variant(databaseCrd, (d) => {
      delete d.spec.versions[0].schema;
    });
    expect(texts(crd)).toEqual(['spec.versions[0].schema.openAPIV3Schema: Required value']);
  });

  it('refuses a deprecation warning on a version that is not deprecated', () => {
    const crd = variant(databaseCrd, (d) => (d.spec.versions[0].deprecated = false));
    expect(texts(crd)).toEqual([
      'spec.versions[0].deprecationWarning: Invalid value: "data.example.org/v1beta1 Database is deprecated; use v1": can only be set for deprecated versions',
    ]);
  });

  it('demands API approval for *.k8s.io groups', () => {
    const crd = variant(websiteCrd, (d) => {
      d.metadata.name = 'websites.x.k8s.io';
      d.spec.group = 'x.k8s.io';
    });
    expect(texts(crd)).toEqual([
      'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ]);
    const approved = variant(
      crd,
      (d) =>
        (d.metadata.annotations = {
          'api-approved.kubernetes.io': 'https://github.com/kubernetes/enhancements/pull/1111',
        }),
    );
    expect(validateCrd(approved)).toEqual([]);
  });
});

describe('validateCrd reports schema problems under spec.validation for identical schemas', () => {
  const withSpec = (props: Record<string, unknown>): CustomResourceDefinition =>
    variant(websiteCrd, (d) =>
      Object.assign(d.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties, props),
    );

  it('requires a type on every specified field', () => {
    expect(texts(withSpec({ size: { minimum: 1 } }))).toEqual([
      `${SCHEMA}.properties[spec].properties[size].type: Required value: must not be empty for specified object fields`,
    ]);
  });

  it('forbids types, defaults and descriptions inside junctors', () => {
    expect(
      texts(
        withSpec({
          size: { type: 'integer', anyOf: [{ type: 'integer', description: 'x' }, { minimum: 2 }] },
        }),
      ),
    ).toEqual([
      `${SCHEMA}.properties[spec].properties[size].anyOf[0].description: Forbidden: must be empty to be structural`,
      `${SCHEMA}.properties[spec].properties[size].anyOf[0].type: Forbidden: must be empty to be structural`,
    ]);
  });

  it('validates defaults against their schema and requires them pruned', () => {
    expect(
      texts(
        withSpec({
          size: { type: 'integer', maximum: 5, default: 7 },
          box: { type: 'object', default: { x: 1 }, properties: {} },
        }),
      ),
    ).toEqual([
      `${SCHEMA}.properties[spec].properties[size].default: Invalid value: 7:  in body should be less than or equal to 5`,
      `${SCHEMA}.properties[spec].properties[box].default: Invalid value: map[string]interface {}{"x":1}: must not have unknown fields`,
    ]);
  });

  it('forbids defaults in the top-level metadata and refuses unsupported keywords', () => {
    const crd = variant(websiteCrd, (d) => {
      const root = d.spec.versions[0].schema.openAPIV3Schema;
      root.properties.metadata = { type: 'object', properties: { name: { type: 'string', default: 'x' } } };
      root.properties.spec.properties.ref = { $ref: '#/x', type: 'string' };
      root.properties.spec.properties.unique = {
        type: 'array',
        items: { type: 'string' },
        uniqueItems: true,
      };
    });
    expect(texts(crd)).toEqual([
      `${SCHEMA}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata`,
      `${SCHEMA}.properties[spec].properties[ref].$ref: Forbidden: $ref is not supported`,
      `${SCHEMA}.properties[spec].properties[unique].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
    ]);
  });

  it('restricts metadata to name and generateName', () => {
    const crd = variant(websiteCrd, (d) => {
      d.spec.versions[0].schema.openAPIV3Schema.properties.metadata = {
        type: 'object',
        properties: { labels: { type: 'object' } },
      };
    });
    expect(texts(crd)).toEqual([
      `${SCHEMA}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
    ]);
  });

  it('checks list types and map keys', () => {
    expect(
      texts(
        withSpec({
          tags: { type: 'object', 'x-kubernetes-list-type': 'set' },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['port'],
            items: { type: 'object', properties: { name: { type: 'string' } } },
          },
        }),
      ),
    ).toEqual([
      `${SCHEMA}.properties[spec].properties[tags].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified`,
      `${SCHEMA}.properties[spec].properties[ports].x-kubernetes-list-map-keys: Invalid value: []string{"port"}: entries must all be names of item properties`,
    ]);
  });

  it('allows only object at the root when the status subresource is enabled', () => {
    const crd = variant(websiteCrd, (d) => (d.spec.versions[0].schema.openAPIV3Schema.type = 'array'));
    expect(texts(crd)).toContain(
      `spec.validation.openAPIV3Schema.type: Invalid value: "array": only "object" is allowed as the type at the root of the schema if the status subresource is enabled`,
    );
  });

  it('reports per-version paths when the versions differ', () => {
    const crd = variant(
      databaseCrd,
      (d) => (d.spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.engine.type = 'text'),
    );
    expect(texts(crd)).toEqual([
      'spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[engine].type: Unsupported value: "text": supported values: "array", "boolean", "integer", "number", "object", "string"',
    ]);
  });
});

describe('validateCrd checks subresources, columns and conversion', () => {
  it('wants scale paths under .spec and .status and simple column JSONPaths', () => {
    const crd = variant(websiteCrd, (d) => {
      d.spec.versions[0].subresources.scale = {
        specReplicasPath: '.status.x',
        statusReplicasPath: 'status.replicas',
      };
      d.spec.versions[0].additionalPrinterColumns = [{ name: 'X', type: 'text', jsonPath: 'spec.x' }];
    });
    expect(texts(crd)).toEqual([
      'spec.subresources.scale.specReplicasPath: Invalid value: ".status.x": should be a json path under .spec',
      'spec.subresources.scale.statusReplicasPath: Invalid value: "status.replicas": must be a simple json path starting with .',
      'spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.x": must be a simple json path starting with .',
    ]);
  });

  it('wants selectable fields to be scalars outside metadata', () => {
    const crd = variant(
      websiteCrd,
      (d) => (d.spec.versions[0].selectableFields = [{ jsonPath: '.spec.tls' }, { jsonPath: '.spec.nope' }]),
    );
    expect(texts(crd)).toEqual([
      'spec.selectableFields[0].jsonPath: Invalid value: ".spec.tls": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
      'spec.selectableFields[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
    ]);
  });

  it('requires a client config and review versions for webhook conversion', () => {
    const crd = variant(websiteCrd, (d) => (d.spec.conversion = { strategy: 'Webhook' }));
    expect(texts(crd)).toEqual([
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
      'spec.conversion.conversionReviewVersions: Required value',
    ]);
  });
});

describe('validateCrd refuses undecodable input with a 400', () => {
  it('throws a CrdDecodeError naming the Go field for a wrongly typed value', () => {
    const crd = variant(websiteCrd, (d) => (d.spec.versions[0].served = 'yes'));
    expect(() => validateCrd(crd)).toThrow(CrdDecodeError);
    expect(() => validateCrd(crd)).toThrow(
      'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool',
    );
  });

  it('throws for a fractional integer inside a schema', () => {
    const crd = variant(
      websiteCrd,
      (d) => (d.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.domain.maxLength = 2.5),
    );
    expect(() => validateCrd(crd)).toThrow(
      /cannot unmarshal number 2\.5 into Go struct field JSONSchemaProps\..*maxLength of type int64/,
    );
  });
});

describe('validateCrdUpdate', () => {
  it('keeps group and plural immutable, and scope and kind once established', () => {
    const old = {
      ...websiteCrd,
      status: {
        conditions: [
          { type: 'Established', status: 'True' as const, lastTransitionTime: '', reason: '', message: '' },
        ],
        storedVersions: ['v1'],
      },
    };
    const next = variant(websiteCrd, (d) => {
      d.spec.scope = 'Cluster';
      d.spec.names.kind = 'Site';
    });
    expect(validateCrdUpdate(next, old).map(causeText)).toEqual([
      'spec.scope: Invalid value: "Cluster": field is immutable',
      'spec.names.kind: Invalid value: "Site": field is immutable',
    ]);
  });

  it('keeps previously stored versions in spec.versions', () => {
    const old = { ...databaseCrd, status: { storedVersions: ['v1beta1', 'v1'] } };
    const next = variant(databaseCrd, (d) => d.spec.versions.shift());
    expect(validateCrdUpdate(next, old).map(causeText)).toEqual([
      'status.storedVersions[0]: Invalid value: "v1beta1": missing from spec.versions; v1beta1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1beta1 and removes v1beta1 from status.storedVersions',
    ]);
  });
});

describe('validateCrd on deeply nested input', () => {
  it('refuses a default nested beyond the decoder limit with a CrdDecodeError', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const crd = variant(
      websiteCrd,
      (d) => (d.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.default = deep),
    );
    expect(() => validateCrd(crd)).toThrow(CrdDecodeError);
  });
});
