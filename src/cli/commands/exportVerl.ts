/**
 * `pact export verl --config experiments/NAME.json --out DIR [--run ID] [--model PATH]`
 *
 * Writes one run of an experiment file as a directory VeRL launches with `bash launch.sh`:
 * the run's train / held-out tasks (generated, or an FTRL file's split) and the warm start's SFT rows as parquet, the run's
 * hyperparameters as a VeRL trainer YAML, and the Python glue (rewards, advantage
 * estimators, PACT's loss, tools). What maps to what: docs/verl-export.md.
 */
import { exportVerl } from '../../export/verl/exportVerl';
import { parseFlags, registerCommand, type CliIO } from '../registry';

const USAGE = `usage: pact export verl --config experiments/NAME.json --out DIR [--run ID] [--model PATH]

Writes one run of an experiment file as a VeRL job (docs/verl-export.md):
  --config FILE   the experiment file (base + runs × seeds)
  --out DIR       the export directory (data/, config/, pact_verl/, launch.sh, README.md)
  --run ID        the run id (pact-s1) or name (pact); default: the file's first run
  --model PATH    actor_rollout_ref.model.path (default Qwen/Qwen3-0.6B; a pact train
                  checkpoint folder is a Hugging Face Qwen3 folder)
An FTRL run (tasks.source "ftrl") reads its task file as pact train does (tasks.path, else
$PACT_FTRL_TASKS, else ../shared/data/ftrl/test.jsonl) and exports the lines of its split.
Launch it with: bash DIR/launch.sh trainer.n_gpus_per_node=1`;

registerCommand({
  name: 'export',
  summary: 'export a run for another trainer: pact export verl --config FILE --out DIR',
  usage: USAGE,
  async run(args: string[], io: CliIO): Promise<number> {
    const { flags, positional } = parseFlags(args, { values: ['config', 'out', 'run', 'model'], booleans: ['help'] });
    if (flags.help) {
      io.out(USAGE);
      return 0;
    }
    if (positional[0] !== 'verl' || positional.length !== 1) {
      io.err(
        `pact export: the target must be "verl", got ${positional.length ? positional.join(' ') : 'none'}\n${USAGE}`,
      );
      return 2;
    }
    if (typeof flags.config !== 'string' || typeof flags.out !== 'string') {
      io.err(`pact export verl: --config and --out are required\n${USAGE}`);
      return 2;
    }
    const result = await exportVerl({
      configPath: flags.config,
      outDir: flags.out,
      run: typeof flags.run === 'string' ? flags.run : undefined,
      modelPath: typeof flags.model === 'string' ? flags.model : undefined,
      log: (line) => io.err(line),
    });
    io.out(`exported run ${result.run.id} to ${flags.out}: ${result.files.length} files`);
    io.out(`  ${result.trainTasks.length} train tasks, ${result.testTasks.length} held-out tasks`);
    io.out(`launch: bash ${flags.out}/launch.sh trainer.n_gpus_per_node=1`);
    return 0;
  },
});
