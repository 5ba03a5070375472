/**
 * FTRL tasks: import FTRL-format JSONL, run their Python tools in Pyodide, replay gold
 * calls. Browser-safe; the Node executor lives in `./pyodideExecutorNode` (import it
 * directly, from Node code only).
 */
export * from './importFtrl';
export * from './pythonRuntime';
export * from './pyodideExecutor';
export * from './goldCallSearch';
export * from './replay';
export * from './ftrlScore';
