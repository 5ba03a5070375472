/**
 * The data of an experiment's results, shared by results.ts (results.json, read and
 * written) and aggregate.ts (the table over seeds): a run's per-step metrics, and the
 * table's cells, each the mean ± sample standard deviation over the seeds that finished.
 */
import type { TrainConfig } from '../recipes/config';

export const RESULTS_FORMAT = 'pact-lab-experiment-results/1';

export interface StepRecord {
  step: number;
  /** Metric name → value; null where the worker stored NaN. */
  values: Record<string, number | null>;
}

export type RunStatus = 'finished' | 'failed';

export interface RunResult {
  id: string;
  name: string;
  seed: number;
  status: RunStatus;
  error?: string;
  config: TrainConfig;
  pageRunId?: string;
  seconds: number;
  steps: StepRecord[];
}

export interface MeanStd {
  /** Number of finite values. */
  n: number;
  /** NaN when n = 0. */
  mean: number;
  /** Sample standard deviation (n − 1); NaN when n < 2. */
  std: number;
}

export interface TableRow {
  method: string;
  /** Seeds that finished. */
  n: number;
  /** Seeds that failed, with their errors. */
  failed: { id: string; error: string }[];
  cells: Record<string, MeanStd>;
}

export interface ExperimentTable {
  metrics: string[];
  rows: TableRow[];
}

export interface ExperimentResults {
  format: typeof RESULTS_FORMAT;
  experiment: {
    name: string;
    description?: string;
    file: string;
    isSmoke: boolean;
    smokeOverrides?: Record<string, unknown>;
  };
  app: { name: string; version: string; gitCommit: string; isGitDirty: boolean };
  backend: { name: string; reason: string };
  startedAt: string;
  finishedAt: string;
  runs: RunResult[];
  table: ExperimentTable;
}
