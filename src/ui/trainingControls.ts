/**
 * Which training buttons a run allows, and a failed start worded for the form.
 * Pure, so the rules are tested without Svelte or a worker.
 */
import type { RunState } from '../../workers/protocol';
import { SETUP_FIELDS } from './runSetup';

/** Where the page's run is: before any run, waiting for the worker, or the worker's own state. */
export type ControlPhase = 'idle' | 'starting' | RunState;

export interface ControlAvailability {
  canTrain: boolean;
  /** Train resumes a paused run (the button says "Resume"). */
  isResume: boolean;
  canPause: boolean;
  canStep: boolean;
  canStop: boolean;
  canReset: boolean;
}

/**
 * The buttons for `phase`: Train starts a run when none is active (or resumes a paused
 * one), Pause a running one, Step only while paused (the worker's `step` request),
 * Stop an active one, Reset clears a run that is not starting. `isBusy` (a request in
 * flight) disables all. An invalid setup does not disable Train: pressing it says which
 * field is wrong, next to the button.
 */
export function computeControls(phase: ControlPhase, isBusy: boolean): ControlAvailability {
  const isActive = phase === 'running' || phase === 'paused';
  return {
    canTrain: !isBusy && (phase === 'paused' || (!isActive && phase !== 'starting')),
    isResume: phase === 'paused',
    canPause: !isBusy && phase === 'running',
    canStep: !isBusy && phase === 'paused',
    canStop: !isBusy && isActive,
    canReset: !isBusy && phase !== 'idle' && phase !== 'starting',
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
