/**
 * The warm-start policy: a qwen3-nano trained by the project's own pipeline with a short
 * supervised fine-tuning on generated expert traces, so the first RL run starts from a
 * policy that solves some tasks but not most (as the papers start RL from an instruction
 * model, PACT §4 / App. B). Expert episodes are replayed through RolloutEnv
 * (policyVocab.ts), so the text is exactly rollout-shaped. `npm run pretrain`
 * (scripts/pretrain.ts) runs it; its parts, in src/recipes/warmStart/:
 *
 * - sftRows.ts: episodes as SFT rows (ids + target mask) and their bytes for PyTorch;
 * - sft.ts: options, model shape, the SFT loss (a batch token mean) and the AdamW loop;
 * - evaluate.ts: greedy rollouts on held-out tasks, Solve-R/P/F1 and answer accuracy;
 * - search.ts: ToolSearcher's search episodes as extra rows, their held-out evaluation;
 * - files.ts: the public/warm-start/ checkpoint folder, read, written and vocabulary-grown.
 */
export { buildSftRow, packSftRows, unpackSftRows, type SftTargetRow } from './sftRows';
export {
  computeSftLoss,
  createWarmStartConfig,
  DEFAULT_WARM_START_OPTIONS,
  runWarmStartSft,
  type SftProgress,
  type WarmStartOptions,
} from './sft';
export {
  DEFAULT_EVALUATE_OPTIONS,
  evaluateGreedy,
  scoreTranscripts,
  type EvaluateOptions,
  type WarmStartEval,
} from './evaluate';
export {
  DEFAULT_SEARCH_EVALUATE_OPTIONS,
  encodeSearchEpisode,
  evaluateSearchGreedy,
  generateSearchSftTasks,
  readCount,
  resolveSearchWarmStartCounts,
  SEARCH_WARM_START,
  type SearchSftTask,
  type SearchStageRecord,
  type SearchWarmStartCounts,
  type SearchWarmStartEval,
} from './search';
export {
  createFetchReader,
  exportWarmStartFiles,
  extendWarmStartVocab,
  loadWarmStart,
  WARM_START_DIR,
  WARM_START_SEARCH_DIR,
  warmStartFolderFor,
  WARM_START_FILES,
  WARM_START_INFO_FILE,
  type ReadWarmStartFile,
  type WarmStart,
  type WarmStartInfo,
} from './files';
