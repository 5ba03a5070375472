/** The README.md of an export directory: how to launch it and what did not carry over. */
import type { TrainConfig } from '../../recipes/config';

export function formatReadme(o: {
  runId: string;
  experiment: string;
  config: TrainConfig;
  notCarried: [string, string][];
  nTrainRows: number;
  nTest: number;
  nSft: number;
  modelPath: string;
}): string {
  const c = o.config;
  return `# ${o.experiment} / ${o.runId} for VeRL

Exported by \`pact export verl\` from PACT Lab (recipe \`${c.recipe}\`, seed ${c.seed}, ${c.steps} steps of
${c.batchPrompts} prompts × K ${c.rolloutsPerPrompt}). What maps to what: docs/verl-export.md in PACT Lab.

## Launch

    pip install verl            # the VeRL the export was checked against: volcengine/verl b178a3cd
    bash launch.sh trainer.n_gpus_per_node=1 actor_rollout_ref.model.path=/path/to/qwen3

\`launch.sh\` puts this directory on PYTHONPATH (so \`sitecustomize.py\` registers PACT's pieces in every
process, Ray's workers included) and runs \`python -m pact_verl.main_ppo\` with config/pact_trainer.yaml.
The tool stubs answer through \`node pact_verl/tool_server.mjs\`: Node ≥ 20 must be on PATH.
Model: \`${o.modelPath}\` is a placeholder; a \`pact train\` checkpoint folder is a Hugging Face Qwen3 folder.

## Files

- \`data/train.parquet\` (${o.nTrainRows} rows): one row per (step, batch position) in the app's data order,
  read unshuffled (\`data.shuffle: false\`), so VeRL's step s batch is the app's. \`extra_info\` holds the
  step, the position, PACT's gate \`pact_gate\` (1 = L^x, 0 = L^h + SFT), λa(s) \`lambda_a\`, the
  prefix level, the task's tool schemas and stubs (JSON), and h* (\`expert_trace\`, JSON: tagged spans
  with segments, prefixChunkCounts). \`reward_model.ground_truth\` is JSON: answer, gold calls, unsolved set.
- \`data/test.parquet\` (${o.nTest} held-out tasks), \`data/sft.parquet\` (${o.nSft} expert episodes for the
  warm start, \`messages\` + \`tools_json\`). Each also as JSON lines (\`.json\`).
- \`pact_verl/\`: rewards.py (MatchTIR, FTRL, ToolRL), algos.py (advantage estimators, the \`pact\` loss,
  the per-prompt objective), schedules.py (SFT masks), rng.py (gates), reward_manager.py, tools.py,
  agent_loop.py, actor.py (π_old under c^h, the SFT row), tool_server.mjs.

## Not carried over

${o.notCarried.map(([k, why]) => `- **${k}**: ${why}`).join('\n')}
- **the PACT actor step** (L^h rows under c^h, SFT row, gate routing inside VeRL's actor): pact_verl/actor.py
  builds the rows and the objective, but wiring it into VeRL's FSDP actor is not done; see docs/verl-export.md.
`;
}
