/**
 * The tool repository for ToolSearcher: documents, StableToolBench import, the seeded
 * generator, BM25 search with category constraint and history, `<tool_list>` parsing and
 * the search environment. Browser-safe; the Node file loader is in `./node`.
 */
export * from './types';
export * from './toolDoc';
export * from './stableToolBench';
export * from './generatedRepo';
export * from './search';
export * from './toolList';
export * from './searchEnv';
export * from './searchTeacher';
