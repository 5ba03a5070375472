/**
 * Every CPU core for tfjs-wasm in the browser: a Vite plugin that makes the app cross-origin
 * isolated (COOP/COEP on every response of the dev server and of `vite preview`, which
 * `npm start` runs), so tfjs-backend-wasm 4.22 picks its threaded SIMD build, and that repairs
 * two things in that build's Emscripten factory (wasm-out/tfjs-backend-wasm-threaded-simd.js):
 * `_scriptDir` declared inside the factory, and the thread-pool cap lifted to every core.
 *
 * The two repairs in full: docs/perf.md.
 */
import type { Plugin } from 'vite';

export const CROSS_ORIGIN_ISOLATION_HEADERS: Readonly<Record<string, string>> = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/** The Emscripten factory of tfjs-backend-wasm's threaded SIMD build (a CommonJS file). */
const THREADED_FACTORY = '@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.js';

const CLOSURE_SCRIPT_DIR =
  "  var _scriptDir = typeof document !== 'undefined' && document.currentScript ? document.currentScript.src : undefined;\n" +
  "  if (typeof __filename !== 'undefined') _scriptDir = _scriptDir || __filename;\n";
const FACTORY_START = 'function(WasmBackendModuleThreadedSimd) {\n';
const LOGICAL_CORES = 'return navigator["hardwareConcurrency"]}';
const LOGICAL_CORES_FOR_CAP = 'return 2*navigator["hardwareConcurrency"]}';

function fail(what: string): never {
  throw new Error(
    `${THREADED_FACTORY}: ${what} is not where this repair expects it (tfjs upgraded?): see scripts/crossOriginIsolation.ts`,
  );
}

/**
 * The factory file with both repairs of the header: `_scriptDir` declared inside the factory
 * instead of in the closure around it (same value: in a module worker `document` is absent
 * and `__filename` undefined, at load time as at call time), and the core count its C++ halves
 * doubled. Throws when the file no longer has the expected shape, so the build fails loudly
 * instead of shipping a hanging backend.
 */
export function repairThreadedFactory(code: string): string {
  const closureAt = code.indexOf(CLOSURE_SCRIPT_DIR);
  const startAt = code.indexOf(FACTORY_START);
  if (closureAt < 0 || startAt < closureAt) fail('its _scriptDir closure');
  const bodyAt = startAt + FACTORY_START.length;
  const selfContained =
    code.slice(0, closureAt) +
    code.slice(closureAt + CLOSURE_SCRIPT_DIR.length, bodyAt) +
    CLOSURE_SCRIPT_DIR +
    code.slice(bodyAt);
  const coresAt = selfContained.indexOf(LOGICAL_CORES);
  if (coresAt < 0 || selfContained.indexOf(LOGICAL_CORES, coresAt + 1) >= 0) fail('_emscripten_num_logical_cores');
  return selfContained.slice(0, coresAt) + LOGICAL_CORES_FOR_CAP + selfContained.slice(coresAt + LOGICAL_CORES.length);
}

/** The repair as a transform hook (for Vite's worker bundles and its dependency prebundling). */
function repairThreadedWasmFactory() {
  return {
    name: 'pact-tfjs-wasm-threaded-factory',
    transform(code: string, id: string) {
      if (!id.split('?')[0].replace(/\\/g, '/').endsWith(THREADED_FACTORY)) return null;
      return { code: repairThreadedFactory(code), map: null };
    },
  };
}

export function crossOriginIsolation(): Plugin {
  const setHeaders = (_req: unknown, res: { setHeader(name: string, value: string): void }, next: () => void) => {
    for (const [name, value] of Object.entries(CROSS_ORIGIN_ISOLATION_HEADERS)) res.setHeader(name, value);
    next();
  };
  return {
    ...repairThreadedWasmFactory(),
    name: 'pact-cross-origin-isolation',
    enforce: 'pre',
    // tfjs lives in the trainer worker's bundle (built with worker.plugins only) and, under
    // `npm run dev`, in the dependency prebundle: the repair runs there too (merged, not replaced).
    config: () => ({
      worker: { plugins: () => [repairThreadedWasmFactory()] },
      optimizeDeps: { rolldownOptions: { plugins: [repairThreadedWasmFactory()] } },
    }),
    // Added before Vite's own middlewares, so every response (modules, assets, workers,
    // Pyodide's files) carries the headers.
    configureServer(server) {
      server.middlewares.use(setHeaders);
    },
    configurePreviewServer(server) {
      server.middlewares.use(setHeaders);
    },
  };
}
