/**
 * The FTRL evaluation form of the Task files panel, as pure functions:
 * the policy choices (the shipped warm start, each saved run's newest checkpoint, a picked
 * Qwen3 folder), and the settings read from the form's text with an error per field (the
 * ranges of src/experiments/ftrlEvalConfig.ts, shared with the experiment files).
 */
import { checkFtrlEvalNumber, type FtrlEvalNumberField } from '../experiments/ftrlEvalConfig';
import { DEFAULT_FTRL_EVAL_SETTINGS, type FtrlEvalSettings } from '../run/ftrlEvalSettings';
import type { BackendName } from '../model/backend';
import type { RunRecord } from '../storage/schema';
import type { EvalPolicySpec } from '../../workers/protocol';

export interface FtrlEvalFormValues {
  /** '' = every task. */
  perCategory: string;
  maxTurns: string;
  maxResponseTokens: string;
  toolTimeoutMs: string;
  backend: BackendName;
}

export function readDefaultFtrlEvalForm(): FtrlEvalFormValues {
  const d = DEFAULT_FTRL_EVAL_SETTINGS;
  return {
    perCategory: '',
    maxTurns: String(d.maxTurns),
    maxResponseTokens: String(d.maxResponseTokens),
    toolTimeoutMs: String(d.toolTimeoutMs),
    backend: d.backend,
  };
}

export interface FtrlEvalFormResult {
  settings: FtrlEvalSettings | null;
  errors: Partial<Record<FtrlEvalNumberField, string>>;
}

/** The settings the form describes, or an error per field in words. */
export function readFtrlEvalForm(values: FtrlEvalFormValues): FtrlEvalFormResult {
  const errors: Partial<Record<FtrlEvalNumberField, string>> = {};
  const numbers: Partial<Record<FtrlEvalNumberField, number>> = {};
  for (const field of ['perCategory', 'maxTurns', 'maxResponseTokens', 'toolTimeoutMs'] as const) {
    const text = values[field].trim();
    if (text === '' && field === 'perCategory') continue;
    const value = /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
    const problem = text === '' ? 'is required' : checkFtrlEvalNumber(field, value);
    if (problem) errors[field] = problem;
    else numbers[field] = value;
  }
  if (Object.keys(errors).length > 0) return { settings: null, errors };
  return {
    settings: {
      ...(numbers.perCategory !== undefined ? { perCategory: numbers.perCategory } : {}),
      maxTurns: numbers.maxTurns!,
      maxResponseTokens: numbers.maxResponseTokens!,
      toolTimeoutMs: numbers.toolTimeoutMs!,
      backend: values.backend,
    },
    errors,
  };
}

export interface PolicyChoice {
  /** 'warm-start', 'checkpoint:<run id>' or 'folder'. */
  value: string;
  label: string;
}

/** The step of a checkpoint id `<run id>@<step>`. */
function readCheckpointStep(id: string): string {
  const at = id.lastIndexOf('@');
  return at >= 0 ? id.slice(at + 1) : '?';
}

/** What the policy menu offers: the warm start, each saved run that has a checkpoint, the picked folder. */
export function listPolicyChoices(
  runs: readonly Pick<RunRecord, 'id' | 'name' | 'recipe' | 'lastCheckpointId'>[],
  folderName?: string | null,
): PolicyChoice[] {
  const choices: PolicyChoice[] = [
    { value: 'warm-start', label: 'Shipped warm start (qwen3-nano, 2048-token window)' },
  ];
  for (const run of runs) {
    if (!run.lastCheckpointId) continue;
    const name = run.name && run.name !== run.id ? `${run.recipe} · ${run.name}` : `${run.recipe} · ${run.id}`;
    choices.push({
      value: `checkpoint:${run.id}`,
      label: `Saved run ${name}, checkpoint at step ${readCheckpointStep(run.lastCheckpointId)}`,
    });
  }
  if (folderName) choices.push({ value: 'folder', label: `Your Qwen3 folder "${folderName}"` });
  return choices;
}

/** The request's policy for a menu value. */
export function toPolicySpec(value: string, folder: { name: string; files: readonly File[] } | null): EvalPolicySpec {
  if (value === 'warm-start') return { kind: 'warm-start' };
  if (value.startsWith('checkpoint:')) return { kind: 'checkpoint', runId: value.slice('checkpoint:'.length) };
  if (value === 'folder') {
    if (!folder) throw new Error('pick a Qwen3 folder first');
    // a plain array of the File objects: a $state proxy of the list would not clone
    return { kind: 'folder', name: folder.name, files: [...folder.files] };
  }
  throw new Error(`unknown policy choice "${value}"`);
}
