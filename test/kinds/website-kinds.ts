/** Kinds the tests of `defineKind` share: a Website in two versions using every mapping that matters. */
import { defineKind, IntOrString, type ObjectOfKind, Type } from '@converge/kube';

export const websiteV1 = defineKind({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  shortNames: ['ws'],
  categories: ['web'],
  description: 'A website served by the example operator.',
  spec: Type.Object({
    host: Type.String({
      description: 'DNS name the site answers on.',
      minLength: 1,
      maxLength: 253,
      'x-kubernetes-validations': [
        { rule: "self.matches('^[a-z0-9.-]+$')", message: 'host must be a DNS name' },
      ],
    }),
    replicas: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 1, format: 'int32' })),
    tier: Type.Optional(Type.Union([Type.Literal('free'), Type.Literal('pro')], { default: 'free' })),
    port: Type.Optional(IntOrString()),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
    paths: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), backend: Type.String() }), {
        maxItems: 16,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['path'],
      }),
    ),
    extra: Type.Optional(Type.Unknown()),
    note: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }),
  status: Type.Object({
    readyReplicas: Type.Optional(Type.Integer()),
    selector: Type.Optional(Type.String()),
  }),
  printerColumns: [
    { name: 'Host', type: 'string', jsonPath: '.spec.host' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Tier', type: 'string', jsonPath: '.spec.tier', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  scale: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.readyReplicas',
    labelSelectorPath: '.status.selector',
  },
  validations: [
    {
      rule: "self.spec.tier == 'pro' || self.spec.replicas <= 3",
      message: 'free websites have at most 3 replicas',
    },
  ],
});

export type Website = ObjectOfKind<typeof websiteV1>;

/** The older version: served, not stored. */
export const websiteV1beta1 = defineKind({
  group: 'example.com',
  version: 'v1beta1',
  kind: 'Website',
  shortNames: ['ws'],
  categories: ['web'],
  storage: false,
  deprecated: true,
  deprecationWarning: 'example.com/v1beta1 Website is deprecated; use example.com/v1',
  spec: Type.Object({ host: Type.String(), replicas: Type.Optional(Type.Integer()) }),
  status: Type.Object({ readyReplicas: Type.Optional(Type.Integer()) }),
});
