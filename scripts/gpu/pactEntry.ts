/**
 * The `pact` command line as one Node bundle (scripts/gpu/prepare.ts builds it into
 * .gpu-bundle/), for a GPU machine that has no node_modules: `node pact.mjs bench …`
 * runs what `node bin/pact.mjs bench …` runs in a checkout.
 */
import { main } from '../../src/cli/main';

process.exitCode = await main(process.argv.slice(2));
