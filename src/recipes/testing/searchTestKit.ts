/**
 * Test helper (tests only) for the tool-search and FTRL recipes (toolrl, ftrl, toolsearcher, search_r1, gspo,
 * gdpo): a character-level tokenizer with a few markup pieces (fast, no tokenizer files),
 * a chat-template stand-in that renders only the tail of the user message (short prompts),
 * a small generated tool repository whose search observations list names only (short
 * sequences), two generated tool-use tasks, a 2-layer hidden-32 Qwen3 over that
 * vocabulary, a scripted policy that writes chosen text but reports the model's real
 * temperature-1 log-probs of it (so π_old = π_θ at the start of a step, as with real
 * sampling), `runOneStep` (one Trainer step + one evaluation on the cpu backend), and
 * hand-built rollout groups for the scoring tests.
 */
import * as tf from '../../model/qwen3/tf';
import { IM_END, RolloutEnv, type RenderChat } from '../../envs/rollout';
import { createToolSearch, generateToolRepo, type ToolRepository, type ToolSearch } from '../../envs/toolRepo';
import { Qwen3Model, packTokenRows, type GeneratedRow, type Qwen3Config } from '../../model/qwen3';
import { createTrainerTestQwen3Config } from '../../model/weights/testFolders';
import type { TextTokenizer } from '../../model/tokenizer/types';
import { generateTasks } from '../../envs/generator';
import { InProcessExecutor } from '../../envs/sandbox';
import type { Task } from '../../envs/types';
import { useCpuBackend } from '../../model/qwen3/train/testBackend';
import { resolveConfig, type TrainConfigInput } from '../config';
import { createToolSearchPrompts, type SearchRolloutInfo, type SearchTurnRecord } from '../rollouts/searchRollouts';
import { Trainer, createToolUsePrompts } from '../train/trainer';
import type { EvalMetrics, PolicySampler, PromptItem, Rollout, RolloutGroup, StepMetrics } from '../types';
import '../index';

const SPECIAL_TOKENS = [IM_END, '<|im_start|>'];

/** Multi-character pieces of the markup the tests write (shorter sequences, faster tests). */
const MARKUP_PIECES = [
  '<think>',
  '</think>',
  '<tool_call>',
  '</tool_call>',
  '<tool_list>',
  '</tool_list>',
  '<tool_response>',
  '</tool_response>',
  '<answer>',
  '</answer>',
  '{"name": ',
  '"search"',
  ', "arguments": ',
  '{"query": ',
  'assistant',
  'user',
  '_for_',
  '(tool: ',
];

/**
 * One id per special token, one per markup piece, then one per character \t, \n, ' '…'~';
 * encoding takes the longest match at each position; any other character encodes as '?'.
 */
export function createCharTokenizer(): TextTokenizer {
  const chars = ['\t', '\n', ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))];
  const vocab = [...SPECIAL_TOKENS, ...MARKUP_PIECES, ...chars];
  const idOf = new Map(vocab.map((t, i) => [t, i]));
  const unknown = idOf.get('?')!;
  const multi = [...SPECIAL_TOKENS, ...MARKUP_PIECES].sort((a, b) => b.length - a.length);
  return {
    vocabSize: vocab.length,
    tokenId: (token) => (SPECIAL_TOKENS.includes(token) ? idOf.get(token) : undefined),
    encode(text) {
      const ids: number[] = [];
      let i = 0;
      while (i < text.length) {
        const piece = multi.find((m) => text.startsWith(m, i));
        if (piece) {
          ids.push(idOf.get(piece)!);
          i += piece.length;
        } else {
          ids.push(idOf.get(text[i]) ?? unknown);
          i++;
        }
      }
      return ids;
    },
    decode: (ids) => ids.map((id) => vocab[id] ?? '?').join(''),
  };
}

/** Test prompts keep the last this-many characters of the user message (short sequences, fast tests). */
export const USER_TEXT_CHARS = 48;

/** Renders only the user message(s), cut to their last USER_TEXT_CHARS characters, and the generation prompt (tests: short prompts). */
export const renderUserOnly: RenderChat = (messages, { addGenerationPrompt } = {}) =>
  messages
    .filter((m) => m.role === 'user')
    .map((m) => `<|im_start|>user\n${m.content.slice(-USER_TEXT_CHARS)}${IM_END}\n`)
    .join('') + (addGenerationPrompt ? '<|im_start|>assistant\n' : '');

export function createTinyModelConfig(vocabSize: number): Qwen3Config {
  return createTrainerTestQwen3Config({ vocab_size: vocabSize });
}

export interface TinySearchSetup {
  repo: ToolRepository;
  engine: ToolSearch;
  tokenizer: TextTokenizer;
  trainPrompts: PromptItem[];
  testPrompts: PromptItem[];
}

/**
 * A ~80-tool generated repository (4 categories, 6 queries). The engine returns 1 document
 * per search and, to keep sequences short, its observation text lists only the names
 * (`1. name (tool: …)`); hits and events are the real engine's.
 */
export function createTinySearchSetup(): TinySearchSetup {
  const repo = generateToolRepo({ seed: 3, minTools: 80, categories: 4, collections: 4, queriesPerLevel: 2 });
  const full = createToolSearch(repo, { topK: 1 });
  const engine: ToolSearch = {
    ...full,
    search(query, category, scope) {
      const out = full.search(query, category, scope);
      return out.isOk
        ? { ...out, text: out.hits.map((h, i) => `${i + 1}. ${h.doc.name} (tool: ${h.doc.toolName})`).join('\n') }
        : out;
    },
  };
  const prompts = createToolSearchPrompts(repo.queries, { engine, renderChat: renderUserOnly });
  return {
    repo,
    engine,
    tokenizer: createCharTokenizer(),
    trainPrompts: prompts.slice(0, 4),
    testPrompts: prompts.slice(4),
  };
}

/** The user text of a rendered context (the first user block). */
export function readUserText(context: string): string {
  return /<\|im_start\|>user\n([\s\S]*?)<\|im_end\|>/.exec(context)?.[1] ?? '';
}

/**
 * A policy that writes `pick(context, row)` (then `<|im_end|>`) for each row of a batched
 * call and reports the model's log-probs of those tokens. Records every context it saw.
 */
export function createScriptedPolicy(
  model: Qwen3Model,
  tokenizer: TextTokenizer,
  pick: (context: string, row: number) => string,
): PolicySampler & { contexts: number[][]; temperatures: number[] } {
  const imEnd = tokenizer.tokenId(IM_END)!;
  const contexts: number[][] = [];
  const temperatures: number[] = [];
  return {
    contexts,
    temperatures,
    async generate(prompts, opts): Promise<GeneratedRow[]> {
      contexts.push(...prompts.map((p) => p.slice()));
      temperatures.push(opts.temperature);
      const generated = prompts.map((p, r) =>
        [...tokenizer.encode(pick(tokenizer.decode(p), r)), imEnd].slice(0, opts.maxNewTokens),
      );
      const rows = prompts.map((p, r) => [...p, ...generated[r]]);
      const T = Math.max(...rows.map((r) => r.length));
      const out = tf.tidy(() => {
        const { inputIds, attentionMask } = packTokenRows(rows, { length: T }); // [B, T]
        return model.computeTokenLogprobs(inputIds, attentionMask).logprobs; // [B, T−1]
      });
      const data = await out.data();
      out.dispose();
      return prompts.map((p, r) => {
        // column n − 1 holds log π(token n | <n); generated token j sits at n = p.length + j
        const logprobs = generated[r].map((_, j) => data[r * (T - 1) + p.length + j - 1]);
        const isStop = generated[r][generated[r].length - 1] === imEnd;
        return { tokens: generated[r], logprobs, samplingLogprobs: logprobs, finishReason: isStop ? 'stop' : 'length' };
      });
    },
  };
}

/**
 * The search script of the recipe tests: turn 0 searches for the API name of the query's
 * first gold tool; later turns select the gold tools (even rows) or a tool that does not
 * exist (odd rows). The query is recognised by its (cut) user text.
 */
export function createSearchScript(repo: ToolRepository): (context: string, row: number) => string {
  return (context, row) => {
    const userText = readUserText(context);
    const query = repo.queries.find((q) => q.text.slice(-USER_TEXT_CHARS) === userText);
    if (!query) throw new Error(`search script: no query starts with ${JSON.stringify(userText)}`);
    if (!context.includes('<tool_response>')) {
      const apiName = repo.tools.find((t) => t.id === query.goldToolIds[0])?.apiName ?? userText;
      return `<think>x</think><tool_call>{"name": "search", "arguments": {"query": ${JSON.stringify(apiName)}}}</tool_call>`;
    }
    return `<tool_list>${JSON.stringify(row % 2 === 0 ? query.goldToolIds : ['no_such_tool'])}</tool_list>`;
  };
}

export function createTinyModel(tokenizer: TextTokenizer, seed = 7): Qwen3Model {
  return Qwen3Model.fromConfig(createTinyModelConfig(tokenizer.vocabSize), seed);
}

/** Two generated tool-use tasks (single- and multi-hop, no distractors) and one test task. */
export function createTinyToolUseTasks(): { trainTasks: Task[]; testTasks: Task[] } {
  const options = { hops: 2, distractors: 0, categories: ['single_hop', 'multi_hop'] as const };
  return {
    trainTasks: generateTasks({ ...options, seed: 1, split: 'train', n: 2 }),
    testTasks: generateTasks({ ...options, seed: 2, split: 'test', n: 1 }),
  };
}

/**
 * The tool-use script of the recipe tests: even rows make the task's gold calls one per
 * turn, then answer with the gold answer; odd rows call a wrong tool name, then answer
 * "unknown".
 */
export function createToolUseScript(tasks: readonly Task[]): (context: string, row: number) => string {
  return (context, row) => {
    const userText = readUserText(context);
    const task = tasks.find((t) => t.question.endsWith(userText) || userText.endsWith(t.question));
    if (!task) throw new Error('tool-use script: no task matches the context');
    const turn = context.split('<|im_start|>assistant').length - 2; // 0-based: one generation prompt per turn
    const gold = task.goldCalls ?? [];
    if (row % 2 === 1)
      return turn === 0
        ? '<think>try</think><tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>'
        : '<think>done</think><answer>unknown</answer>';
    const call = gold[turn];
    return call
      ? `<think>step</think><tool_call>${JSON.stringify(call)}</tool_call>`
      : `<think>done</think><answer>${task.answer}</answer>`;
  };
}

export interface OneStepResult {
  metrics: StepMetrics;
  evaluation: EvalMetrics;
  trainer: Trainer;
  /** The scripted policy: every generation call's contexts and temperature. */
  policy: ReturnType<typeof createScriptedPolicy>;
}

/** Runs one training step of `recipe` (scripted policy, tiny model, cpu) and one evaluation. */
export async function runOneStep(recipe: string, overrides: TrainConfigInput = {}): Promise<OneStepResult> {
  await useCpuBackend();
  const isSearch = ['toolsearcher', 'search_r1', 'gspo', 'gdpo'].includes(recipe);
  const tokenizer = createCharTokenizer();
  const model = createTinyModel(tokenizer);
  let trainPrompts: PromptItem[];
  let testPrompts: PromptItem[];
  let pick: (context: string, row: number) => string;
  if (isSearch) {
    const s = createTinySearchSetup();
    trainPrompts = s.trainPrompts;
    testPrompts = s.testPrompts;
    pick = createSearchScript(s.repo);
  } else {
    const { trainTasks, testTasks } = createTinyToolUseTasks();
    trainPrompts = createToolUsePrompts(trainTasks);
    testPrompts = createToolUsePrompts(testTasks);
    pick = createToolUseScript([...trainTasks, ...testTasks]);
  }
  const config = resolveConfig({
    recipe,
    batchPrompts: 1,
    miniBatchPrompts: 1,
    rolloutsPerPrompt: 2,
    maxTurns: 4,
    maxPromptTokens: 200,
    maxResponseTokens: 400,
    steps: 4,
    tasks: { source: isSearch ? 'tool-repo' : 'generated', nTest: 1 },
    ...overrides,
  });
  const policy = createScriptedPolicy(model, tokenizer, pick);
  const trainer = new Trainer({
    config,
    model,
    tokenizer,
    renderChat: renderUserOnly,
    executor: new InProcessExecutor(),
    trainPrompts,
    testPrompts,
    wrapPolicy: () => policy,
  });
  const metrics = await trainer.step();
  const evaluation = await trainer.evaluate({ nTasks: 1 });
  return { metrics, evaluation, trainer, policy };
}

/** The step metrics every recipe must report as finite numbers. */
export const FINITE_STEP_METRICS = [
  'reward',
  'reward_std',
  'frac_reward_zero_std',
  'completions/mean_length',
  'kl',
  'entropy',
  'clip_ratio',
  'grad_norm',
  'loss',
  'loss/Lx',
] as const;

/** A search turn that found `found`, or the selection turn with `selected` names. */
function makeHandTurn(turn: number, kind: { found: string[] } | { selected: string[] }): SearchTurnRecord {
  if ('found' in kind) {
    return {
      turn,
      assistantText: '',
      calls: [{ isOk: true, query: 'q', category: null }],
      observations: ['…'],
      events: [{ turn, query: 'q', category: null, returnedIds: kind.found }],
      isSelection: false,
    };
  }
  return { turn, assistantText: '', calls: [], observations: [], events: [], isSelection: true };
}

/** A hand-built rollout: its turns, the resolved selection, the first turn each gold tool was found. */
function makeHandRollout(
  gold: string,
  turns: SearchTurnRecord[],
  selectedIds: string[],
  firstFoundTurns: Record<string, number | null>,
): Rollout {
  const found = Object.values(firstFoundTurns).filter((t) => t !== null).length;
  const info: SearchRolloutInfo = {
    summary: {
      queryId: 'q',
      goldIds: [gold],
      selectedIds,
      unknownNames: [],
      hasValidSelection: turns.some((t) => t.isSelection),
      searchedIds: turns.flatMap((t) => t.events.flatMap((e) => e.returnedIds)),
      searchRecall: found / Object.keys(firstFoundTurns).length,
      firstFoundTurns,
      discoveriesPerEvent: [],
      turns: turns.length,
      stopReason: 'tool_list',
    },
    turns,
    isCategoryConstrained: false,
  };
  return {
    ids: [],
    tags: [],
    behaviourLogprobs: [],
    promptLength: 0,
    generatedLength: 0,
    callOutputs: [],
    isFinished: true,
    meta: { search: info },
  };
}

/**
 * A hand-built group of 3 rollouts for the first gold tool of `prompt`:
 * rollout 0 finds it at turn 0 and selects it (F1 1, format 1), rollout 1 finds it at
 * turn 0 and selects an unknown name (F1 0, format 1), rollout 2 selects nothing at turn 0
 * without searching (F1 0, format 1, SRecall 0).
 */
export function createHandSearchGroup(prompt: PromptItem): RolloutGroup {
  const gold = (prompt as { query: { goldToolIds: string[] } }).query.goldToolIds[0];
  return {
    prompt,
    rollouts: [
      makeHandRollout(gold, [makeHandTurn(0, { found: [gold] }), makeHandTurn(1, { selected: [gold] })], [gold], {
        [gold]: 0,
      }),
      makeHandRollout(gold, [makeHandTurn(0, { found: [gold] }), makeHandTurn(1, { selected: ['x'] })], [], {
        [gold]: 0,
      }),
      makeHandRollout(gold, [makeHandTurn(0, { selected: [] })], [], { [gold]: null }),
    ],
  };
}

/** A tool-use rollout built by playing `texts` (one per assistant turn) through the real environment. */
export async function createHandToolUseRollout(task: Task, texts: readonly string[]): Promise<Rollout> {
  const env = new RolloutEnv({ executor: new InProcessExecutor(), renderChat: renderUserOnly, maxTurns: texts.length });
  env.reset(task);
  for (const text of texts) if ((await env.step(text)).done) break;
  const transcript = env.transcript;
  return {
    ids: [],
    tags: [],
    behaviourLogprobs: [],
    promptLength: 0,
    generatedLength: 0,
    transcript,
    callOutputs: transcript.turns.flatMap((t) => t.outputs),
    isFinished: transcript.done,
  };
}
