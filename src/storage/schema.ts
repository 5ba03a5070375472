/**
 * What PACT Lab keeps in IndexedDB: runs, their metric logs, and checkpoints.
 *
 * A checkpoint holds everything needed to resume (weights, optimiser state, RNG
 * state, step, config, trainer state). It is stored in pieces (checkpointPieces.ts):
 * its tensor bytes as chunk records in `checkpointChunks`, then its header in
 * `checkpoints`, which is written last and alone makes it readable, so a crash or
 * reload leaves either the old checkpoint set or the new one, never half a checkpoint.
 * Records of DB_VERSION 1 (one whole `CheckpointRecord`, no `pieces`) still read as they are.
 */
import type { DBSchema } from 'idb';

export const DB_NAME = 'pact-lab';
/** 1: a checkpoint was one record; 2: a header plus chunk records (`checkpointChunks`). */
export const DB_VERSION = 2;

/**
 * Where a saved run stands. `running` is written only while a trainer worker holds the run
 * (workers/runLock.ts); a `running` run whose worker is gone (the tab was reloaded or closed)
 * is rewritten to `interrupted` by the page that finds it. `stopped`: the user pressed Stop.
 */
export type RunStatus = 'created' | 'running' | 'paused' | 'stopped' | 'interrupted' | 'finished' | 'failed';

/** What a failed run left for its report (the message is `RunRecord.error`). */
export interface RunFailure {
  /** The step that was running when it failed (completed steps + 1; 0 for a failed start-of-run evaluation). */
  step: number;
  stack?: string;
  /** When it failed (ms since the epoch). */
  at: number;
}

/**
 * The name a config carries when nobody named its run (config.name's default). A run is
 * never shown under it: a run started in the app is named after its id, and a stored run
 * named this (saved before that) is shown by its id (runName in src/ui/state/RunsState).
 */
export const PLACEHOLDER_RUN_NAME = 'run';

export interface RunRecord {
  id: string;
  /** What the run is called everywhere (Home, Runs panel, chart legends); its id unless renamed. */
  name: string;
  recipe: string;
  /** The resolved training config (validated by the recipe layer). */
  config: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  status: RunStatus;
  /** Last step with metrics logged. */
  lastStep: number;
  /** Id of the newest committed checkpoint, if any. */
  lastCheckpointId?: string;
  error?: string;
  /** Stack and step of the failure, when `status` is `failed`. */
  failure?: RunFailure;
  /** The backend the run last trained on (webgpu, wasm, cpu). */
  backend?: string;
  /** The CPU engine's kernels it last trained on (simd, fma); absent where the engine did not serve it (WebGPU). */
  engineKernels?: string;
}

export interface MetricRow {
  runId: string;
  step: number;
  /** Metric name → value (reward, kl, loss terms, …). */
  values: Record<string, number>;
}

/** A tensor in float32, stored as a plain ArrayBuffer (structured-clone friendly). */
export interface StoredTensor {
  name: string;
  shape: number[];
  data: ArrayBuffer;
}

export interface CheckpointRecord {
  id: string;
  runId: string;
  step: number;
  createdAt: number;
  config: Record<string, unknown>;
  weights: StoredTensor[];
  /** Optimiser moments by parameter name plus its step counter. */
  optimizer: { step: number; tensors: StoredTensor[] };
  /** The seeded RNG's serialised state (src/core rng). */
  rngState: unknown;
  /**
   * Anything else the trainer needs to continue bit for bit (vocab mapping, data cursor…), and the model's
   * Qwen3 config (`modelConfig`, absent in older records).
   */
  trainerState: Record<string, unknown>;
  /** Total bytes of tensor data, for the UI and quota messages. */
  bytes: number;
}

/** Where a checkpoint's bytes are: chunk records `[writeId, 0 … count - 1]`, each of at most `chunkBytes`. */
export interface CheckpointPieces {
  /** Unique to one write (`<checkpoint id>#<tick>`), so a rewrite never touches the chunks a header points at. */
  writeId: string;
  count: number;
  chunkBytes: number;
  totalBytes: number;
}

/**
 * A checkpoint as the `checkpoints` store holds it since DB_VERSION 2: the record with every
 * ArrayBuffer replaced by a ByteSlot (checkpointPieces.ts) and where its chunks are.
 */
export interface CheckpointHeader extends Omit<CheckpointRecord, 'weights' | 'optimizer' | 'trainerState'> {
  weights: unknown;
  optimizer: unknown;
  trainerState: Record<string, unknown>;
  pieces: CheckpointPieces;
}

/** One piece of a checkpoint's byte stream. */
export interface CheckpointChunk {
  writeId: string;
  runId: string;
  index: number;
  data: ArrayBuffer;
}

export interface PactDB extends DBSchema {
  runs: { key: string; value: RunRecord; indexes: { byUpdated: number } };
  metrics: { key: [string, number]; value: MetricRow; indexes: { byRun: string } };
  /** Headers (CheckpointHeader), and whole records written by DB_VERSION 1. */
  checkpoints: {
    key: string;
    value: CheckpointHeader | CheckpointRecord;
    indexes: { byRun: string; byRunStep: [string, number]; byWriteId: string };
  };
  checkpointChunks: { key: [string, number]; value: CheckpointChunk; indexes: { byRun: string } };
}
