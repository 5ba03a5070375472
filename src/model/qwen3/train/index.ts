/** Training machinery for the tfjs Qwen3 policy: AdamW, clipping, LR schedule, accumulation, LoRA, snapshots. */
export { AdamW, isNormOrBias, type AdamWConfig } from './adamw';
export { clipByGlobalNorm, computeGlobalNorm } from './clip';
export { computeLearningRate, validateLrSchedule, type LrSchedule, type LrScheduleKind } from './lrSchedule';
export { accumulateGradients, type AccumulatedGradients, type MicroReduction } from './accumulate';
export { trainStep, type TrainStepArgs, type TrainStepResult } from './trainStep';
export {
  createLora,
  mergeLora,
  disposeLora,
  snapshotLora,
  setParamsTrainable,
  nameLoraWeights,
  LORA_TARGETS,
  LORA_TARGET_SUFFIX,
  type LoraTarget,
  type LoraConfig,
  type CreatedLora,
} from './lora';
export {
  snapshotParams,
  restoreParams,
  disposeSnapshot,
  exportTensors,
  importTensors,
  assignNamedArrays,
} from './snapshot';
export type { ParamMap, TensorMap, LoraAdapter, LoraMap, NamedArray } from './types';
