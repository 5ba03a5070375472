/** The tfjs backends a run may name, in the order 'auto' tries them (no tfjs import: the config reads it). */
export const BACKEND_ORDER = ['webgpu', 'wasm', 'cpu'] as const;

export type BackendName = (typeof BACKEND_ORDER)[number];
