#!/usr/bin/env node
// `npm create converge@latest [DIR] -- [options]`: `converge init`, bundled into dist/ when the
// package is packed (scripts/bundle-create.ts), so that making a project installs nothing but this
// package. The project depends on the Converge of this package's version.
import { readFileSync } from 'node:fs';

const MINIMUM = [22, 18];
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
  process.stderr.write(
    `create-converge: Node ${process.versions.node} is too old; Converge needs Node ${MINIMUM.join('.')} or newer.\n`,
  );
  process.exit(1);
}
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const { create } = await import('../dist/create.js');
process.exitCode = create(process.argv.slice(2), version);
