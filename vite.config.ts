/// <reference types="vitest/config" />
import { createReadStream, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { PYODIDE_ASSET_DIR, PYODIDE_ASSET_FILES } from './src/envs/ftrl/pyodideAssets.js';
import { crossOriginIsolation } from './scripts/crossOriginIsolation.js';
import { buildToolServerBundle } from './src/export/verl/toolServerBundle.js';

const PYODIDE_PACKAGE_DIR = fileURLToPath(new URL('./node_modules/pyodide/', import.meta.url));
const MIME: Record<string, string> = {
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.zip': 'application/zip',
  '.json': 'application/json',
};

/**
 * Pyodide's runtime files (for FTRL's Python tools, src/envs/ftrl/pyodideAssets.ts) from the
 * installed npm package, under `<base>/pyodide/`: served by the dev server, emitted into the
 * build (so `vite preview` and any static host serve them). Never a CDN: the app runs offline.
 */
function servePyodideFiles(): Plugin {
  return {
    name: 'pact-pyodide-files',
    configureServer(server) {
      server.middlewares.use(`/${PYODIDE_ASSET_DIR}/`, (req, res, next) => {
        const name = (req.url ?? '').split('?')[0].replace(/^\//, '');
        if (!PYODIDE_ASSET_FILES.includes(name)) return next();
        res.setHeader('Content-Type', MIME[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream');
        createReadStream(PYODIDE_PACKAGE_DIR + name).pipe(res);
      });
    },
    generateBundle() {
      for (const name of PYODIDE_ASSET_FILES) {
        this.emitFile({
          type: 'asset',
          fileName: `${PYODIDE_ASSET_DIR}/${name}`,
          source: readFileSync(PYODIDE_PACKAGE_DIR + name),
        });
      }
    },
  };
}

const TOOL_SERVER_MODULE = 'virtual:pact-verl-tool-server';
/** The docs pages the app links to, served at `<base>docs/NAME` (the dev server serves the repository root as is). */
const LINKED_DOCS = ['verl-export.md'];

/**
 * The VeRL export's tool server (DIR/pact_verl/tool_server.mjs) for the app: the module
 * `virtual:pact-verl-tool-server` exports its text, bundled by esbuild from
 * src/export/verl/toolServerMain.ts when the module is loaded (at build time, or on the dev
 * server's first request and again when one of its files changes), by the same function
 * `pact export verl` runs. Only the run setup's export (loaded on click) imports it.
 */
function verlToolServer(): Plugin {
  const resolved = `\0${TOOL_SERVER_MODULE}`;
  return {
    name: 'pact-verl-tool-server',
    resolveId(id) {
      return id === TOOL_SERVER_MODULE ? resolved : undefined;
    },
    async load(id) {
      if (id !== resolved) return undefined;
      const bundle = await buildToolServerBundle();
      for (const file of bundle.inputs) this.addWatchFile(file);
      return `export default ${JSON.stringify(bundle.text)};`;
    },
  };
}

/** The docs pages the app links to (LINKED_DOCS), emitted into the build at `docs/NAME`. */
function emitLinkedDocs(): Plugin {
  return {
    name: 'pact-linked-docs',
    generateBundle() {
      for (const name of LINKED_DOCS) {
        this.emitFile({
          type: 'asset',
          fileName: `docs/${name}`,
          source: readFileSync(fileURLToPath(new URL(`./docs/${name}`, import.meta.url))),
        });
      }
    },
  };
}

export default defineConfig({
  // crossOriginIsolation: COOP/COEP, so tfjs-wasm runs its threaded SIMD build on every core.
  plugins: [svelte(), servePyodideFiles(), verlToolServer(), emitLinkedDocs(), crossOriginIsolation()],
  worker: { format: 'es' },
  optimizeDeps: {
    // pyodide.mjs imports its runtime from its indexURL at run time; pre-bundling would break that.
    exclude: ['pyodide'],
    // tfjs is imported only by the trainer worker, which the dev server's dependency scan (it
    // starts at index.html) does not reach: listed here, the first `npm run dev` visit bundles it
    // up front instead of discovering it in the worker, re-optimizing and reloading mid-start.
    // (Import order inside src/model/qwen3/tf.ts matters too; see there.)
    include: [
      '@tensorflow/tfjs-core',
      '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops',
      '@tensorflow/tfjs-core/dist/register_all_gradients',
      '@tensorflow/tfjs-backend-cpu',
      '@tensorflow/tfjs-backend-wasm',
      '@tensorflow/tfjs-backend-webgpu',
    ],
  },
  server: { host: '127.0.0.1', port: 5173 },
  preview: { host: '127.0.0.1', port: 5173 },
  build: { target: 'es2022', chunkSizeWarningLimit: 4096 },
  test: {
    include: ['src/**/*.test.ts', 'workers/**/*.test.ts', 'scripts/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
