/// <reference types="vitest/config" />
import { createReadStream, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { PYODIDE_ASSET_DIR, PYODIDE_ASSET_FILES } from './src/envs/ftrl/pyodideAssets.js';
import { crossOriginIsolation } from './scripts/crossOriginIsolation.js';

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

export default defineConfig({
  // crossOriginIsolation: COOP/COEP, so tfjs-wasm runs its threaded SIMD build on every core.
  plugins: [svelte(), servePyodideFiles(), crossOriginIsolation()],
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
