/**
 * Loading a task file in the page: FTRL-format JSONL (one task a line: messages,
 * tools, codes, unsolved_set, answer, data_source) through the same importer the
 * CLI and tests use (src/envs/ftrl). The summary is what the Task files panel shows.
 */
import { formatFtrlLineError, parseFtrlJsonl } from '../envs/ftrl/importFtrl';
import type { Task, TaskCategory } from '../envs/types';

export interface TaskFileSummary {
  fileName: string;
  tasks: Task[];
  byCategory: Partial<Record<TaskCategory, number>>;
  /** Sub-questions (expected answers) over all tasks. */
  nSubQuestions: number;
  /** Lines not imported, as "line N, FIELD: reason". */
  errors: string[];
  /** Imported lines with remarks. */
  warnings: string[];
}

/** Largest file the page reads (FTRL's test set is ~2 MB). */
export const MAX_TASK_FILE_BYTES = 64 * 1024 * 1024;

export function summarizeFtrlFile(fileName: string, text: string): TaskFileSummary {
  const { tasks, errors, warnings } = parseFtrlJsonl(text);
  const byCategory: Partial<Record<TaskCategory, number>> = {};
  let nSubQuestions = 0;
  for (const t of tasks) {
    byCategory[t.category] = (byCategory[t.category] ?? 0) + 1;
    nSubQuestions += Object.values(t.unsolvedSet).reduce((s, a) => s + a.length, 0);
  }
  return {
    fileName,
    tasks,
    byCategory,
    nSubQuestions,
    errors: errors.map(formatFtrlLineError),
    warnings: warnings.map(formatFtrlLineError),
  };
}

/**
 * Why `bytes` is not a text file, or null when it is: a NUL byte (every binary format the page
 * is likely to be given has one early: archives, images, safetensors, wasm), or bytes that are
 * not UTF-8. JSONL is UTF-8 text without NUL.
 */
export function describeBinaryContent(bytes: Uint8Array): string | null {
  const nul = bytes.indexOf(0);
  if (nul >= 0) return `a NUL byte at byte ${nul}`;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'bytes that are not UTF-8 text';
  }
  return null;
}

/** Reads a user's file, refusing what is clearly not a task file before parsing; returns its summary and text. */
export async function readFtrlFile(file: File): Promise<{ summary: TaskFileSummary; text: string }> {
  if (file.size > MAX_TASK_FILE_BYTES) {
    throw new Error(
      `${file.name} is ${(file.size / 2 ** 20).toFixed(0)} MiB; the page reads task files up to ${MAX_TASK_FILE_BYTES / 2 ** 20} MiB`,
    );
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  const binary = describeBinaryContent(bytes);
  if (binary !== null) {
    throw new Error(
      `${file.name} is not a JSONL text file (it holds ${binary}): expected one FTRL task (JSON object) per line`,
    );
  }
  const text = new TextDecoder('utf-8').decode(bytes);
  const summary = summarizeFtrlFile(file.name, text);
  if (summary.tasks.length === 0 && summary.errors.length === 0)
    throw new Error(`${file.name} is empty: expected one FTRL task (JSON object) per line`);
  return { summary, text };
}
