/**
 * Where Node finds an FTRL run's task file, and how it reads it: `tasks.path`, else
 * $PACT_FTRL_TASKS, else ../shared/data/ftrl/test.jsonl when it exists (never part of the
 * repository). Shared by `pact train` (nodeRun.ts) and `pact export verl` (export/verl/exportVerl.ts);
 * a module of its own so the exporter reads the file without loading the training code. Node only.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** Where FTRL's test file is found when neither the config nor $PACT_FTRL_TASKS names one. */
export const DEFAULT_FTRL_TASKS = path.join('..', 'shared', 'data', 'ftrl', 'test.jsonl');

/** The FTRL task file of a run: the config's path, else $PACT_FTRL_TASKS, else DEFAULT_FTRL_TASKS when it exists. */
export function resolveFtrlTaskFile(file: string | undefined, env: Record<string, string | undefined>): string {
  if (file !== undefined) return file;
  if (env.PACT_FTRL_TASKS) return env.PACT_FTRL_TASKS;
  if (existsSync(DEFAULT_FTRL_TASKS)) return DEFAULT_FTRL_TASKS;
  throw new Error(
    `config.tasks.path: no FTRL task file: set tasks.path, or PACT_FTRL_TASKS=PATH, or put FTRL's test.jsonl at ${DEFAULT_FTRL_TASKS} (it is never part of the repository)`,
  );
}

/** Reads the task file the config names (resolveFtrlTaskFile); `name` is the path the run reports. */
export async function readNodeFtrlTaskFile(
  file: string | undefined,
  env: Record<string, string | undefined> = process.env,
): Promise<{ name: string; text: string }> {
  const name = resolveFtrlTaskFile(file, env);
  const text = await readFile(name, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new Error(`config.tasks: cannot read the FTRL task file ${name}: ${e.code ?? e.message}`);
  });
  return { name, text };
}
