/**
 * The BFCL evaluation form of the Task files panel, as pure functions: the settings read from
 * the form's text with an error per field (`pact eval-bfcl`'s flags and defaults: 512
 * response tokens per step, BFCL's 20 steps per turn, a 10 s limit per backend request), and
 * the window the picked policy has (for the "fit the window" count before Evaluate).
 */
import type { BackendName } from '../model/backend';
import type { BfclEvalSettings } from '../../workers/protocol';

export interface BfclEvalFormValues {
  /** '' = every entry. */
  limit: string;
  maxResponseTokens: string;
  maxSteps: string;
  toolTimeoutMs: string;
  backend: BackendName;
}

type NumberField = Exclude<keyof BfclEvalFormValues, 'backend'>;

/** Allowed ranges (inclusive). */
export const BFCL_EVAL_RANGES: Readonly<Record<NumberField, { min: number; max: number }>> = {
  limit: { min: 1, max: 100_000 },
  maxResponseTokens: { min: 1, max: 32_768 },
  maxSteps: { min: 1, max: 100 },
  toolTimeoutMs: { min: 100, max: 600_000 },
};

export function readDefaultBfclEvalForm(): BfclEvalFormValues {
  return { limit: '', maxResponseTokens: '512', maxSteps: '20', toolTimeoutMs: '10000', backend: 'webgpu' };
}

export interface BfclEvalFormResult {
  settings: BfclEvalSettings | null;
  errors: Partial<Record<NumberField, string>>;
}

/** The settings the form describes, or an error per field in words. */
export function readBfclEvalForm(values: BfclEvalFormValues): BfclEvalFormResult {
  const errors: Partial<Record<NumberField, string>> = {};
  const numbers: Partial<Record<NumberField, number>> = {};
  for (const field of Object.keys(BFCL_EVAL_RANGES) as NumberField[]) {
    const text = values[field].trim();
    if (text === '' && field === 'limit') continue;
    const { min, max } = BFCL_EVAL_RANGES[field];
    const value = /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
    if (text === '') errors[field] = 'is required';
    else if (!Number.isInteger(value) || value < min || value > max)
      errors[field] = `must be an integer from ${min} to ${max}, got ${text}`;
    else numbers[field] = value;
  }
  if (Object.keys(errors).length > 0) return { settings: null, errors };
  return {
    settings: {
      ...(numbers.limit !== undefined ? { limit: numbers.limit } : {}),
      maxResponseTokens: numbers.maxResponseTokens!,
      maxSteps: numbers.maxSteps!,
      toolTimeoutMs: numbers.toolTimeoutMs!,
      backend: values.backend,
    },
    errors,
  };
}

/** The shipped warm start's window (qwen3-nano). */
export const WARM_START_WINDOW = 2048;

/** The window of the chosen policy, when the page knows it (a saved run's checkpoint: read only at Evaluate). */
export function readPolicyWindow(choice: string, folderWindow: number | null): number | null {
  if (choice === 'warm-start') return WARM_START_WINDOW;
  if (choice === 'folder') return folderWindow;
  return null;
}
