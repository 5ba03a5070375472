/**
 * The run's hyperparameters as VeRL trainer settings (ppo_trainer.yaml keys), one by one,
 * and the settings that do not carry over with the reason for each (docs/verl-export.md).
 */
import type { TrainConfig } from '../../recipes/config';
import { EXPORTABLE_RECIPES, isExportableRecipe, type ExportableRecipe } from './exportable';
import { describeRowSettings } from './rows';

/** The advantage estimator registered by pact_verl/algos.py for each tool-use recipe. */
const ESTIMATOR_OF_RECIPE: Readonly<Record<ExportableRecipe, (c: TrainConfig) => string>> = {
  pact: (c) => `pact_matchtir_${c.advantageCombine}`,
  matchtir: (c) => `pact_matchtir_${c.advantageCombine}`,
  ftrl: () => 'pact_turn_grpo',
  grpo: () => 'pact_grpo',
  toolrl: () => 'pact_grpo',
};

/** The reward the pact_turn reward manager computes for each recipe. */
const REWARD_OF_RECIPE: Readonly<Record<ExportableRecipe, string>> = {
  pact: 'matchtir',
  matchtir: 'matchtir',
  ftrl: 'ftrl',
  grpo: 'outcome_f1',
  toolrl: 'toolrl',
};

export { EXPORTABLE_RECIPES } from './exportable';

export interface TrainerSettings {
  /** Flat `key.path: value` settings, in the order they are written. */
  settings: [string, unknown][];
  /** Settings of the run that VeRL does not get, with the reason. */
  notCarried: [string, string][];
}

export function mapTrainerSettings(c: TrainConfig, paths: { modelPath: string }): TrainerSettings {
  if (!isExportableRecipe(c.recipe)) {
    throw new Error(
      `export verl: recipe "${c.recipe}" has no VeRL mapping; exportable: ${EXPORTABLE_RECIPES.join(', ')}`,
    );
  }
  const estimator = ESTIMATOR_OF_RECIPE[c.recipe];
  const s: [string, unknown][] = [
    ['data.train_files', 'data/train.parquet'],
    ['data.val_files', 'data/test.parquet'],
    ['data.train_batch_size', c.batchPrompts],
    ['data.val_batch_size', c.tasks.nTest],
    ['data.max_prompt_length', c.maxPromptTokens],
    ['data.max_response_length', c.maxResponseTokens],
    ['data.shuffle', false],
    ['data.return_raw_chat', true],
    ['data.filter_overlong_prompts', false],
    ['actor_rollout_ref.model.path', paths.modelPath],
    ['actor_rollout_ref.actor.optim.lr', c.lr],
    ['actor_rollout_ref.actor.optim.weight_decay', c.weightDecay],
    ['actor_rollout_ref.actor.optim.lr_warmup_steps', c.lrWarmupSteps],
    ['actor_rollout_ref.actor.optim.lr_scheduler_type', c.lrSchedule],
    ['actor_rollout_ref.actor.optim.clip_grad', c.maxGradNorm],
    ['actor_rollout_ref.actor.ppo_mini_batch_size', c.miniBatchPrompts],
    ['actor_rollout_ref.actor.ppo_epochs', 1],
    ['actor_rollout_ref.actor.clip_ratio', c.clipEps],
    ['actor_rollout_ref.actor.clip_ratio_low', c.clipEps],
    ['actor_rollout_ref.actor.clip_ratio_high', c.clipEps],
    ['actor_rollout_ref.actor.policy_loss.loss_mode', 'pact'],
    ['actor_rollout_ref.actor.loss_agg_mode', c.lossAgg],
    ['actor_rollout_ref.actor.use_kl_loss', c.klCoef > 0],
    ['actor_rollout_ref.actor.kl_loss_coef', c.klCoef],
    ['actor_rollout_ref.actor.kl_loss_type', 'low_var_kl'],
    ['actor_rollout_ref.actor.entropy_coeff', 0],
    ['actor_rollout_ref.rollout.n', c.rolloutsPerPrompt],
    ['actor_rollout_ref.rollout.temperature', c.temperature],
    ['actor_rollout_ref.rollout.top_p', c.topP],
    ['actor_rollout_ref.rollout.prompt_length', c.maxPromptTokens],
    ['actor_rollout_ref.rollout.response_length', c.maxResponseTokens],
    ['actor_rollout_ref.rollout.multi_turn.enable', true],
    ['actor_rollout_ref.rollout.multi_turn.format', 'hermes'],
    ['actor_rollout_ref.rollout.multi_turn.max_assistant_turns', c.maxTurns],
    ['actor_rollout_ref.rollout.multi_turn.max_parallel_calls', 64],
    ['actor_rollout_ref.rollout.multi_turn.max_tool_response_length', 100000],
    ['actor_rollout_ref.rollout.agent.default_agent_loop', 'pact_tool_agent'],
    ['actor_rollout_ref.rollout.agent.agent_loop_config_path', 'config/agent_loops.yaml'],
    ['algorithm.adv_estimator', estimator(c)],
    ['algorithm.gamma', c.gamma],
    ['algorithm.use_kl_in_reward', false],
    ['reward_model.reward_manager', 'pact_turn'],
    ['reward_manager.source', 'importlib'],
    ['reward_manager.name', 'PactTurnRewardManager'],
    ['reward_manager.module.path', 'pact_verl/reward_manager.py'],
    // VeRL's main_ppo builds the reward manager with **reward_model.reward_kwargs: the pact block
    // (its reward kind, matching, unmatched penalty and ToolRL rule), by OmegaConf interpolation.
    ['reward_model.reward_kwargs.pact', '${pact}'],
    ['trainer.total_training_steps', c.steps],
    ['trainer.total_epochs', 1],
    ['trainer.test_freq', c.evalEvery > 0 ? c.evalEvery : -1],
    ['trainer.save_freq', c.checkpointEvery > 0 ? c.checkpointEvery : -1],
    ['trainer.val_before_train', c.evalAtStart],
    // PACT's actor (pact_verl/actor.py) averages per prompt: a prompt's K rollouts stay together in
    // one mini-batch on one GPU (VeRL's length balancing would reorder them), and it replaces the
    // FSDP worker's actor class, which the legacy worker builds.
    ['trainer.balance_batch', false],
    ['trainer.use_legacy_worker_impl', 'enable'],
    ['trainer.project_name', 'pact-lab'],
    ['trainer.experiment_name', c.name],
    ['pact.recipe', c.recipe],
    ['pact.reward', REWARD_OF_RECIPE[c.recipe]],
    ['pact.seed', c.seed],
    ['pact.matching', c.matching],
    ['pact.unmatched_penalty', c.unmatchedPenalty],
    ['pact.toolrl_rule', c.toolrlRule],
    ['pact.advantage_combine', c.advantageCombine],
  ];
  if (c.recipe === 'pact') {
    const p = c.pact;
    s.push(
      ['pact.objective', p.objective],
      ['pact.anchor_prob', p.anchorProb],
      ['pact.beta_sft', p.betaSft],
      ['pact.tool_call_scale_start', p.toolCallScaleStart],
      ['pact.tool_call_scale_end', p.toolCallScaleEnd],
      ['pact.anneal_horizon', p.annealHorizon],
      ['pact.reasoning_schedule', p.reasoningSchedule],
      ['pact.tool_call_schedule', p.toolCallSchedule],
      ['pact.full_token_anneal', p.fullTokenAnneal],
      ['pact.kl_context', p.klContext],
      ['pact.prefix_reveal', p.prefixReveal],
      ['pact.trace_components', p.traceComponents],
    );
  }
  const notCarried: [string, string][] = [
    [
      'model (preset, init, lora)',
      `the app's ${c.model.preset} / "${c.model.init}" weights live in the browser or a checkpoint folder; point actor_rollout_ref.model.path at a Hugging Face Qwen3 folder (a pact train checkpoint is one)`,
    ],
    ['microBatchRows', 'memory only; set actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu for your GPUs'],
    ['backend, threads, engineKernels', "the app's tfjs backends and CPU-engine kernels; VeRL runs on its own devices"],
    [
      'evalSamples',
      c.evalSamples === 0
        ? 'greedy held-out rollouts: set actor_rollout_ref.rollout.val_kwargs.do_sample=false'
        : `set actor_rollout_ref.rollout.val_kwargs.n=${c.evalSamples}`,
    ],
    [
      'ratio and temperature',
      "VeRL recomputes π_old under x with the actor before the update (the app uses the rollouts' behaviour log-probs) and reads π_old, π_θ and π_ref at the rollout temperature (the app at 1); L_SFT is read at 1 as in the app",
    ],
    [
      'tool-call time limit',
      `each row's extra_info.tool_timeout_ms (${describeRowSettings(c).toolTimeoutMs} ms${c.tasks.source === 'ftrl' ? ', tasks.toolTimeoutMs' : ", the sandboxes' for the stubs"}); the tool server keeps it`,
    ],
  ];
  if (c.model.lora)
    notCarried.push(['model.lora', 'set actor_rollout_ref.model.lora_rank / lora_alpha / target_modules yourself']);
  return { settings: s, notCarried };
}

function formatScalar(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '.nan';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v === null || v === undefined) return 'null';
  return JSON.stringify(v); // flow style: YAML reads JSON objects and arrays
}

/** Nested YAML of flat `a.b.c` settings (keys kept in first-seen order). */
export function formatYaml(settings: readonly [string, unknown][]): string {
  interface Node {
    children: Map<string, Node>;
    value?: unknown;
    isLeaf: boolean;
  }
  const root: Node = { children: new Map(), isLeaf: false };
  for (const [key, value] of settings) {
    let node = root;
    for (const part of key.split('.')) {
      let next = node.children.get(part);
      if (!next) {
        next = { children: new Map(), isLeaf: false };
        node.children.set(part, next);
      }
      node = next;
    }
    node.value = value;
    node.isLeaf = true;
  }
  const lines: string[] = [];
  const walk = (node: Node, depth: number) => {
    for (const [name, child] of node.children) {
      const pad = '  '.repeat(depth);
      if (child.isLeaf) lines.push(`${pad}${name}: ${formatScalar(child.value)}`);
      else {
        lines.push(`${pad}${name}:`);
        walk(child, depth + 1);
      }
    }
  };
  walk(root, 0);
  return lines.join('\n') + '\n';
}
