#!/usr/bin/env node
// The `pact` command line. It runs the TypeScript sources directly through tsx,
// so the CLI and the app share one code base with no separate build step.
import v8 from 'node:v8';
import { register } from 'tsx/esm/api';

register();
// The CPU engine's opt-in fma kernels (--fma) need relaxed SIMD, behind a V8 flag in Node 20: set
// here, before any WebAssembly is compiled (src/model/engine/kernelChoice.ts, enableRelaxedSimd).
const { enableRelaxedSimd } = await import('../src/model/engine/kernelChoice.ts');
enableRelaxedSimd((flags) => v8.setFlagsFromString(flags));
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
