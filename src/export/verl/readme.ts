/** The README.md of an export directory: how to launch it and what did not carry over. */
import type { TrainConfig } from '../../recipes/config';
import type { FtrlTaskSplit } from '../../run/ftrlTaskSplit';
import { describeRowSettings } from './rows';

function klLine(c: TrainConfig): string {
  if (!(c.klCoef > 0)) return 'no KL term (klCoef 0)';
  const where = c.pact.klContext === 'trace' ? 'under c^h on L^h prompts' : 'on the rollouts as sampled';
  return `klCoef · k3 KL to π_ref, token mean, ${where} (\`kl_context: ${c.pact.klContext}\`)`;
}

export function formatReadme(o: {
  runId: string;
  experiment: string;
  config: TrainConfig;
  notCarried: [string, string][];
  nTrainRows: number;
  nTest: number;
  nSft: number;
  modelPath: string;
  /** FTRL runs: the split of the task file. */
  taskSplit?: FtrlTaskSplit;
}): string {
  const c = o.config;
  const isFtrl = c.tasks.source === 'ftrl';
  return `# ${o.experiment} / ${o.runId} for VeRL

Exported by \`pact export verl\` from PACT Lab (recipe \`${c.recipe}\`, seed ${c.seed}, ${c.steps} steps of
${c.batchPrompts} prompts × K ${c.rolloutsPerPrompt}). What maps to what: docs/verl-export.md in PACT Lab.

## Launch

    pip install verl            # the VeRL the export was checked against: volcengine/verl b178a3cd
    bash launch.sh trainer.n_gpus_per_node=1 actor_rollout_ref.model.path=/path/to/qwen3

\`launch.sh\` puts this directory on PYTHONPATH (so \`sitecustomize.py\` registers PACT's pieces in every
process, Ray's workers included) and runs \`python -m pact_verl.main_ppo\` with config/pact_trainer.yaml.
The tools answer through \`node pact_verl/tool_server.mjs\`: Node ≥ 20 must be on PATH.${isFtrl ? ftrlToolsSection(o.config) : ''}
Model: \`${o.modelPath}\` is a placeholder; a \`pact train\` checkpoint folder is a Hugging Face Qwen3 folder.

## Files
${o.taskSplit ? ftrlSplitSection(o.taskSplit) : ''}
- \`data/train.parquet\` (${o.nTrainRows} rows): one row per (step, batch position) in the app's data order,
  read unshuffled (\`data.shuffle: false\`), so VeRL's step s batch is the app's. \`extra_info\` holds the
  step, the position, PACT's gate \`pact_gate\` (1 = L^x, 0 = L^h + SFT), λa(s) \`lambda_a\`, the
  prefix level, the task's tool schemas and implementations (JSON: JavaScript stubs, or FTRL's Python
  sources), the tool-call time limit \`tool_timeout_ms\`, and h* (\`expert_trace\`, JSON: tagged spans
  with segments, prefixChunkCounts). \`reward_model.ground_truth\` is JSON: answer, gold calls, unsolved set.
- \`data/test.parquet\` (${o.nTest} held-out tasks), \`data/sft.parquet\` (${o.nSft} expert episodes for the
  warm start, \`messages\` + \`tools_json\`${isFtrl ? '; none: an FTRL file carries no expert trace' : ''}). Each also as JSON lines (\`.json\`).
- \`pact_verl/\`: rewards.py (MatchTIR, FTRL, ToolRL), algos.py (advantage estimators, the \`pact\` loss,
  the per-prompt objective), schedules.py (SFT masks), rng.py (gates), reward_manager.py, tools.py,
  agent_loop.py, actor.py (PACT's actor step), tool_server.mjs.

## What the actor step runs

\`pact_verl/register.py\` puts PACT's actor in place of VeRL's \`DataParallelPPOActor\` (the FSDP worker builds
the actor and the reference policy from it), and \`pact_verl/main_ppo.py\` hands it this run's \`pact\`
options (\`$PACT_VERL_OPTIONS\`). Each step, per prompt i of a PPO mini-batch B (its K rollouts grouped by
\`uid\`), with the route of its gate \`extra_info.pact_gate\`:

- z_i = 1 (or no expert trace): L^x, the clipped surrogate on the rollouts as sampled, MatchTIR advantages;
- z_i = 0: L^h, the same rollouts and advantages re-read under c^h = [x; h*; \`<|im_start|>assistant\`], with
  π_old(τ | c^h) read before the update with the old weights, plus β_SFT · L_SFT on (x; h*) with m(s)
  (reasoning revealed at step s weight 1, tool calls λa(s); \`prefix_reveal: remove\` leaves the rest out);
- ${klLine(c)};

and steps on (1/|B|) Σ_i L_i. Every other recipe gets L^x for every prompt with the same per-prompt mean.
Keep \`trainer.balance_batch: false\`, and \`data.train_batch_size\` and \`actor.ppo_mini_batch_size\` (prompts)
multiples of the GPU count: the actor refuses a mini-batch that holds part of a prompt's rollouts.

## Not carried over

${o.notCarried.map(([k, why]) => `- **${k}**: ${why}`).join('\n')}
${isFtrl ? FTRL_NOT_CARRIED : ''}- **untested in a real launch**: the actor step was checked in VeRL's actor class on CPU (one process, no
  FSDP, no remove-padding, no Ray); a LoRA reference (the actor without its adapter) reads π_ref under c^h
  whatever \`kl_context\` says. See docs/verl-export.md.
`;
}

/** Which lines of the FTRL file train and which evaluate (FTRL ships one test file, which the run cuts in two). */
function ftrlSplitSection(split: FtrlTaskSplit): string {
  return `
**Tasks: an FTRL task file.** FTRL ships a test file only, so the run cuts it in two: \`data/train.*\` holds the
lines that train, \`data/test.*\` (\`data.val_files\`) the held-out lines VeRL evaluates on, as \`pact train\` does.
${split.statement}
`;
}

function ftrlToolsSection(config: TrainConfig): string {
  const { toolTimeoutMs } = describeRowSettings(config);
  return `

**FTRL's Python tools.** Each call first passes the app's schema check (in Node), then runs the task's own
Python source in a new \`python3 -I\` process (the interpreter VeRL runs under; \`$PACT_VERL_TOOL_PYTHON\`
overrides it) with the app's Python runtime, so it answers with the app's text: the return value as FTRL
formats it, \`an error occured when call NAME: …\` for an exception, \`timed out after ${toolTimeoutMs} ms\` past the
run's limit (\`tasks.toolTimeoutMs\`, in every row's \`extra_info.tool_timeout_ms\`). The process has an empty
environment, an empty temporary working folder, and rlimits: CPU seconds, 2 GiB of address space, 8 MiB
files, no core file, no new process (RLIMIT_NPROC 0, which Linux does not apply to root). \`os.system\` is
refused as in the app. Before any tool code a PEP 578 audit hook refuses the network (every socket event),
new processes (subprocess, os.system, exec, spawn, fork, kill), opening or listing files outside the call's
folder (the interpreter's library read-only), symlinks, ctypes, C extensions from outside the library and
ways around the hook; a refusal answers as a tool exception.
**This is a process boundary, not the Pyodide sandbox the app runs these tools in:** audit hooks are not a
security boundary on their own (hand-built bytecode or a bug in CPython reaches process memory; file
metadata such as \`os.stat\` still answers). Run untrusted task files as an unprivileged user, or in a container (docs/security.md, "Limits").`;
}

const FTRL_NOT_CARRIED = `- **FTRL's tools under CPython**: the app runs them in Pyodide (CPython compiled to WebAssembly, its own
  Python version); here the cluster's python3 runs them, so a tool whose text depends on the Python version
  (an exception's wording) may answer differently. The audit hook (above) refuses the network, processes and
  files outside the call's folder; it is not the wasm boundary the app has.
- **The prompt window check**: \`pact train\` refuses FTRL prompts longer than maxPromptTokens with the app's
  tokenizer; VeRL measures with its own (\`data.max_prompt_length\`).
`;
