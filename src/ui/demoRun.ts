/**
 * The recorded demo run: a short run made by the project's own
 * trainer and shipped as `public/demo/demo-run.json`, shown, labelled as recorded,
 * before any training starts. Nothing is made up here: when the file is absent the
 * panels say so instead.
 *
 * File shape: `{ config, metrics: StepMetrics[], evals: EvalMetrics[], rollouts: RolloutGroupView[] }`.
 */
import type { EvalMetrics, StepMetrics } from '../recipes/types';
import type { RolloutGroupView } from '../../workers/protocol';

export const DEMO_RUN_URL = 'demo/demo-run.json';
/** A few ToolSearcher steps recorded the same way (experiments/demo-search.json): their step times only. */
export const DEMO_SEARCH_RUN_URL = 'demo/demo-search-run.json';
export const DEMO_RUN_LABEL = 'recorded demo run';

export interface DemoRun {
  config: Record<string, unknown>;
  /**
   * How it was recorded (the backend its step times were measured on, and on how many threads),
   * when the file says.
   */
  recordedWith?: { backend?: string; threads?: number };
  metrics: StepMetrics[];
  evals: EvalMetrics[];
  rollouts: RolloutGroupView[];
}

export type DemoLoad =
  { status: 'absent'; reason: string } | { status: 'ready'; run: DemoRun } | { status: 'error'; message: string };

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function checkRows(rows: unknown, field: string): void {
  if (!Array.isArray(rows)) throw new Error(`${field} must be an array`);
  rows.forEach((row, i) => {
    if (!isObject(row) || typeof row.step !== 'number') throw new Error(`${field}[${i}].step must be a number`);
  });
}

/** Checks the file's shape; errors name the field (`metrics[3].step must be a number`). */
export function parseDemoRun(json: unknown): DemoRun {
  if (!isObject(json)) throw new Error('the demo run must be a JSON object');
  if (!isObject(json.config)) throw new Error('config must be an object');
  checkRows(json.metrics, 'metrics');
  const evals = json.evals ?? [];
  checkRows(evals, 'evals');
  const rollouts = json.rollouts ?? [];
  if (!Array.isArray(rollouts)) throw new Error('rollouts must be an array');
  rollouts.forEach((g: unknown, i) => {
    if (!isObject(g) || typeof g.step !== 'number') throw new Error(`rollouts[${i}].step must be a number`);
    if (!Array.isArray(g.rollouts)) throw new Error(`rollouts[${i}].rollouts must be an array`);
    (g.rollouts as unknown[]).forEach((r, k) => {
      if (!isObject(r) || !Array.isArray(r.segments))
        throw new Error(`rollouts[${i}].rollouts[${k}].segments must be an array`);
      if (!Array.isArray(r.calls)) throw new Error(`rollouts[${i}].rollouts[${k}].calls must be an array`);
    });
  });
  const threads = isObject(json.recordedWith) ? json.recordedWith.threads : undefined;
  const recordedWith =
    isObject(json.recordedWith) && typeof json.recordedWith.backend === 'string'
      ? {
          recordedWith: {
            backend: json.recordedWith.backend,
            ...(Number.isInteger(threads) && (threads as number) > 0 ? { threads: threads as number } : {}),
          },
        }
      : {};
  return {
    config: json.config,
    ...recordedWith,
    metrics: json.metrics as StepMetrics[],
    evals: evals as EvalMetrics[],
    rollouts: rollouts as RolloutGroupView[],
  };
}

/**
 * Where an estimate scaled from a demo run comes from, in words: "the recorded demo run on
 * one thread" (a device with more cores steps faster than that), or without the thread count
 * when the file does not give it; `what` names the run ("the recorded search demo run").
 */
export function demoTimingSource(run: Pick<DemoRun, 'recordedWith'>, what = 'the recorded demo run'): string {
  const n = run.recordedWith?.threads;
  if (n === undefined) return what;
  return `${what} on ${n === 1 ? 'one thread' : `${n} threads`}`;
}

/**
 * Fetches and checks the demo run. A missing file (404, or the dev server's HTML
 * fallback page) is 'absent'; a file that is there but malformed is an 'error'.
 */
export async function fetchDemoRun(fetchFn: typeof fetch, url: string): Promise<DemoLoad> {
  let res: Response;
  try {
    res = await fetchFn(url);
  } catch (e) {
    return { status: 'absent', reason: `could not fetch ${url}: ${e instanceof Error ? e.message : String(e)}` };
  }
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok || type.includes('text/html')) {
    return { status: 'absent', reason: `this build ships no ${url}${res.ok ? '' : ` (HTTP ${res.status})`}` };
  }
  try {
    return { status: 'ready', run: parseDemoRun(await res.json()) };
  } catch (e) {
    return {
      status: 'error',
      message: `the recorded demo run (${url}) is malformed: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
}
