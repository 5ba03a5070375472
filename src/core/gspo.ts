/**
 * GSPO, Group Sequence Policy Optimization (Zheng et al. 2025, arXiv 2507.18071, Eq. 5–7),
 * reference form over plain arrays (the tfjs version lives in src/recipes/train/tfLosses.ts).
 *
 *   s_i(θ) = (π_θ(y_i|x) / π_old(y_i|x))^{1/|y_i|} = exp( (1/|y_i|) Σ_t [log π_θ(y_i,t) − log π_old(y_i,t)] )
 *   J(θ)   = (1/G) Σ_i min( s_i A_i, clip(s_i, 1 − ε_low, 1 + ε_high) A_i )
 *
 * Multi-turn: |y_i| and the sum run over the policy-generated tokens only (docs/core.md).
 *
 * The paper's clip range is tiny because the ratio is a per-token geometric mean:
 * ε_low = 3e-4, ε_high = 4e-4 (§5.1) — GSPO_CLIP below.
 * Simplifications: one advantage per sequence (GSPO's GRPO-style group z-score); the
 * GSPO-token variant (per-token advantages with sg[s_i]) is not implemented.
 */
import type { ClipOptions } from './losses';

/** GSPO §5.1: left and right clip ranges of the sequence ratio. */
export const GSPO_CLIP: Readonly<Required<ClipOptions>> = { clipLow: 3e-4, clipHigh: 4e-4 };

function checkRow(values: readonly number[], length: number, where: string): void {
  if (!Array.isArray(values)) throw new Error(`${where} must be an array of numbers`);
  if (values.length !== length) throw new Error(`${where} has ${values.length} entries, expected ${length}`);
}

/**
 * Length-normalised sequence log-ratio log s_i = Σ m_t (logpNew_t − logpOld_t) / Σ m_t.
 * Tokens with m_t = 0 are ignored (their log-probs may be anything). Returns 0 when Σ m = 0.
 * @param logpNew [T] log π_θ per token
 * @param logpOld [T] log π_old per token
 * @param mask [T] weights ≥ 0 (1 on policy-generated tokens)
 */
export function gspoSequenceLogRatio(
  logpNew: readonly number[],
  logpOld: readonly number[],
  mask: readonly number[],
): number {
  if (!Array.isArray(mask)) throw new Error('gspoSequenceLogRatio: mask must be an array of weights');
  checkRow(logpNew, mask.length, 'gspoSequenceLogRatio: logpNew');
  checkRow(logpOld, mask.length, 'gspoSequenceLogRatio: logpOld');
  let weighted = 0;
  let total = 0;
  for (let t = 0; t < mask.length; t++) {
    const m = mask[t];
    if (!(m >= 0) || !Number.isFinite(m))
      throw new Error(`gspoSequenceLogRatio: mask[${t}] = ${m} must be a finite number ≥ 0`);
    if (m === 0) continue;
    const delta = logpNew[t] - logpOld[t];
    if (!Number.isFinite(delta)) throw new Error(`gspoSequenceLogRatio: log-probs at token ${t} are not finite`);
    weighted += m * delta;
    total += m;
  }
  return total === 0 ? 0 : weighted / total;
}

function clampRatio(ratio: number, { clipLow = GSPO_CLIP.clipLow, clipHigh }: ClipOptions): number {
  const high = clipHigh ?? clipLow;
  if (!(clipLow >= 0) || !(high >= 0))
    throw new Error(`GSPO clip ranges must be ≥ 0, got clipLow=${clipLow}, clipHigh=${high}`);
  return Math.min(Math.max(ratio, 1 - clipLow), 1 + high);
}

/** −min(s·A, clip(s)·A) for one sequence (GSPO Eq. 5, negated to a loss). Defaults to GSPO_CLIP. */
export function gspoSequenceLoss(
  logpNew: readonly number[],
  logpOld: readonly number[],
  mask: readonly number[],
  advantage: number,
  options: ClipOptions = GSPO_CLIP,
): number {
  if (!Number.isFinite(advantage)) throw new Error(`gspoSequenceLoss: advantage ${advantage} is not finite`);
  const ratio = Math.exp(gspoSequenceLogRatio(logpNew, logpOld, mask));
  return -Math.min(ratio * advantage, clampRatio(ratio, options) * advantage);
}

/** True when the clipped term is the one the min picked for this sequence. */
export function isSequenceClipped(
  logpNew: readonly number[],
  logpOld: readonly number[],
  mask: readonly number[],
  advantage: number,
  options: ClipOptions = GSPO_CLIP,
): boolean {
  const ratio = Math.exp(gspoSequenceLogRatio(logpNew, logpOld, mask));
  return -clampRatio(ratio, options) * advantage > -ratio * advantage;
}

/**
 * Per-token GSPO loss matrix [B][T]: each row holds its sequence loss on every token with
 * m_t > 0 and 0 elsewhere. aggregateLoss(result, mask, 'seq-mean-token-mean') = GSPO's loss.
 * @param logpNew [B][T]
 * @param logpOld [B][T]
 * @param mask [B][T]
 * @param advantages [B] one per sequence
 */
export function gspoLossMatrix(
  logpNew: readonly (readonly number[])[],
  logpOld: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  advantages: readonly number[],
  options: ClipOptions = GSPO_CLIP,
): number[][] {
  if (!Array.isArray(mask) || !Array.isArray(logpNew) || !Array.isArray(logpOld) || !Array.isArray(advantages)) {
    throw new Error('gspoLossMatrix: logpNew, logpOld, mask ([B][T]) and advantages ([B]) must be arrays');
  }
  for (const [name, rows] of [
    ['logpNew', logpNew],
    ['logpOld', logpOld],
    ['advantages', advantages],
  ] as const) {
    if (rows.length !== mask.length)
      throw new Error(`gspoLossMatrix: ${name} has ${rows.length} rows but mask has ${mask.length}`);
  }
  return mask.map((row, i) => {
    const loss = gspoSequenceLoss(logpNew[i], logpOld[i], row, advantages[i], options);
    return row.map((m: number) => (m > 0 ? loss : 0));
  });
}

/** Fraction of live sequences (Σ m > 0) whose ratio was clipped: GSPO's clip fraction. */
export function gspoClipFraction(
  logpNew: readonly (readonly number[])[],
  logpOld: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  advantages: readonly number[],
  options: ClipOptions = GSPO_CLIP,
): number {
  let live = 0;
  let clipped = 0;
  mask.forEach((row, i) => {
    if (row.reduce((s: number, m: number) => s + m, 0) <= 0) return;
    live++;
    if (isSequenceClipped(logpNew[i], logpOld[i], row, advantages[i], options)) clipped++;
  });
  return live === 0 ? 0 : clipped / live;
}
