export { PactStore, StorageQuotaError, isQuotaError, formatBytes } from './db';
export type { RunRecord, RunStatus, MetricRow, CheckpointRecord, StoredTensor } from './schema';
