import {
  createOrUpdate,
  type Deployment,
  deploymentType,
  done,
  ignoreNotFound,
  type KubeObject,
  type Manager,
  resourceType,
  setControllerReference,
} from '@converge/runtime';

export type Website = KubeObject & { spec: { replicas: number } };
export const websiteType = resourceType<Website>({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  plural: 'websites',
  namespaced: true,
});

export default function website(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(websiteType)
    .owns(deploymentType)
    .complete(async (key) => {
      const site = await client.get(websiteType, key).catch(ignoreNotFound);
      if (site === undefined) return done();
      await createOrUpdate(
        client,
        deploymentType,
        { metadata: { name: key.name, namespace: key.namespace } },
        (d: Deployment) => {
          const next: Deployment = {
            ...d,
            spec: {
              replicas: site.spec.replicas,
              selector: { matchLabels: { app: key.name } },
              template: {
                metadata: { labels: { app: key.name } },
                spec: { containers: [{ name: 'web', image: 'nginx' }] },
              },
            },
          };
          return setControllerReference(site, next);
        },
      );
      return done();
    });
}
