/**
 * The rows of a VeRL export (docs/verl-export.md): a run's train and held-out tasks in VeRL's
 * RL dataset layout (verl/utils/dataset/rl_dataset.py reads `prompt` as chat messages and
 * passes `data_source`, `reward_model.ground_truth` and `extra_info` to the reward), and the
 * warm start's SFT rows (verl/utils/dataset/multiturn_sft_dataset.py reads `messages`).
 *
 * Train rows are written in the app's data order, one row per (step, batch position): the
 * trainer's seeded per-epoch permutation (recipes/train/dataOrder.ts), so a VeRL run that
 * reads the file unshuffled gets the app's batch at every step. Each row carries what the
 * app decides per prompt at that step, precomputed: the gate z_i (core/gates.ts), λa(s) and
 * the reasoning prefix level (core/schedules.ts). Values whose shape varies between rows
 * (tool schemas, argument objects, the expert trace) are JSON strings, so that every column
 * has one parquet schema.
 */
import { sampleStepGates } from '../../core/gates';
import { createRng, permutation } from '../../core/rng';
import { REASONING_SCHEDULES, TOOL_CALL_SCHEDULES, toAlgorithmStep, tokenKeepFraction } from '../../core/schedules';
import { DEFAULT_SYSTEM_PROMPT, formatUserPrompt } from '../../envs/rollout';
import type { Task } from '../../envs/types';
import type { TrainConfig } from '../../recipes/config';
import { DEFAULT_FTRL_EVAL_SETTINGS } from '../../run/ftrlEvalSettings';
import { renderPrivilegedTrace, renderTraceMessages } from '../../traces/render';

export const VERL_DATA_SOURCE = 'pact/generated';
/** data_source of the rows of an FTRL task file (tasks.source 'ftrl'). */
export const VERL_FTRL_DATA_SOURCE = 'pact/ftrl';
export const VERL_ABILITY = 'tool-use';

/** The app's per-call time limit for the generated tasks' JavaScript stubs (the JavaScript sandboxes' DEFAULT_TIMEOUT_MS; toolAnswer.ts TOOL_TIMEOUT_MS). */
export const STUB_TOOL_TIMEOUT_MS = 2000;

/** What every row of a run shares: where its tasks come from and its tools' time limit. */
export interface RowSettings {
  dataSource: string;
  /** ms per tool call: tasks.toolTimeoutMs (default FTRL evaluation's) for FTRL's Python tools, else the stubs'. */
  toolTimeoutMs: number;
}

export function describeRowSettings(config: Pick<TrainConfig, 'tasks'>): RowSettings {
  return config.tasks.source === 'ftrl'
    ? {
        dataSource: VERL_FTRL_DATA_SOURCE,
        toolTimeoutMs: config.tasks.toolTimeoutMs ?? DEFAULT_FTRL_EVAL_SETTINGS.toolTimeoutMs,
      }
    : { dataSource: VERL_DATA_SOURCE, toolTimeoutMs: STUB_TOOL_TIMEOUT_MS };
}

export interface ChatMessageRow {
  role: string;
  content: string;
}

/** What the reward functions read (reward_model.ground_truth, as JSON). */
export interface GroundTruth {
  answer: string;
  gold_calls: { name: string; arguments: Record<string, unknown> }[];
  unsolved_set: Record<string, string[]>;
}

export interface ExtraInfo {
  split: 'train' | 'test';
  /** The task's position in its split (the app's PromptItem.index). */
  index: number;
  task_id: string;
  category: string;
  /** Train rows: the training step s = 1…T whose batch holds the row; 0 for held-out rows. */
  step: number;
  /** Position in the step's batch (0-based); the gate stream draws in this order. */
  position: number;
  /** z_i at that step: 1 = L^x (prompt-only anchor), 0 = L^h (+ SFT), −1 = not a PACT train row. */
  pact_gate: number;
  /** λa(s) and the reasoning prefix level of step s (NaN / −1 when not a component schedule). */
  lambda_a: number;
  prefix_level: number;
  /** JSON: the task's OpenAI tool schemas, as the app renders them into the prompt. */
  tools: string;
  /** JSON: tool name → {language, source}, the stubs (or FTRL's Python tools) the tools answer with. */
  implementations: string;
  /** ms a tool call may run (RowSettings.toolTimeoutMs). */
  tool_timeout_ms: number;
  /** JSON: h* as tagged spans + prefixChunkCounts (see ExpertTraceExport), or '' without a trace. */
  expert_trace: string;
}

export interface VerlRow {
  data_source: string;
  prompt: ChatMessageRow[];
  ability: string;
  reward_model: { style: string; ground_truth: string };
  extra_info: ExtraInfo;
}

export interface SftRow {
  messages: ChatMessageRow[];
  /** JSON: the task's tool schemas (apply_chat_template's `tools`). */
  tools_json: string;
  task_id: string;
}

/** h* as the exporter writes it: the app's rendering spans (renderPrivilegedTrace, full reasoning) with their tags. */
export interface ExpertTraceExport {
  spans: { text: string; tag: { kind: string; turn: number; segment?: number } }[];
  /** Per turn of the trace, the chunks revealed at L0..L4. */
  prefix_chunk_counts: number[][];
  final_answer: string | null;
  verified: boolean;
}

/** The prompt x as chat messages, as RolloutEnv.reset builds it. */
export function buildPromptMessages(task: Task): ChatMessageRow[] {
  return [
    { role: 'system', content: DEFAULT_SYSTEM_PROMPT },
    { role: 'user', content: formatUserPrompt(task) },
  ];
}

export function buildGroundTruth(task: Task): GroundTruth {
  return { answer: task.answer, gold_calls: task.goldCalls ?? [], unsolved_set: task.unsolvedSet };
}

export function exportExpertTrace(task: Task): ExpertTraceExport | null {
  const trace = task.expertTrace;
  if (!trace) return null;
  const { spans } = renderPrivilegedTrace(trace, { level: 'full' });
  return {
    spans: spans.map((s) => ({ text: s.text, tag: { ...s.tag } })),
    prefix_chunk_counts: trace.turns.map((t) => [...t.prefixChunkCounts]),
    final_answer: trace.finalAnswer ?? null,
    verified: trace.verified,
  };
}

/** λa(s) and the prefix level of step s under the run's SFT schedules (privilegedContext.buildSftMaskAtStep). */
export function describeSftStep(config: TrainConfig, step: number): { lambdaA: number; prefixLevel: number } {
  const p = config.pact;
  const horizon = p.annealHorizon;
  if (p.fullTokenAnneal) return { lambdaA: tokenKeepFraction(step, horizon), prefixLevel: -1 };
  const options = { horizon, toolCallStart: p.toolCallScaleStart, toolCallEnd: p.toolCallScaleEnd };
  const reasoning = REASONING_SCHEDULES.get(p.reasoningSchedule)(step, options);
  const toolCall = TOOL_CALL_SCHEDULES.get(p.toolCallSchedule)(step, options);
  return {
    lambdaA: toolCall.kind === 'scale' ? toolCall.scale : toolCall.fraction,
    prefixLevel: reasoning.kind === 'prefix-level' ? reasoning.level : -1,
  };
}

function buildRow(
  task: Task,
  settings: RowSettings,
  extra: Omit<ExtraInfo, 'task_id' | 'category' | 'tools' | 'implementations' | 'tool_timeout_ms' | 'expert_trace'>,
): VerlRow {
  const trace = exportExpertTrace(task);
  return {
    data_source: settings.dataSource,
    prompt: buildPromptMessages(task),
    ability: VERL_ABILITY,
    reward_model: { style: 'rule', ground_truth: JSON.stringify(buildGroundTruth(task)) },
    extra_info: {
      ...extra,
      task_id: task.id,
      category: task.category,
      tools: JSON.stringify(task.tools),
      implementations: JSON.stringify(task.implementations),
      tool_timeout_ms: settings.toolTimeoutMs,
      expert_trace: trace ? JSON.stringify(trace) : '',
    },
  };
}

/** The train task index of every (step, position), steps 0…T−1, as the trainer's EpochOrder reads them. */
export function listTrainOrder(config: TrainConfig, nTasks: number): number[][] {
  const root = createRng(config.seed);
  const orders = new Map<number, number[]>();
  const out: number[][] = [];
  for (let s = 0; s < config.steps; s++) {
    const row: number[] = [];
    for (let j = 0; j < config.batchPrompts; j++) {
      const position = s * config.batchPrompts + j;
      const epoch = Math.floor(position / nTasks);
      let order = orders.get(epoch);
      if (!order) {
        order = permutation(nTasks, root.split(`data/epoch${epoch}`));
        orders.set(epoch, order);
      }
      row.push(order[position % nTasks]);
    }
    out.push(row);
  }
  return out;
}

/**
 * One row per (step, batch position), in the app's order, with the step's gate and schedules.
 * The gate is PACT's (pact recipe: a prompt without a trace is always anchored); −1 for the other recipes.
 */
export function buildTrainRows(config: TrainConfig, tasks: readonly Task[]): VerlRow[] {
  if (tasks.length === 0) throw new Error('export verl: the run has no train tasks');
  const order = listTrainOrder(config, tasks.length);
  const settings = describeRowSettings(config);
  const rows: VerlRow[] = [];
  order.forEach((indices, s) => {
    const step = toAlgorithmStep(s);
    const gates =
      config.recipe === 'pact' ? sampleStepGates(config.seed, step, indices.length, config.pact.anchorProb) : null;
    const { lambdaA, prefixLevel } = describeSftStep(config, step);
    indices.forEach((index, position) => {
      const task = tasks[index];
      const gate = gates ? (task.expertTrace ? gates[position] : 1) : -1;
      rows.push(
        buildRow(task, settings, {
          split: 'train',
          index,
          step,
          position,
          pact_gate: gate,
          lambda_a: lambdaA,
          prefix_level: prefixLevel,
        }),
      );
    });
  });
  return rows;
}

/** The held-out tasks, one row each, in the app's order. */
export function buildTestRows(tasks: readonly Task[], settings: RowSettings): VerlRow[] {
  return tasks.map((task, index) =>
    buildRow(task, settings, {
      split: 'test',
      index,
      step: 0,
      position: index,
      pact_gate: -1,
      lambda_a: Number.NaN,
      prefix_level: -1,
    }),
  );
}

/** The warm start's SFT rows: each train task's whole expert episode (final answer included) as chat messages. */
export function buildSftRows(tasks: readonly Task[]): SftRow[] {
  return tasks
    .filter((t) => t.expertTrace)
    .map((task) => ({
      messages: [
        ...buildPromptMessages(task),
        ...renderTraceMessages(task.expertTrace!, { includeFinalAnswer: true }).map((m) => ({
          role: m.role,
          content: m.content,
        })),
      ],
      tools_json: JSON.stringify(task.tools),
      task_id: task.id,
    }));
}
