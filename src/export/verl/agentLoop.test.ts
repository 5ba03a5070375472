/**
 * The exported `pact_tool_agent` loop (pact_verl/agent_loop.py, PactToolAgentLoop) run in VeRL's own
 * agent loop code: python/tests/check_agent_loop.py loads the snapshot's agent_loop.py and
 * tool_agent_loop.py by path (heavy imports stubbed), builds the loop as AgentLoopWorker does from the
 * exported config (pact_trainer.yaml over VeRL's composed ppo_trainer, agent_loops.yaml), and runs
 * episodes whose policy turns are scripted here, through VeRL's AsyncLLMServerManager over a fake
 * server and a character tokenizer with a Qwen3-shaped chat template. What comes back is VeRL's
 * AgentLoopOutput, compared with the app's RolloutEnv on the same turns: the prompt shows the task's
 * own tool schemas, every call is answered with the app's answer, tool responses have response_mask
 * 0 and the policy's tokens 1, max_assistant_turns caps the episode as maxTurns does in the app.
 * An FTRL row likewise: its Python tools answer in the loop as the app's Pyodide executor does,
 * within the row's tool_timeout_ms (a tool that loops gets the app's timeout text for tasks.toolTimeoutMs).
 * Skips only when no python has torch + omegaconf or the VeRL snapshot is absent.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatObservationBlock, IM_END, RolloutEnv, type StepResult } from '../../envs/rollout';
import { LanguageRoutingExecutor } from '../../envs/ftrl/languageExecutor';
import { createNodePyodideExecutor } from '../../envs/ftrl/pyodideExecutorNode';
import { InProcessExecutor } from '../../envs/sandbox/inProcessExecutor';
import type { ToolExecutor } from '../../envs/sandbox/types';
import type { Task, ToolCall } from '../../envs/types';
import { formatToolCallBlock } from '../../traces/render';
import { exportVerl } from './exportVerl';
import { FILE_LINES } from './ftrlTestFile';
import { buildPromptMessages } from './rows';
import { findVerlTestPython, VERL_ROOT } from './testPython';

const PY = findVerlTestPython();
const HAS_VERL = existsSync(`${VERL_ROOT}/verl/experimental/agent_loop/tool_agent_loop.py`);
const skipReason = !PY.python ? PY.reason : !HAS_VERL ? `no VeRL snapshot at ${VERL_ROOT}` : undefined;
if (skipReason) console.warn(`agentLoop.test.ts skipped: ${skipReason}`);

const CHECK = fileURLToPath(new URL('./python/tests/check_agent_loop.py', import.meta.url));
const MAX_TURNS = 3;

const EXPERIMENT = {
  name: 'loop',
  base: {
    recipe: 'pact',
    tasks: { source: 'generated', trainSeed: 4, testSeed: 6, nTrain: 2, nTest: 1, categories: ['multi_hop'] },
    steps: 1,
    batchPrompts: 2,
    miniBatchPrompts: 1,
    rolloutsPerPrompt: 2,
    maxTurns: MAX_TURNS,
    maxResponseTokens: 4096,
  },
  runs: [{ name: 'pact' }],
  seeds: [3],
};

interface Episode {
  prompt_text: string;
  prompt_tools: unknown;
  prompt_messages: unknown;
  response: { mask: number; text: string }[];
  response_mask: number[];
  n_response_ids: number;
  n_logprobs: number;
  num_turns: number;
  generate_calls: number;
  turn_prompts: string[];
  tool_rewards: number[];
  loop_class: string;
}

interface CheckOutput {
  config: { max_assistant_turns: number; format: string; default_agent_loop: string };
  episodes: Episode[];
  malformed: { text: string; reward: number };
  registered: boolean;
}

/** The app's RolloutEnv on the same turns (each ending with <|im_end|>, as the server's do). */
async function appEpisode(
  task: Task,
  turns: string[],
  executor: ToolExecutor = new InProcessExecutor(),
  timeoutMs?: number,
): Promise<StepResult[]> {
  const env = new RolloutEnv({ executor, renderChat: () => '', maxTurns: MAX_TURNS, timeoutMs });
  env.reset(task);
  const steps: StepResult[] = [];
  for (const t of turns) {
    const step = await env.step(t + IM_END);
    steps.push(step);
    if (step.done) break;
  }
  return steps;
}

let task: Task;
let exportDir: string;
let out: CheckOutput;
let episodes: string[][];

/** Runs check_agent_loop.py on `episodes` of the train row of `taskId` in `exportDir`. */
function runCheck(
  root: string,
  fx: { exportDir: string; taskId: string; episodes: string[][]; malformedCall: object },
): CheckOutput {
  const fixtures = path.join(root, 'fixtures.json');
  writeFileSync(fixtures, JSON.stringify(fx));
  const r = spawnSync(PY.python!, [CHECK, VERL_ROOT, fixtures], { encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.status !== 0) throw new Error(`check_agent_loop.py failed (${r.status}):\n${r.stderr}`);
  return JSON.parse(r.stdout) as CheckOutput;
}

beforeAll(async () => {
  if (skipReason) return;
  const root = mkdtempSync(path.join(tmpdir(), 'pact-agent-loop-'));
  const configPath = path.join(root, 'loop.json');
  writeFileSync(configPath, JSON.stringify(EXPERIMENT));
  exportDir = path.join(root, 'out');
  const result = await exportVerl({ configPath, outDir: exportDir, run: 'pact' });
  task = result.trainTasks.find((t) => (t.goldCalls ?? []).length > 0)!;
  const gold = task.goldCalls!;
  const second: ToolCall = gold[1] ?? {
    name: task.tools[0].function.name,
    arguments: Object.fromEntries(Object.keys(task.tools[0].function.parameters.properties).map((k) => [k, 'Zzyzx'])),
  };
  const malformed = `<tool_call>\n{"name": "${gold[0].name}", "arguments": {</tool_call>`;
  episodes = [
    // A: two calls (the gold one, one the schema refuses), then a malformed block beside a good call, then the answer.
    [
      `<think>look it up</think>${formatToolCallBlock(gold[0])}\n${formatToolCallBlock({ name: gold[0].name, arguments: {} })}`,
      `<think>again</think>${malformed}\n${formatToolCallBlock(second)}`,
      `<think>done</think><answer>${task.answer}</answer>`,
    ],
    // B: a call every turn, more turns than maxTurns.
    Array.from({ length: MAX_TURNS + 2 }, (_, i) => `<think>turn ${i}</think>${formatToolCallBlock(gold[0])}`),
    // C: a turn whose only block is malformed.
    [`<think>oops</think>${malformed}`, `<answer>${task.answer}</answer>`],
  ];
  out = runCheck(root, {
    exportDir,
    taskId: task.id,
    episodes,
    malformedCall: { name: gold[0].name, arguments: '{"q": ' },
  });
}, 180_000);

describe.skipIf(!!skipReason)("pact_tool_agent in VeRL's ToolAgentLoop", () => {
  it('is built from the exported config as AgentLoopWorker builds it', () => {
    expect(out.config).toEqual({
      max_assistant_turns: MAX_TURNS,
      format: 'hermes',
      default_agent_loop: 'pact_tool_agent',
    });
    expect(out.registered).toBe(true);
    for (const e of out.episodes) expect(e.loop_class).toBe('PactToolAgentLoop');
  });

  it("shows the task's own tool schemas (extra_info.tools) and the row's prompt", () => {
    const a = out.episodes[0];
    expect(a.prompt_tools).toEqual(task.tools);
    expect(a.prompt_messages).toEqual(buildPromptMessages(task));
    for (const m of buildPromptMessages(task)) expect(a.prompt_text).toContain(m.content);
    expect(a.prompt_text.endsWith('<|im_start|>assistant\n')).toBe(true);
  });

  it("answers every call with the app's answer; tool responses masked 0, the policy's turns 1", async () => {
    const a = out.episodes[0];
    const app = await appEpisode(task, episodes[0]);
    expect(app.map((s) => s.done)).toEqual([false, false, true]);
    const [t1, t2] = app.map((s) => s.turn);
    expect(t1.outputs.map((o) => o.ok)).toEqual([true, false]);
    // The app answers a malformed block with an error observation; VeRL's hermes parser drops the
    // block (it logs "Failed to decode tool call"), so the loop answers only the well-formed call.
    expect(t2.observations.length).toBe(2);
    expect(t2.observations[0]).toMatch(/^error: <tool_call> #1: the <tool_call> block is not valid JSON/);
    expect(t2.observations[1]).toBe(t2.outputs[0].output);
    expect(a.response).toEqual([
      { mask: 1, text: episodes[0][0] + IM_END },
      { mask: 0, text: formatObservationBlock(t1.observations) },
      { mask: 1, text: episodes[0][1] + IM_END },
      { mask: 0, text: formatObservationBlock(t2.outputs.map((o) => o.output)) },
      { mask: 1, text: episodes[0][2] + IM_END },
    ]);
    expect(a.response_mask.length).toBe(a.n_response_ids);
    expect(a.n_logprobs).toBe(a.n_response_ids);
    expect(a.tool_rewards).toEqual([0, 0, 0]);
    expect(a.num_turns).toBe(3 + 2 + 1);
    // What the policy saw at each turn: the prompt, then everything before that turn.
    expect(a.generate_calls).toBe(3);
    for (let k = 0; k < 3; k++)
      expect(a.turn_prompts[k]).toBe(
        a.prompt_text +
          a.response
            .slice(0, 2 * k)
            .map((r) => r.text)
            .join(''),
      );
  });

  it('stops after max_assistant_turns (the run’s maxTurns), as the app does', async () => {
    const b = out.episodes[1];
    const app = await appEpisode(task, episodes[1]);
    expect(app.length).toBe(MAX_TURNS);
    expect(app[MAX_TURNS - 1].turn.envText).toBe('\n');
    expect(b.generate_calls).toBe(MAX_TURNS);
    expect(b.response.map((r) => r.mask)).toEqual([1, 0, 1, 0, 1]);
    for (let k = 0; k < MAX_TURNS; k++) expect(b.response[2 * k].text).toBe(episodes[1][k] + IM_END);
    for (let k = 0; k < MAX_TURNS - 1; k++)
      expect(b.response[2 * k + 1].text).toBe(formatObservationBlock(app[k].turn.observations));
  });

  it("a turn whose only block is malformed ends VeRL's episode (the app answers it with an error)", async () => {
    const c = out.episodes[2];
    const app = await appEpisode(task, episodes[2]);
    expect(app[0].done).toBe(false);
    expect(app[0].turn.observations[0]).toMatch(/^error: <tool_call> #1: the <tool_call> block is not valid JSON/);
    expect(c.generate_calls).toBe(1);
    expect(c.response).toEqual([{ mask: 1, text: episodes[2][0] + IM_END }]);
  });

  it("arguments that are not JSON get the loop's error text (a parser that passes them through)", () => {
    expect(out.malformed.text).toMatch(/^error: the <tool_call> block is not valid JSON \(.+\)$/);
    expect(out.malformed.reward).toBe(0);
  });
});

const FTRL_TIMEOUT_MS = 1500;

describe.skipIf(!!skipReason)("pact_tool_agent on an FTRL row (the task's Python tools)", () => {
  it("answers each call as the app's Pyodide executor does, within the row's tool_timeout_ms", async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'pact-agent-loop-ftrl-'));
    const tasksFile = path.join(root, 'tasks.jsonl');
    writeFileSync(tasksFile, FILE_LINES.join('\n') + '\n');
    const configPath = path.join(root, 'ftrl.json');
    const tasks = { source: 'ftrl', path: tasksFile, trainLines: '1-3', testLines: '4-5', nTrain: 3, nTest: 2 };
    writeFileSync(
      configPath,
      JSON.stringify({
        name: 'loop-ftrl',
        base: {
          ...EXPERIMENT.base,
          recipe: 'ftrl',
          tasks: { ...tasks, toolTimeoutMs: FTRL_TIMEOUT_MS },
        },
        runs: [{ name: 'ftrl' }],
        seeds: [3],
      }),
    );
    const dir = path.join(root, 'out');
    const result = await exportVerl({ configPath, outDir: dir });
    const probe = result.trainTasks.find((t) => t.implementations.loop)!;
    const call = (name: string, x: string) => formatToolCallBlock({ name, arguments: { x } });
    const turns = [
      `<think>a</think>${call('loop', 'a')}`,
      `<think>b</think>${call('shaped', 'ß')}\n${call('narrow', 'a')}`,
      '<answer>nothing</answer>',
    ];
    const ftrlOut = runCheck(root, {
      exportDir: dir,
      taskId: probe.id,
      episodes: [turns],
      malformedCall: { name: 'loop', arguments: '{"x": ' },
    });
    const executor = new LanguageRoutingExecutor({ python: createNodePyodideExecutor({ timeoutMs: FTRL_TIMEOUT_MS }) });
    let app: StepResult[];
    try {
      app = await appEpisode(probe, turns, executor, FTRL_TIMEOUT_MS);
    } finally {
      executor.dispose();
    }
    const [t1, t2] = app.map((s) => s.turn);
    expect(t1.observations).toEqual([`an error occured when call loop: timed out after ${FTRL_TIMEOUT_MS} ms`]);
    expect(t2.outputs.map((o) => o.ok)).toEqual([true, false]);
    expect(ftrlOut.episodes[0].response).toEqual([
      { mask: 1, text: turns[0] + IM_END },
      { mask: 0, text: formatObservationBlock(t1.observations) },
      { mask: 1, text: turns[1] + IM_END },
      { mask: 0, text: formatObservationBlock(t2.observations) },
      { mask: 1, text: turns[2] + IM_END },
    ]);
  }, 180_000);
});
