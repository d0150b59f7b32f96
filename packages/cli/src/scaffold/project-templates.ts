/**
 * The project-wide files `converge init` writes: package.json, tsconfig.json, the operator
 * module with its scaffold markers, README and .gitignore. The Dockerfile, .dockerignore and
 * config/ come from `converge manifests` (`npm run manifests`), which imports the operator module
 * and so needs the dependencies installed first.
 */
import type { KindNames } from './names.ts';

/** The line of `src/operator.ts` above which `converge create api` wires further controllers. */
export const CONTROLLERS_MARKER = '// +converge:scaffold:controllers';
/** The line of `src/operator.ts` above which `converge create api` adds its imports. */
export const IMPORTS_MARKER = '// +converge:scaffold:imports';

/**
 * The TypeScript and Node types a new project is checked with: the versions the Converge
 * repository builds with (a test keeps them equal to its root package.json). TypeScript 7, the
 * native compiler the repository builds with and the one `npm install -D typescript` installs:
 * a project's `npm test` type-checks in about a quarter of TypeScript 6's CPU.
 */
export const DEV_DEPENDENCIES = { '@types/node': '^24.19.2', typescript: '^7.0.2' } as const;

/** The `@converge/*` packages a project depends on directly. */
export const DIRECT_PACKAGES = ['apiserver', 'cli', 'kube', 'runtime'] as const;

/** package.json: ES modules, Node ≥ 22.18 (strips types), the scripts of the README. */
export function packageJson(name: string, dependencies: Readonly<Record<string, string>>): string {
  const manifest = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    description: `${name}: a Kubernetes operator written with Converge.`,
    engines: { node: '>=22.18' },
    scripts: {
      // On a Node older than 22.18, converge stops with the version sentence before node --test
      // could fail on the glob (Node 20 takes no globs) or on the .ts files.
      pretest: 'converge --version',
      test: 'tsc --noEmit && node --test "test/**/*.test.ts"',
      dev: 'converge dev',
      manifests: 'converge manifests',
      start: 'converge run src/operator.ts',
    },
    converge: { module: 'src/operator.ts' },
    dependencies,
    devDependencies: DEV_DEPENDENCIES,
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** tsconfig.json: type-check only (Node runs the sources); what Node's type stripping accepts. */
export function tsconfigJson(): string {
  const config = {
    compilerOptions: {
      target: 'ES2023',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      erasableSyntaxOnly: true,
      verbatimModuleSyntax: true,
      skipLibCheck: true,
      types: ['node'],
    },
    include: ['src', 'test'],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** `src/operator.ts`: the operator module `converge dev`, `run` and `manifests` load. */
export function operatorModule(first: KindNames): string {
  return `/**
 * The operator module: \`converge dev\`, \`converge run\` and \`converge manifests\` import it and
 * call its default export with the manager. Each controller it wires brings its kind's CRD and
 * the RBAC it needs into \`npm run manifests\`. \`converge create api\` adds controllers at the
 * marker lines; keep them.
 */
import type { Manager } from '@converge/runtime';
import { ${first.camel}Controller } from './controllers/${first.file}.ts';
${IMPORTS_MARKER}

export default function operator(manager: Manager): void {
  ${first.camel}Controller(manager);
  ${CONTROLLERS_MARKER}
}
`;
}

/** README.md: how to test, run, generate the manifests and deploy. */
export function readme(name: string, first: KindNames): string {
  const n = first.clusterScoped ? '' : ' -n default';
  return `# ${name}

A Kubernetes operator written with Converge (\`@converge/runtime\`): the
\`${first.kind}\` kind (\`${first.group}/${first.version}\`) and its controller, which gives
every ${first.kind} a ConfigMap holding \`spec.message\` and a \`Ready\` condition.

| path | what it is |
| --- | --- |
| \`src/kinds/\` | each kind's schema (\`defineKind\` with TypeBox): its TypeScript type and its CRD are derived from it |
| \`src/controllers/\` | each kind's reconciler |
| \`src/operator.ts\` | the operator module: wires the controllers into the manager |
| \`test/\` | \`node:test\` tests against an embedded Kubernetes API server |
| \`config/\` | deploy manifests (\`npm run manifests\`): CRDs, RBAC, Deployment, kustomize base |

Needs Node 22.18 or newer (it runs the TypeScript sources directly). On a machine whose \`node
--version\` is older, give the project its own: \`npm install -D node@24\`; \`npm test\`, \`npm run
dev\` and \`npx converge\` then run on it. Without it, \`npm test\` stops with the version it needs.

## Test

\`\`\`sh
npm install
npm test            # converge --version (checks the Node), tsc --noEmit, then node --test against an embedded API server
\`\`\`

## Run it locally

\`\`\`sh
npm run dev         # converge dev: an embedded Kubernetes API server and the operator in one process
\`\`\`

In another terminal:

\`\`\`sh
export KUBECONFIG=$PWD/.converge/kubeconfig
kubectl apply${n} -f - <<'YAML'
apiVersion: ${first.group}/${first.version}
kind: ${first.kind}
metadata:
  name: hello
spec:
  message: Hello, world
YAML
kubectl get ${first.plural}${n}         # READY True
kubectl get configmap ${first.file}-hello${first.clusterScoped ? ' -n default' : n} -o yaml
\`\`\`

\`npx converge dev --as-service-account\` runs the operator with the ServiceAccount and RBAC of
\`config/\` instead of as admin, so a missing permission fails here with the 403 a cluster gives.

## Add a kind

\`\`\`sh
npx converge create api --group ${first.group} --version ${first.version} --kind Other
\`\`\`

adds \`src/kinds/other.ts\`, \`src/controllers/other.ts\`, \`test/other.test.ts\` and wires the
controller into \`src/operator.ts\`.

## Manifests

\`\`\`sh
npm run manifests                 # writes config/: CRDs, RBAC, Deployment, kustomize base
npx converge manifests --check    # exits 1 when config/ differs from what the code generates
\`\`\`

The CRDs come from the kinds' schemas, the RBAC from what the controllers watch, own and
declare. Commit \`config/\` and run the check in CI.

## Deploy

\`npm run manifests\` also writes a Dockerfile (and .dockerignore) when there is none:

\`\`\`sh
docker build -t ${name}:dev .
kind load docker-image ${name}:dev            # or push it to your registry
npx converge manifests --image ${name}:dev
kubectl apply -k config/
kubectl -n ${name}-system rollout status deployment/${name}
\`\`\`

\`npm start\` runs the operator against the cluster of your kubeconfig without an image. If the
project depends on Converge tarballs (\`converge init --packages\`), the image build needs them
inside the project: Converge's guide \`docs/guide/deploy.md\` shows how.
`;
}

/** .gitignore: dependencies and the local state of `converge dev`. */
export function gitignore(): string {
  return 'node_modules/\n.converge/\n';
}
