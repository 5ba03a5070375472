/**
 * WebGPU in Node for tfjs-backend-webgpu: Dawn's Node binding (the npm package `webgpu`,
 * whose prebuilt dawn.node runs on the machine's Vulkan driver) installed as `navigator.gpu`.
 * The package is not a dependency of the app (51 MB, for GPU benchmarks only):
 * `bash scripts/gpu/bench.sh --prepare` carries it, and $PACT_WEBGPU_MODULE names its
 * index.js; without that variable the package `webgpu` is imported from node_modules.
 */
import { pathToFileURL } from 'node:url';

interface DawnModule {
  create(flags: string[]): unknown;
  globals: Record<string, unknown>;
}

/** Installs navigator.gpu from Dawn; returns why it could not, or undefined when it did (or one was there). */
export async function installNodeWebGpu(): Promise<string | undefined> {
  const g = globalThis as { navigator?: { gpu?: unknown } };
  if (g.navigator?.gpu) return undefined;
  const fromEnv = process.env.PACT_WEBGPU_MODULE;
  const specifier = fromEnv ? pathToFileURL(fromEnv).href : 'webgpu';
  let dawn: DawnModule;
  try {
    dawn = (await import(/* @vite-ignore */ specifier)) as DawnModule;
  } catch (e) {
    return `Dawn's Node binding (npm package "webgpu") did not load from ${fromEnv ?? 'node_modules'}: ${e instanceof Error ? e.message : String(e)}`;
  }
  Object.assign(globalThis, dawn.globals);
  const gpu = dawn.create([]);
  if (g.navigator) Object.defineProperty(g.navigator, 'gpu', { value: gpu, configurable: true });
  else g.navigator = { gpu };
  return undefined;
}
