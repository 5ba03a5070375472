/**
 * The sizes of an FTRL evaluation (src/run/ftrlEval.ts), in a module of their own with no
 * runtime imports: the experiment-file validator (src/experiments/ftrlEvalConfig.ts), which
 * `pact train` loads before tfjs is set up, reads the defaults from here.
 */
import type { BackendName } from '../model/backend';

/** Sizes of an FTRL evaluation in the app and the experiment runner (defaults: DEFAULT_FTRL_EVAL_SETTINGS). */
export interface FtrlEvalSettings {
  /** The first N tasks of each category; absent = every task. */
  perCategory?: number;
  maxTurns: number;
  /** Tokens after the prompt, all turns together. */
  maxResponseTokens: number;
  /** Time limit of one Python tool call, ms. */
  toolTimeoutMs: number;
  backend: BackendName;
}

/** `pact eval-ftrl --model`'s defaults; the app starts on WebGPU (falling back to wasm, then cpu). */
export const DEFAULT_FTRL_EVAL_SETTINGS: Readonly<FtrlEvalSettings> = Object.freeze({
  maxTurns: 6,
  maxResponseTokens: 512,
  toolTimeoutMs: 5000,
  backend: 'webgpu',
});
