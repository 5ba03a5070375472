/**
 * Which training buttons a run allows, and a failed start worded for the form.
 * Pure, so the rules are tested without Svelte or a worker.
 */
import type { RunState } from '../../workers/protocol';
import { SETUP_FIELDS } from './runSetup';

/**
 * Where the page's run is: before any run, waiting for the worker, the worker's own state, or
 * 'saved': a saved run shown after a reload, which the worker does not hold (Train resumes it).
 */
export type ControlPhase = 'idle' | 'starting' | 'saved' | RunState;

export interface ControlAvailability {
  canTrain: boolean;
  /** Train resumes a paused run, or a saved one from its checkpoint (the button says "Resume"). */
  isResume: boolean;
  canPause: boolean;
  canStep: boolean;
  canStop: boolean;
  canReset: boolean;
}

export interface ControlContext {
  /** A Pause or Stop the worker accepted, waiting for the step to end. */
  pendingControl?: 'pause' | 'stop' | null;
  /** 'saved' phase: whether the shown run can be resumed (not finished, not training elsewhere). */
  canResumeSaved?: boolean;
}

/**
 * The buttons for `phase`: Train starts a run when none is active (or resumes a paused
 * one, or a saved one that can be resumed), Pause a running one, Step only while paused (the
 * worker's `step` request), Stop an active one, Reset clears a run that is not starting. While a
 * Stop waits for the step to end nothing more can be asked; while a Pause waits, Stop still can.
 * `isBusy` (a request in flight) disables all. An invalid setup does not disable Train: pressing
 * it says which field is wrong, next to the button.
 */
export function computeControls(phase: ControlPhase, isBusy: boolean, ctx: ControlContext = {}): ControlAvailability {
  const isActive = phase === 'running' || phase === 'paused';
  const isStopping = ctx.pendingControl === 'stop';
  if (phase === 'saved') {
    const canResume = ctx.canResumeSaved ?? false;
    return {
      canTrain: !isBusy,
      isResume: canResume,
      canPause: false,
      canStep: false,
      canStop: false,
      canReset: !isBusy,
    };
  }
  return {
    canTrain: !isBusy && !isStopping && (phase === 'paused' || (!isActive && phase !== 'starting')),
    isResume: phase === 'paused',
    canPause: !isBusy && phase === 'running' && ctx.pendingControl !== 'pause' && !isStopping,
    canStep: !isBusy && phase === 'paused' && !isStopping,
    canStop: !isBusy && isActive && !isStopping,
    canReset: !isBusy && phase !== 'idle' && phase !== 'starting' && !isStopping,
  };
}

/**
 * A start error from the worker, with each `config.<path>: <reason>` line naming the
 * form field it belongs to: `config.pact.anchorProb: must be ≤ 1` → `q (config.pact.anchorProb): must be ≤ 1`.
 */
export function wordStartError(message: string): string {
  return message
    .split('\n')
    .map((line) => {
      const m = line.trim().match(/^(config(?:\.[A-Za-z0-9_]+)+): (.*)$/);
      if (!m) return line.trim();
      const field = SETUP_FIELDS.find((f) => ['config', ...f.path].join('.') === m[1]);
      return field ? `${field.symbol ?? field.label} (${m[1]}): ${m[2]}` : `${m[1]}: ${m[2]}`;
    })
    .filter(Boolean)
    .reduce((text, part) => (text === '' ? part : `${text}${text.endsWith(':') ? ' ' : '; '}${part}`), '');
}
