/**
 * An FTRL run's tasks for the VeRL export: the same lines `pact train` trains and evaluates on
 * (run/ftrlTaskSplit.ts readFtrlRunSplit, which pact train's runAssets.ts also calls: a
 * recipe that cannot train on FTRL tasks is refused before and after the file is read). The task file comes
 * from a reader, as in the run's platform: Node's reads tasks.path, else $PACT_FTRL_TASKS, else
 * ../shared/data/ftrl/test.jsonl (run/nodeRun.ts).
 */
import type { Task } from '../../envs/types';
import { getRecipe } from '../../recipes/allRecipes';
import type { TrainConfig } from '../../recipes/config';
import { readFtrlRunSplit, type FtrlTaskSplit } from '../../run/ftrlTaskSplit';

/** Reads a task file by the config's name for it (undefined: the platform's default file). */
export type ReadTaskFile = (path: string | undefined) => Promise<{ name: string; text: string }>;

export interface FtrlExportTasks {
  train: Task[];
  test: Task[];
  split: FtrlTaskSplit;
}

/** The train and held-out tasks of an FTRL run, as pact train splits them; throws as pact train refuses. */
export async function loadFtrlExportTasks(config: TrainConfig, readTaskFile: ReadTaskFile): Promise<FtrlExportTasks> {
  const result = await readFtrlRunSplit(getRecipe(config.recipe), config, readTaskFile);
  return { train: result.train.map((t) => t.task), test: result.test.map((t) => t.task), split: result.split };
}
