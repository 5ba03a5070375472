/**
 * Expert traces h* (PACT Eq. expert-trace): the types and chunk vocabulary, defined in
 * src/core/traceTypes.ts (tasks in src/envs carry traces too) and re-exported here.
 */
export * from '../core/traceTypes';
