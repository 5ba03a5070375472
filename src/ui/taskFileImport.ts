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

/** Reads a user's file, refusing what is clearly not a task file before parsing; returns its summary and text. */
export async function readFtrlFile(file: File): Promise<{ summary: TaskFileSummary; text: string }> {
  if (file.size > MAX_TASK_FILE_BYTES) {
    throw new Error(
      `${file.name} is ${(file.size / 2 ** 20).toFixed(0)} MiB; the page reads task files up to ${MAX_TASK_FILE_BYTES / 2 ** 20} MiB`,
    );
  }
  const text = await file.text();
  const summary = summarizeFtrlFile(file.name, text);
  if (summary.tasks.length === 0 && summary.errors.length === 0)
    throw new Error(`${file.name} is empty: expected one FTRL task (JSON object) per line`);
  return { summary, text };
}
