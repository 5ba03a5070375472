/**
 * Experiment files (`experiments/NAME.json`): one file = a grid of training runs, read by
 * `pact train --config FILE` and by the experiment runner (scripts/browserExperiment.ts). The format: docs/runs.md.
 *
 * Each run's config = base deep-merged with the run's fields (objects merge key by key,
 * arrays and scalars replace), then `seed` from `seeds`; the run's `name` (default: its
 * recipe) is not a config field. Runs expand as runs × seeds, in file order, with ids
 * `<run name>-s<seed>`; every config is validated by resolveConfig, so an error names the
 * run and the field (`runs[1] (q0): config.pact.anchorProb: must be ≤ 1`).
 * `overrides` (e.g. `--steps 2` on the command line) are merged last into every run.
 * A file nested deeper than MAX_CONFIG_DEPTH (+ 2 for `runs[i]`) or holding a "__proto__"
 * key anywhere is refused with the path, before anything is merged.
 */
import { excerptValue, findJsonHazard, limitText, setOwn } from '../core/untrustedJson';
import { ConfigError, MAX_CONFIG_DEPTH, resolveConfig, type TrainConfig } from '../recipes/config';

export interface ExperimentFile {
  name?: string;
  description?: string;
  base?: Record<string, unknown>;
  runs?: Record<string, unknown>[];
  seeds?: number[];
}

export interface ExperimentRun {
  /** `<run name>-s<seed>`, unique within the experiment. */
  id: string;
  /** The run's name (its recipe by default). */
  name: string;
  seed: number;
  config: TrainConfig;
}

export interface Experiment {
  name: string;
  description?: string;
  runs: ExperimentRun[];
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** base ← over: objects merge key by key (own keys only), anything else replaces. */
export function mergeDeep(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = Object.hasOwn(out, key) ? out[key] : undefined;
    setOwn(out, key, isPlainObject(value) && isPlainObject(prev) ? mergeDeep(prev, value) : value);
  }
  return out;
}

const FILE_FIELDS = new Set(['name', 'description', 'base', 'runs', 'seeds']);

/**
 * Expands an experiment file into validated runs.
 * @param json the parsed file
 * @param options.defaultName name when the file has none (the file name)
 * @param options.recipeNames names that "*" expands to (listRecipes())
 * @param options.overrides merged into every run last (command-line flags)
 */
export function expandExperiment(
  json: unknown,
  options: { defaultName?: string; recipeNames?: readonly string[]; overrides?: Record<string, unknown> } = {},
): Experiment {
  if (!isPlainObject(json)) throw new Error('experiment: the file must hold a JSON object {base, runs, seeds}');
  // experiment → runs → [i] → config fields: two levels more than a config.
  const hazard = findJsonHazard(json, MAX_CONFIG_DEPTH + 2);
  if (hazard) {
    const where = hazard.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${limitText(k, 40)}`)).join('');
    throw new Error(`experiment${where}: ${hazard.message}`);
  }
  for (const key of Object.keys(json)) {
    if (!FILE_FIELDS.has(key))
      throw new Error(`experiment: unknown field ${excerptValue(key)}; valid: ${[...FILE_FIELDS].join(', ')}`);
  }
  const file = json as ExperimentFile;
  if (file.base !== undefined && !isPlainObject(file.base))
    throw new Error('experiment.base: must be an object of config fields');
  if (file.runs !== undefined && (!Array.isArray(file.runs) || !file.runs.every(isPlainObject))) {
    throw new Error('experiment.runs: must be an array of objects');
  }
  if (
    file.seeds !== undefined &&
    (!Array.isArray(file.seeds) || file.seeds.length === 0 || !file.seeds.every((s) => Number.isInteger(s) && s >= 0))
  ) {
    throw new Error('experiment.seeds: must be a non-empty array of integers ≥ 0');
  }
  const base = file.base ?? {};
  const seeds = file.seeds ?? [typeof base.seed === 'number' ? base.seed : 1];
  const runSpecs: { name: string; fields: Record<string, unknown>; where: string }[] = [];
  (file.runs ?? [{}]).forEach((run, r) => {
    const { name, ...fields } = run;
    if (name !== undefined && typeof name !== 'string') throw new Error(`experiment.runs[${r}].name: must be a string`);
    if (fields.recipe === '*') {
      if (!options.recipeNames)
        throw new Error(`experiment.runs[${r}]: recipe "*" needs the list of registered recipes`);
      for (const recipe of options.recipeNames)
        runSpecs.push({
          name: name ? `${name}-${recipe}` : recipe,
          fields: { ...fields, recipe },
          where: `runs[${r}] (${recipe})`,
        });
    } else {
      const merged = mergeDeep(base, fields);
      const runName = name ?? (typeof merged.recipe === 'string' ? merged.recipe : 'run');
      runSpecs.push({ name: runName, fields, where: `runs[${r}] (${runName})` });
    }
  });
  const runs: ExperimentRun[] = [];
  const ids = new Set<string>();
  for (const spec of runSpecs) {
    for (const seed of seeds) {
      const input = withSeedInInit(
        mergeDeep(mergeDeep(mergeDeep(base, spec.fields), { seed, name: spec.name }), options.overrides ?? {}),
        seed,
      );
      let config: TrainConfig;
      try {
        config = resolveConfig(input);
      } catch (e) {
        if (e instanceof ConfigError) throw new Error(`experiment ${spec.where}: ${e.issues.join('; ')}`);
        throw e;
      }
      const id = `${spec.name}-s${seed}`;
      if (ids.has(id)) throw new Error(`experiment: two runs are both named "${id}"; give them distinct "name"s`);
      ids.add(id);
      runs.push({ id, name: spec.name, seed, config });
    }
  }
  return {
    name: typeof file.name === 'string' ? file.name : (options.defaultName ?? 'experiment'),
    description: file.description,
    runs,
  };
}

/**
 * `model.init` may name the run's seed as `{seed}`: each seed of a row starts from that
 * seed's checkpoint of another experiment (`runs/table1/pact-s{seed}/checkpoint-32`), so a
 * trained row can be evaluated again on another held-out set, paired by seed.
 */
function withSeedInInit(input: Record<string, unknown>, seed: number): Record<string, unknown> {
  const model = input.model;
  if (!isPlainObject(model) || typeof model.init !== 'string' || !model.init.includes('{seed}')) return input;
  return { ...input, model: { ...model, init: model.init.replaceAll('{seed}', String(seed)) } };
}
