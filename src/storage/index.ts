export { PactStore, StorageQuotaError, isQuotaError, formatBytes } from './db';
export type { RunRecord, RunStatus, RunFailure, MetricRow, CheckpointRecord, StoredTensor } from './schema';
export { readTar, writeTar, writeTarChunks, looksLikeTar, TarError, type TarEntry } from './tar';
