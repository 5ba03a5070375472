#!/usr/bin/env node
// The `pact` command line. It runs the TypeScript sources directly through tsx,
// so the CLI and the app share one code base with no separate build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
