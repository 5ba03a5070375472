/**
 * Evaluation experiment files ("kind": "ftrl-eval"): `experiments/ftrl-eval.json` evaluates a
 * trained policy on FTRL's test tasks instead of training. The task file is public benchmark
 * data and never part of the repository, so it is NOT in the file: it comes from the command
 * line (`npm run experiment -- experiments/ftrl-eval.json --tasks PATH`, else $PACT_FTRL_TASKS).
 *
 * Every error names the field (`ftrl-eval.perCategory: must be an integer ≥ 1, got 0`).
 * The same range checks serve the app's evaluation form (src/ui/ftrlEvalForm.ts).
 *
 * The file format: docs/runs.md.
 */
import { DEFAULT_FTRL_EVAL_SETTINGS, type FtrlEvalSettings } from '../run/ftrlEvalSettings';

export const FTRL_EVAL_KIND = 'ftrl-eval';

/** The numeric settings, with their allowed ranges (inclusive). */
export const FTRL_EVAL_LIMITS = {
  perCategory: { min: 1, max: 100_000 },
  maxTurns: { min: 1, max: 32 },
  maxResponseTokens: { min: 1, max: 32_768 },
  toolTimeoutMs: { min: 100, max: 600_000 },
} as const;

export type FtrlEvalNumberField = keyof typeof FTRL_EVAL_LIMITS;

export type FtrlEvalBackendChoice = 'auto' | 'webgpu' | 'wasm';

export interface FtrlEvalExperiment {
  kind: typeof FTRL_EVAL_KIND;
  name: string;
  description?: string;
  /** "warm-start" or "folder:PATH". */
  policy: string;
  backend: FtrlEvalBackendChoice;
  settings: Omit<FtrlEvalSettings, 'backend'>;
}

const FILE_FIELDS = [
  'kind',
  'name',
  'description',
  'policy',
  'perCategory',
  'maxTurns',
  'maxResponseTokens',
  'toolTimeoutMs',
  'backend',
];

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** True for an evaluation file (`"kind": "ftrl-eval"`); training files have no `kind`. */
export function isFtrlEvalFile(json: unknown): boolean {
  return isPlainObject(json) && json.kind === FTRL_EVAL_KIND;
}

/**
 * Checks one numeric setting; returns the message naming what is wrong, or null.
 * `undefined` is allowed (the default applies).
 */
export function checkFtrlEvalNumber(field: FtrlEvalNumberField, value: unknown): string | null {
  if (value === undefined) return null;
  const { min, max } = FTRL_EVAL_LIMITS[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    return `must be an integer from ${min} to ${max}, got ${typeof value === 'number' && Number.isNaN(value) ? 'text that is not a number' : JSON.stringify(value)}`;
  }
  return null;
}

/** Parses and validates an evaluation file; throws naming the field. */
export function parseFtrlEvalExperiment(json: unknown, options: { defaultName?: string } = {}): FtrlEvalExperiment {
  if (!isPlainObject(json)) throw new Error('ftrl-eval: the file must hold a JSON object');
  if (json.kind !== FTRL_EVAL_KIND)
    throw new Error(`ftrl-eval.kind: must be "${FTRL_EVAL_KIND}", got ${JSON.stringify(json.kind)}`);
  for (const key of Object.keys(json)) {
    if (!FILE_FIELDS.includes(key)) {
      const hint =
        key === 'tasks' || key === 'tasksFile'
          ? ' (the task file comes from the command line: --tasks PATH or $PACT_FTRL_TASKS)'
          : '';
      throw new Error(`ftrl-eval: unknown field "${key}"${hint}; valid: ${FILE_FIELDS.join(', ')}`);
    }
  }
  if (json.name !== undefined && (typeof json.name !== 'string' || json.name.trim() === ''))
    throw new Error('ftrl-eval.name: must be a non-empty string');
  if (json.description !== undefined && typeof json.description !== 'string')
    throw new Error('ftrl-eval.description: must be a string');
  const policy = json.policy ?? 'warm-start';
  if (
    typeof policy !== 'string' ||
    !(policy === 'warm-start' || (policy.startsWith('folder:') && policy.length > 'folder:'.length))
  ) {
    throw new Error(
      `ftrl-eval.policy: must be "warm-start" or "folder:PATH" (a Qwen3 folder), got ${JSON.stringify(policy)}`,
    );
  }
  const backend = json.backend ?? 'auto';
  if (backend !== 'auto' && backend !== 'webgpu' && backend !== 'wasm')
    throw new Error(`ftrl-eval.backend: must be auto, webgpu or wasm, got ${JSON.stringify(backend)}`);
  for (const field of Object.keys(FTRL_EVAL_LIMITS) as FtrlEvalNumberField[]) {
    const value = field === 'perCategory' && json[field] === null ? undefined : json[field];
    const problem = checkFtrlEvalNumber(field, value);
    if (problem) throw new Error(`ftrl-eval.${field}: ${problem}`);
  }
  const num = (field: FtrlEvalNumberField) => json[field] as number | undefined;
  return {
    kind: FTRL_EVAL_KIND,
    name: typeof json.name === 'string' ? json.name : (options.defaultName ?? FTRL_EVAL_KIND),
    ...(typeof json.description === 'string' ? { description: json.description } : {}),
    policy,
    backend,
    settings: {
      ...(typeof num('perCategory') === 'number' ? { perCategory: num('perCategory') } : {}),
      maxTurns: num('maxTurns') ?? DEFAULT_FTRL_EVAL_SETTINGS.maxTurns,
      maxResponseTokens: num('maxResponseTokens') ?? DEFAULT_FTRL_EVAL_SETTINGS.maxResponseTokens,
      toolTimeoutMs: num('toolTimeoutMs') ?? DEFAULT_FTRL_EVAL_SETTINGS.toolTimeoutMs,
    },
  };
}

/** `--smoke`: at most 2 tasks per category, 2 turns, 64 response tokens; the rest kept. */
export const FTRL_EVAL_SMOKE = Object.freeze({ perCategory: 2, maxTurns: 2, maxResponseTokens: 64 });

export function shrinkFtrlEvalForSmoke(exp: FtrlEvalExperiment): FtrlEvalExperiment {
  const s = exp.settings;
  return {
    ...exp,
    settings: {
      ...s,
      perCategory: Math.min(s.perCategory ?? Infinity, FTRL_EVAL_SMOKE.perCategory),
      maxTurns: Math.min(s.maxTurns, FTRL_EVAL_SMOKE.maxTurns),
      maxResponseTokens: Math.min(s.maxResponseTokens, FTRL_EVAL_SMOKE.maxResponseTokens),
    },
  };
}

/** The task file: `--tasks PATH`, else $PACT_FTRL_TASKS; a clear error when neither is given. */
export function resolveFtrlTasksPath(flag: string | undefined, env: Record<string, string | undefined>): string {
  const path = flag ?? env.PACT_FTRL_TASKS;
  if (!path) {
    throw new Error(
      "ftrl-eval needs the FTRL task file (JSONL, e.g. FTRL's test.jsonl; it is never part of the repository): pass --tasks PATH, or set PACT_FTRL_TASKS=PATH",
    );
  }
  return path;
}
