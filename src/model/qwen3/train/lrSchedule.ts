/**
 * Learning-rate schedule: linear warm-up, then constant or cosine decay to a floor,
 * as a pure function of the optimiser step (no tfjs, no state).
 *   warm-up  (step < W):   lr = lrPeak · (step + 1) / W
 *   constant (step ≥ W):   lr = lrPeak
 *   cosine   (step ≥ W):   progress = min(1, (step − W) / max(1, totalSteps − W))
 *                          lr = lrPeak · (r + (1 − r) · ½ (1 + cos(π · progress)))
 * with r = minLrRatio. The cosine branch is Hugging Face's
 * `get_cosine_with_min_lr_schedule_with_warmup` (num_cycles 0.5); PACT Table 6 trains with
 * a constant rate after warm-up. Steps count from 0.
 *
 * Departure from Hugging Face: their warm-up gives lr = lrPeak · step / W, i.e. 0 at step 0,
 * a wasted first step; here step 0 already trains at lrPeak / W and step W − 1 reaches lrPeak.
 * Past totalSteps the cosine stays at its floor lrPeak · r.
 */

export type LrScheduleKind = 'constant' | 'cosine';

export interface LrSchedule {
  kind: LrScheduleKind;
  /** The learning rate after warm-up (and the start of the cosine). */
  lrPeak: number;
  /** Number of warm-up steps W (0: none). */
  warmupSteps: number;
  /** Total optimiser steps of the run; needed by `cosine`, ignored by `constant`. */
  totalSteps?: number;
  /** Cosine floor as a fraction of lrPeak, in [0, 1]. Default 0. */
  minLrRatio?: number;
}

/** The learning rate at optimiser step `step` (0-based). Throws on an invalid schedule, naming the field. */
export function computeLearningRate(step: number, schedule: LrSchedule): number {
  validateLrSchedule(schedule);
  if (!Number.isInteger(step) || step < 0) {
    throw new Error(`computeLearningRate: step must be a non-negative integer, got ${step}`);
  }
  const { kind, lrPeak, warmupSteps } = schedule;
  if (step < warmupSteps) return (lrPeak * (step + 1)) / warmupSteps;
  if (kind === 'constant') return lrPeak;
  const totalSteps = schedule.totalSteps!;
  const minLrRatio = schedule.minLrRatio ?? 0;
  const progress = Math.min(1, (step - warmupSteps) / Math.max(1, totalSteps - warmupSteps));
  return lrPeak * (minLrRatio + (1 - minLrRatio) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}

/** Throws a clear error naming the first invalid field of `schedule`. */
export function validateLrSchedule(schedule: LrSchedule): void {
  const { kind, lrPeak, warmupSteps, totalSteps, minLrRatio } = schedule;
  if (kind !== 'constant' && kind !== 'cosine') {
    throw new Error(`LrSchedule.kind must be 'constant' or 'cosine', got ${JSON.stringify(kind)}`);
  }
  if (typeof lrPeak !== 'number' || !Number.isFinite(lrPeak) || lrPeak < 0) {
    throw new Error(`LrSchedule.lrPeak must be a finite number ≥ 0, got ${lrPeak}`);
  }
  if (!Number.isInteger(warmupSteps) || warmupSteps < 0) {
    throw new Error(`LrSchedule.warmupSteps must be an integer ≥ 0, got ${warmupSteps}`);
  }
  if (minLrRatio !== undefined && (typeof minLrRatio !== 'number' || !(minLrRatio >= 0 && minLrRatio <= 1))) {
    throw new Error(`LrSchedule.minLrRatio must be a number in [0, 1], got ${minLrRatio}`);
  }
  if (kind === 'cosine') {
    if (totalSteps === undefined || !Number.isInteger(totalSteps) || totalSteps < warmupSteps) {
      throw new Error(
        `LrSchedule.totalSteps must be an integer ≥ warmupSteps (${warmupSteps}) for a cosine schedule, got ${totalSteps}`,
      );
    }
  }
}
