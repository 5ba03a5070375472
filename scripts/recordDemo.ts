/**
 * `npm run record-demo`: records the demo run the app shows before any training
 * (public/demo/demo-run.json): a short PACT run from the shipped warm start, made by
 * the project's own Trainer on wasm, with its step metrics, held-out evaluations and
 * the rollout views of the last step (the same views the worker posts to the page).
 * Reproducible from the experiment file and seed; the app labels it "recorded".
 *
 *   npm run record-demo -- [--config experiments/demo.json] [--steps N] [--out public/demo/demo-run.json]
 * The search demo (its step times estimate a search run before the user's first step):
 *   npm run record-demo -- --config experiments/demo-search.json --out public/demo/demo-search-run.json
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const { prepareTfjs } = await import('../src/cli/commands/score');
  // One thread: a browser with more cores trains faster than the estimate made from this.
  const prepared = await prepareTfjs('wasm', { threads: 1 });
  await import('../src/recipes');
  const { resolveConfig } = await import('../src/recipes/config');
  const { expandExperiment } = await import('../src/run/experimentFile');
  const { listRecipes } = await import('../src/recipes/registry');
  const { prepareRunAssets, createRunTrainer } = await import('../src/run/nodeRun');
  const { buildRolloutViews } = await import('../src/recipes/rollouts/rolloutViews');
  const { runTrainingLoop } = await import('../src/run/runLoop');

  const configPath = path.resolve(ROOT, flag('config') ?? 'experiments/demo.json');
  const experiment = JSON.parse(await readFile(configPath, 'utf8'));
  const steps = flag('steps');
  const [run] = expandExperiment(experiment, {
    recipeNames: listRecipes(),
    overrides: steps ? { steps: Number(steps) } : {},
  }).runs;
  const config = resolveConfig(run.config);
  const assets = await prepareRunAssets(config, { publicDir: path.join(ROOT, 'public'), log: (l) => console.log(l) });
  const trainer = createRunTrainer(config, assets);
  const metrics: Awaited<ReturnType<typeof trainer.step>>[] = [];
  let rollouts: ReturnType<typeof buildRolloutViews> = [];
  // The run loop of `pact train` and the app (src/run/runLoop.ts), with the starting policy
  // always evaluated (the demo's charts begin at step 0) and nothing checkpointed.
  const { evals } = await runTrainingLoop(
    trainer,
    { totalSteps: config.steps, evalEvery: config.evalEvery, evalAtStart: true, checkpointEvery: 0 },
    {
      onStep: (m) => {
        metrics.push(m);
        rollouts = buildRolloutViews(
          m.step,
          trainer.lastGroups,
          trainer.lastScores,
          trainer.lastRoutes,
          config,
          trainer.tokenizer,
        );
        console.log(
          `step ${m.step}/${config.steps}: reward ${m.reward.toFixed(3)} loss ${m.loss.toFixed(4)} ${m.seconds.toFixed(1)} s`,
        );
      },
      checkpoint: async () => {},
    },
  );
  const out = path.resolve(ROOT, flag('out') ?? 'public/demo/demo-run.json');
  await mkdir(path.dirname(out), { recursive: true });
  // NaN (an absent loss term) is not JSON: write null, which the charts skip.
  const json = JSON.stringify(
    {
      config,
      recordedWith: {
        backend: 'wasm',
        threads: prepared.threads ?? 1,
        policy:
          path.relative(ROOT, assets.policy.source.replace(/^warm start \((.*)\)$/, '$1')) || assets.policy.source,
        date: new Date().toISOString(),
      },
      metrics,
      evals,
      rollouts,
    },
    (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v),
  );
  await writeFile(out, json);
  console.log(`wrote ${out} (${(json.length / 1024).toFixed(0)} KiB)`);
  trainer.dispose();
  assets.policy.model.dispose();
}

main().catch((e) => {
  console.error(e instanceof Error ? e.stack : e);
  process.exit(1);
});
