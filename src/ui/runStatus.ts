/**
 * One wording of where a run stands, shared by the status line and the Runs panel so the two
 * always agree: the page's own live run is read from the worker's state (with a Pause or Stop
 * that waits for the step to end), a saved run from IndexedDB, where `running` without a live
 * worker (workers/runLock.ts) means the tab that trained it was reloaded or closed. Also: what
 * Resume would do for a saved run, and a failed run's report as text to copy.
 */
import type { RunFailureReport } from '../../workers/protocol';
import type { RunRecord } from '../storage/schema';
import type { ControlPhase } from './trainingControls';

export type RunDisplayStatus =
  | 'starting'
  | 'running'
  | 'pausing'
  | 'paused'
  | 'stopping'
  | 'stopped'
  | 'finished'
  | 'failed'
  | 'interrupted'
  | 'elsewhere';

export const STATUS_WORDS: Readonly<Record<RunDisplayStatus, string>> = {
  starting: 'starting',
  running: 'running',
  pausing: 'pausing after this step',
  paused: 'paused',
  stopping: 'stopping after this step',
  stopped: 'stopped',
  finished: 'finished',
  failed: 'failed',
  interrupted: 'interrupted',
  elsewhere: 'running in another tab',
};

/** The run this page's worker holds, as TrainingState sees it. */
export interface LiveRun {
  runId: string;
  phase: ControlPhase;
  /** A Pause or Stop the worker accepted, which takes effect when the step ends. */
  pendingControl: 'pause' | 'stop' | null;
}

/**
 * Where `run` stands. `live`: this page's loaded run (null when it holds none); `liveElsewhere`:
 * the runs whose lock is held in any tab (null when the browser cannot tell).
 */
export function computeRunStatus(
  run: Pick<RunRecord, 'id' | 'status'>,
  live: LiveRun | null,
  liveElsewhere: ReadonlySet<string> | null,
): RunDisplayStatus {
  if (live && live.runId === run.id) {
    switch (live.phase) {
      case 'starting':
        return 'starting';
      case 'running':
        return live.pendingControl === 'pause' ? 'pausing' : live.pendingControl === 'stop' ? 'stopping' : 'running';
      case 'paused':
        return live.pendingControl === 'stop' ? 'stopping' : 'paused';
      case 'stopped':
      case 'finished':
      case 'failed':
        return live.phase;
      default:
        break; // idle / interrupted: the page holds nothing live, read the saved record
    }
  }
  switch (run.status) {
    case 'running':
    case 'created':
      return liveElsewhere?.has(run.id) ? 'elsewhere' : 'interrupted';
    default:
      return run.status;
  }
}

/** The step of a run's last checkpoint (ids are `<runId>@<step>`), or null when it has none. */
export function checkpointStepOf(run: Pick<RunRecord, 'lastCheckpointId'>): number | null {
  const id = run.lastCheckpointId;
  if (!id) return null;
  const step = Number(id.slice(id.lastIndexOf('@') + 1));
  return Number.isInteger(step) ? step : null;
}

/** What Resume does for a saved run, in words, or why it cannot. */
export type ResumePlan = { canResume: true; label: string; detail: string } | { canResume: false; why: string };

/** `isOtherRunActive`: this page's worker is busy with another run. */
export function planResume(
  run: Pick<RunRecord, 'lastCheckpointId' | 'lastStep'>,
  status: RunDisplayStatus,
  isOtherRunActive: boolean,
): ResumePlan {
  if (status === 'finished') return { canResume: false, why: 'finished: every step is done' };
  if (status === 'elsewhere') return { canResume: false, why: 'it is training in another tab of this browser' };
  if (['starting', 'running', 'pausing', 'stopping'].includes(status))
    return { canResume: false, why: 'it is training in this tab' };
  if (isOtherRunActive) return { canResume: false, why: 'another run is training in this tab: stop it first' };
  const step = checkpointStepOf(run);
  if (step === null) {
    return {
      canResume: true,
      label: 'Restart',
      detail: 'no checkpoint was saved yet: it starts again from step 0 with the same config',
    };
  }
  const lost = run.lastStep - step;
  return {
    canResume: true,
    label: 'Resume',
    detail: `continues from its checkpoint at step ${step}${lost > 0 ? ` (step${lost === 1 ? '' : 's'} after it, ${lost} logged, will be trained again)` : ''}`,
  };
}

/** A failure report as saved with the run (after a reload the page has only the record). */
export function failureOfRun(run: RunRecord): RunFailureReport | null {
  if (run.status !== 'failed' && !run.error) return null;
  return {
    runId: run.id,
    runName: run.name,
    message: run.error ?? 'no message was saved',
    stack: run.failure?.stack,
    step: run.failure?.step ?? run.lastStep + 1,
    config: run.config,
    backend: run.backend,
    at: run.failure?.at ?? run.updatedAt,
  };
}

/** The report a user can paste into an issue: what failed, where, on what, with which config. */
export function formatFailureReport(f: RunFailureReport, env: { userAgent?: string } = {}): string {
  return [
    `PACT Lab run failure`,
    `run: ${f.runName} (${f.runId})`,
    `step: ${f.step}`,
    `backend: ${f.backend ?? 'unknown'}`,
    `time: ${new Date(f.at).toISOString()}`,
    ...(env.userAgent ? [`browser: ${env.userAgent}`] : []),
    `message: ${f.message}`,
    `stack:`,
    f.stack ?? '(none was recorded)',
    `config:`,
    JSON.stringify(f.config, null, 2),
  ].join('\n');
}
