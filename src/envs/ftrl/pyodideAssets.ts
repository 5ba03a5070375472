/**
 * Where the app serves Pyodide's own files (CPython in wasm, for FTRL's Python tools):
 * `<base>/pyodide/`, copied from the installed npm package node_modules/pyodide by the Vite
 * plugin in vite.config.ts (served in dev, emitted into the build). Never a CDN: the app
 * runs offline. The worker bundles pyodide.mjs itself; these are the files it fetches at
 * load time from its `indexURL`.
 */
export const PYODIDE_ASSET_DIR = 'pyodide';

export const PYODIDE_ASSET_FILES: readonly string[] = [
  'pyodide.asm.mjs',
  'pyodide.asm.wasm',
  'python_stdlib.zip',
  'pyodide-lock.json',
];
