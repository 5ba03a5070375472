/**
 * Who says an engine pass is differentiable, and who frees what it keeps.
 *
 * On the engine, a differentiable forward keeps every layer's activations in engine memory
 * until tfjs calls its gradient (the engine's backward, which frees them). Whether to keep
 * them is declared by the gradient's caller, not read from tfjs internals:
 *   runEngineGradients(() => tf.variableGrads(loss, vars))
 * opens an engine session for the call (accumulateGradients does this for every
 * micro-batch), and computeTokenLogprobs hands the session to the engine: inside it, engine
 * forwards are differentiable, and the session owns the contexts of forwards whose backward
 * has not run (an output that never reached the loss) and frees them in a `finally` when the
 * call ends, thrown or not. Outside any session a forward is not differentiable and keeps
 * nothing.
 *
 * tfjs' own tape state is read only as a check (assertTapeAgrees): a forward declared
 * differentiable while no gradient is being recorded, or one under a recording tape that no
 * one declared, throws with the fix, instead of training silently without gradients.
 */
import * as tf from './tf';
import type { ForwardContext, Qwen3Engine } from '../engine/qwen3Engine';

/** A forward context waiting for its backward. */
export interface PendingForward {
  engine: Qwen3Engine;
  ctx: ForwardContext;
}

export class EngineSession {
  private readonly pending = new Set<PendingForward>();
  private isClosed = false;

  /** Takes ownership of a kept forward until settle() (its backward ran) or close(). */
  hold(engine: Qwen3Engine, ctx: ForwardContext): PendingForward {
    if (this.isClosed) {
      engine.release(ctx);
      throw new Error('engine: a forward ran in an engine session that has already ended');
    }
    const entry = { engine, ctx };
    this.pending.add(entry);
    return entry;
  }

  /** The backward of `entry` is about to run (and will free its context). */
  settle(entry: PendingForward): void {
    this.pending.delete(entry);
  }

  /** Frees every context still waiting (their outputs did not reach the loss). */
  close(): void {
    this.isClosed = true;
    for (const { engine, ctx } of this.pending) engine.release(ctx);
    this.pending.clear();
  }
}

let active: EngineSession | null = null;

/** The session of the innermost runEngineGradients call in progress, if any. */
export function getActiveEngineSession(): EngineSession | null {
  return active;
}

/**
 * Runs `computeGradients` (a tf.variableGrads / tf.grads call whose loss reads the model)
 * with differentiable engine forwards, and frees whatever they kept when it returns or throws.
 */
export function runEngineGradients<T>(computeGradients: () => T): T {
  const session = new EngineSession();
  const outer = active;
  active = session;
  try {
    return computeGradients();
  } finally {
    active = outer;
    session.close();
  }
}

/** Whether tfjs is recording a gradient tape now ('unknown' when its engine state has no gradientDepth). */
export function readTfjsTape(): 'recording' | 'idle' | 'unknown' {
  const state = (tf.engine() as unknown as { state?: { gradientDepth?: unknown } }).state;
  const depth = state?.gradientDepth;
  if (typeof depth !== 'number') return 'unknown';
  return depth > 0 ? 'recording' : 'idle';
}

/**
 * Throws when the declared differentiability of an engine forward with trainable inputs
 * disagrees with tfjs' tape: gradients would silently be zero, or activations kept for a
 * backward that never comes. No check when tfjs' state cannot be read (the declaration rules).
 */
export function assertTapeAgrees(isDifferentiable: boolean): void {
  const tape = readTfjsTape();
  if (tape === 'unknown') return;
  if (isDifferentiable && tape === 'idle') {
    throw new Error(
      'engine: this forward is differentiable (inside runEngineGradients) but tfjs records no gradient: ' +
        'run it inside the tf.variableGrads / tf.grads call that runEngineGradients wraps',
    );
  }
  if (!isDifferentiable && tape === 'recording') {
    throw new Error(
      'engine: tfjs is recording gradients around a forward that was not declared differentiable, so no gradient ' +
        'would reach the weights: compute them with runEngineGradients(() => tf.variableGrads(…)) ' +
        '(accumulateGradients does)',
    );
  }
}
