/**
 * `results/NAME/results.json`: everything an experiment produced, in one file.
 *
 * Every metric of every step is kept as the worker stored it; NaN (no value) is written
 * as null. `MACHINE_METRICS` (time, memory) depend on the machine, not on the config: they are
 * kept but left out when two runs are compared bit for bit.
 *
 * The file format: docs/runs.md.
 */
import { resolveConfig, type TrainConfig, type TrainConfigInput } from '../recipes/config';
import type { ExperimentResults, RunResult, StepRecord } from './types';

export { RESULTS_FORMAT } from './types';
export type { ExperimentResults, RunResult, RunStatus, StepRecord } from './types';

/** Metrics that measure the machine (time, memory), not the method; plus every `time/*` key. */
export const MACHINE_METRICS: readonly string[] = ['seconds', 'tokens/s', 'memory/bytes'];

export function isMachineMetric(key: string, ignore: readonly string[] = MACHINE_METRICS): boolean {
  return ignore.includes(key) || key.startsWith('time/');
}

/** Stored metric rows → step records, ascending by step; NaN/±Infinity become null (JSON has none). */
export function toStepRecords(rows: readonly { step: number; values: Record<string, number> }[]): StepRecord[] {
  return [...rows]
    .sort((a, b) => a.step - b.step)
    .map((r) => ({
      step: r.step,
      values: Object.fromEntries(
        Object.keys(r.values)
          .sort()
          .map((k) => [k, Number.isFinite(r.values[k]) ? r.values[k] : null]),
      ),
    }));
}

/** Two-space JSON with a final newline; a non-finite number (JSON has none) is written as null. */
function formatJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2) + '\n';
}

/** results.json text (NaN never reaches it: see toStepRecords). */
export function formatResultsJson(results: ExperimentResults): string {
  return formatJson(results);
}

/** runs/<run id>.json text: one finished or failed run, as in results.json (`--resume` reads it back). */
export function formatRunJson(run: RunResult): string {
  return formatJson(run);
}

/**
 * Differences between the metrics of two experiments' runs, bit for bit (Object.is on
 * every value: -0 ≠ 0, NaN = NaN), machine metrics (time, memory) left out. Empty = identical.
 */
export function compareRunMetrics(
  a: readonly RunResult[],
  b: readonly RunResult[],
  ignore: readonly string[] = MACHINE_METRICS,
): string[] {
  const out: string[] = [];
  const byId = new Map(b.map((r) => [r.id, r]));
  if (a.length !== b.length) out.push(`run count: ${a.length} vs ${b.length}`);
  for (const ra of a) {
    const rb = byId.get(ra.id);
    if (!rb) {
      out.push(`${ra.id}: missing in the second experiment`);
      continue;
    }
    if (ra.status !== rb.status) out.push(`${ra.id}: status ${ra.status} vs ${rb.status}`);
    if (ra.steps.length !== rb.steps.length) out.push(`${ra.id}: ${ra.steps.length} vs ${rb.steps.length} steps`);
    ra.steps.forEach((sa, i) => {
      const sb = rb.steps[i];
      if (!sb) return;
      if (sa.step !== sb.step) out.push(`${ra.id}: row ${i} is step ${sa.step} vs ${sb.step}`);
      const keys = new Set([...Object.keys(sa.values), ...Object.keys(sb.values)]);
      for (const k of [...keys].sort()) {
        if (isMachineMetric(k, ignore)) continue;
        if (!(k in sa.values) || !(k in sb.values)) out.push(`${ra.id} step ${sa.step}: ${k} only in one`);
        else if (!Object.is(sa.values[k], sb.values[k]))
          out.push(`${ra.id} step ${sa.step}: ${k} ${sa.values[k]} vs ${sb.values[k]}`);
      }
    });
  }
  return out;
}

/**
 * Paths where two JSON values differ (`pact.objective: "Lx" vs "Lh"`), objects compared key by
 * key in any order, everything else by its JSON text; empty = the same. The runner checks the
 * page's setup and the worker's config with it, and `--resume` a stored run's config.
 */
export function diffJson(a: unknown, b: unknown, at = ''): string[] {
  if (
    typeof a === 'object' &&
    a !== null &&
    typeof b === 'object' &&
    b !== null &&
    !Array.isArray(a) &&
    !Array.isArray(b)
  ) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) =>
      diffJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], at ? `${at}.${k}` : k),
    );
  }
  return JSON.stringify(a) === JSON.stringify(b)
    ? []
    : [`${at || '(root)'}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`];
}

/**
 * `npm run experiment -- … --resume`: which runs of an earlier, interrupted invocation can be
 * kept. A stored run is kept when it finished and its config, resolved again by
 * `resolveConfig`, equals the run's resolved config on this backend (`{ ...config, backend }`,
 * as the runner stores it); a failed run, a changed config (other sizes, another backend) or a
 * file that is not a run result runs again. Resolving the stored config again fills only the
 * fields added to the schema since it was written, with their defaults (a stored config holds
 * every field it had, so an older value of a field that existed is compared, not replaced): a
 * new field's default keeps what runs did before it existed, so those runs stay comparable.
 * A stored config the schema no longer accepts runs again.
 */
export function pickResumableRuns(
  runs: readonly { id: string; config: object }[],
  stored: readonly unknown[],
  backend: string,
): Map<string, RunResult> {
  const byId = new Map<string, RunResult>();
  for (const s of stored) {
    const r = s as Partial<RunResult> | null;
    if (r && typeof r.id === 'string' && r.status === 'finished' && Array.isArray(r.steps))
      byId.set(r.id, r as RunResult);
  }
  const kept = new Map<string, RunResult>();
  for (const run of runs) {
    const r = byId.get(run.id);
    if (!r) continue;
    let storedConfig: TrainConfig;
    try {
      storedConfig = resolveConfig(r.config as TrainConfigInput);
    } catch {
      continue;
    }
    if (diffJson(storedConfig, { ...run.config, backend }).length === 0) kept.set(run.id, r);
  }
  return kept;
}
