/**
 * What the export copies, in the app (browser only; Node reads them from disk, exportVerl.ts):
 * the Python package's files imported as text by Vite, and the tool server that vite.config.ts
 * bundles with esbuild at build time (the same toolServerBundle.ts the command line runs).
 * Imported only by browserExport.ts, which the run setup loads on click.
 */
import toolServer from 'virtual:pact-verl-tool-server';
import type { VerlExportSources } from './buildVerlExport';

const PYTHON_FILES = import.meta.glob<string>('./python/pact_verl/*.py', {
  query: '?raw',
  import: 'default',
  eager: true,
});

/** The sources, the Python files by name (`algos.py`). */
export function readBrowserSources(): VerlExportSources {
  const pythonFiles: Record<string, string> = {};
  for (const [key, text] of Object.entries(PYTHON_FILES)) pythonFiles[key.slice(key.lastIndexOf('/') + 1)] = text;
  return { pythonFiles, toolServer };
}
