export { PactStore, StorageQuotaError, isQuotaError, formatBytes } from './db';
export type { RunRecord, RunStatus, RunFailure, MetricRow, CheckpointRecord, StoredTensor } from './schema';
export { readTar, writeTar, writeTarChunks, appendTarChunks, looksLikeTar, TarError, type TarEntry } from './tar';
export {
  METRICS_FILE,
  METRICS_LIMITS,
  MetricsFileError,
  formatMetricsJsonl,
  parseMetricsJsonl,
  readMetricsFile,
} from './metricsFile';
