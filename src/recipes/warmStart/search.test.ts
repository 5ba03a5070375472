// Search episodes in the warm start: the search teacher's episodes replayed through the
// search-rollout collector (rows shaped like RL rollouts), their SFT masks, the vocabulary
// question (the shipped pruned vocabulary has no search text), pretrain's search options,
// and the task stream. Independent references: Qwen3's own chat template over the episode's
// messages for the text, the env's own scoring for F1.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { IM_END, formatObservationBlock } from '../../envs/rollout';
import { InProcessExecutor } from '../../envs/sandbox/index';
import {
  buildSearchTeacherEpisode,
  createSearchEnv,
  createToolSearch,
  generateToolRepo,
} from '../../envs/toolRepo/index';
import { loadQwen3TokenizerFromPackage } from '../../model/tokenizer/nodeLoader';
import { PrunedTokenizer, parsePrunedVocabMapping } from '../../model/tokenizer/prunedVocab';
import type { Qwen3Tokenizer } from '../../model/tokenizer/qwen3Tokenizer';
import { selectBackend } from '../../model/backend';
import { Qwen3Model } from '../../model/qwen3/index';
import { bindRenderChat, buildPolicyVocab } from '../policyVocab';
import {
  createCharTokenizer,
  createTinyModelConfig,
  createTinySearchSetup,
  renderUserOnly,
} from '../testing/searchTestKit';
import { evaluateSearchRollout, createToolSearchPrompts, replaySearchTeacherEpisode } from '../rollouts/searchRollouts';
import {
  buildSftRow,
  encodeSearchEpisode,
  evaluateSearchGreedy,
  extendWarmStartVocab,
  generateSearchSftTasks,
  packSftRows,
  resolveSearchWarmStartCounts,
  SEARCH_WARM_START,
  unpackSftRows,
  type SearchSftTask,
  type WarmStart,
  type WarmStartInfo,
} from './index';
import type { HostTensor } from '../../model/qwen3/model';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let source: Qwen3Tokenizer;
let tasks: SearchSftTask[];

beforeAll(async () => {
  source = await loadQwen3TokenizerFromPackage();
  const repo = generateToolRepo({ seed: 5, minTools: 400, queriesPerLevel: 2 });
  const handle = { engine: createToolSearch(repo), renderChat: bindRenderChat(source) };
  tasks = repo.queries.map((query, i) => {
    const result = buildSearchTeacherEpisode(handle.engine, query, { maxTurns: 4, isCategoryConstrained: i % 2 === 0 });
    if (!result.isOk) throw new Error(result.reason);
    return { query, handle, episode: result.episode };
  });
});

/** The episode as Qwen3's chat template writes it, from the env's own observations (the reference). */
function renderReference(task: SearchSftTask): string {
  const env = createSearchEnv(task.handle.engine, {
    maxTurns: task.episode.maxTurns,
    isCategoryConstrained: task.episode.isCategoryConstrained,
  });
  const start = env.reset(task.query);
  let text = source.renderChat(
    [
      { role: 'system', content: start.instructions },
      { role: 'user', content: start.userText },
    ],
    { tools: start.tools, addGenerationPrompt: true },
  );
  for (const turn of task.episode.assistantTexts) {
    const { observations, isDone } = env.step(turn);
    text += turn + IM_END + (isDone ? '' : '\n' + formatObservationBlock(observations));
  }
  return text;
}

describe('search episodes as SFT rows', () => {
  it('replay through the search-rollout collector: the chat-template text, scored F1 = 1 by the env', async () => {
    for (const task of tasks) {
      const episode = await encodeSearchEpisode(task, source);
      expect(episode.text).toBe(renderReference(task));
      const rollout = await replaySearchTeacherEpisode(task.episode, task.query, task.handle, source);
      const [prompt] = createToolSearchPrompts([task.query], task.handle);
      expect(evaluateSearchRollout(rollout, prompt)).toMatchObject({
        f1: 1,
        recall: 1,
        precision: 1,
        match: 1,
        search_recall: 1,
        format: 1,
      });
      expect(rollout.isFinished).toBe(true);
    }
  });

  it('trains exactly the policy-written tokens: each turn + <|im_end|>, never the prompt or the observations', async () => {
    const shipped = new PrunedTokenizer(
      source,
      parsePrunedVocabMapping(JSON.parse(readFileSync(path.join(REPO, 'public/warm-start/pruned_vocab.json'), 'utf8'))),
    );
    for (const [task, tokenizer] of tasks.flatMap(
      (t) =>
        [
          [t, source],
          [t, shipped],
        ] as const,
    )) {
      const episode = await encodeSearchEpisode(task, tokenizer);
      const row = buildSftRow(episode, 1 << 20);
      expect(row.ids).toEqual(episode.ids);
      expect(row.targetMask).toHaveLength(row.ids.length - 1);
      // Trained count = Σ over turns of the tokens of (turn text + <|im_end|>).
      const turnTokens = task.episode.assistantTexts.map((t) => tokenizer.encode(t + IM_END).length);
      expect(row.targetMask.reduce((a, b) => a + b, 0)).toBe(turnTokens.reduce((a, b) => a + b, 0));
      // The trained targets (ids[t + 1] where targetMask[t] = 1) decode to the turns, in order.
      const trained = row.ids.slice(1).filter((_, t) => row.targetMask[t] === 1);
      expect(tokenizer.decode(trained)).toBe(task.episode.assistantTexts.map((t) => t + IM_END).join(''));
      // The untrained ids are the prompt, then observation blocks.
      const kinds = new Set(episode.tags.filter((_, t) => t > 0 && row.targetMask[t - 1] === 0).map((tag) => tag.kind));
      expect(kinds).toEqual(new Set(['prompt', 'observation']));
      // Rows cut at maxSeqLen keep the mask's prefix; pruned ids export (--export-rows) and round-trip.
      const cut = buildSftRow(episode, 300);
      expect(cut.ids).toEqual(row.ids.slice(0, 300));
      expect(cut.targetMask).toEqual(row.targetMask.slice(0, 299));
      if (tokenizer === shipped) expect(unpackSftRows(packSftRows([row, cut]))).toEqual([row, cut]);
    }
  });

  it('the shipped pruned vocabulary (tool-use text only) encodes search text exactly but through the byte fallback; a vocabulary with the search text does not', async () => {
    const shipped = new PrunedTokenizer(
      source,
      parsePrunedVocabMapping(JSON.parse(readFileSync(path.join(REPO, 'public/warm-start/pruned_vocab.json'), 'utf8'))),
    );
    const text = (await encodeSearchEpisode(tasks[0], source)).text;
    const viaShipped = shipped.encode(text);
    expect(shipped.decode(viaShipped)).toBe(text);
    const fullCount = source.encode(text).length;
    // Measured: about 2.5× the full vocabulary's count (tool names, categories and
    // descriptions are words the tool-use corpus never had).
    expect(viaShipped.length).toBeGreaterThan(1.8 * fullCount);
    const withSearch = await buildPolicyVocab(
      { seed: 3, nTasks: 2, maxVocabSize: 4096, extraTexts: [text] },
      source,
      new InProcessExecutor(),
    );
    expect(withSearch.tokenizer.encode(text).length).toBe(fullCount);
    const withoutSearch = await buildPolicyVocab(
      { seed: 3, nTasks: 2, maxVocabSize: 4096 },
      source,
      new InProcessExecutor(),
    );
    expect(withoutSearch.tokenizer.encode(text).length).toBeGreaterThan(fullCount);
  }, 60_000);
});

describe('generateSearchSftTasks', () => {
  it('is deterministic by seed, alternates category-constrained and global episodes, and holds out another repository', () => {
    const renderChat = bindRenderChat(source);
    const a = generateSearchSftTasks({ seed: 1, n: 4, split: 'train' }, renderChat);
    const b = generateSearchSftTasks({ seed: 1, n: 4, split: 'train' }, renderChat);
    expect(a.tasks.map((t) => t.query.id)).toEqual(b.tasks.map((t) => t.query.id));
    expect(a.tasks.map((t) => t.episode.assistantTexts)).toEqual(b.tasks.map((t) => t.episode.assistantTexts));
    expect(a.tasks.map((t) => t.episode.isCategoryConstrained)).toEqual([true, false, true, false]);
    expect(a.tasks.every((t) => t.episode.maxTurns === SEARCH_WARM_START.maxTurns)).toBe(true);
    expect(a.tasks[0].query.id).toMatch(/^gen:1000:/);
    expect(a.tasks.slice(0, 3).map((t) => t.query.level)).toEqual([
      'single_tool',
      'intra_category',
      'intra_collection',
    ]);
    const test = generateSearchSftTasks({ seed: 1, n: 2, split: 'test' }, renderChat);
    expect(test.tasks[0].query.id).toMatch(/^gen:1999:/);
    expect(test.tasks.every((t) => !t.episode.isCategoryConstrained)).toBe(true);
  }, 30_000);

  it("searches as a run's search does by default: 3 hits without parameter descriptions or outputs; a presentation overrides it", () => {
    const renderChat = bindRenderChat(source);
    const [task] = generateSearchSftTasks({ seed: 1, n: 1, split: 'train' }, renderChat).tasks;
    const query = task.query.text;
    const out = task.handle.engine.search(query);
    expect(out.hits).toHaveLength(3);
    expect(out.text.split('\n')).toHaveLength(9); // name, description, inputs per hit
    expect(out.text).not.toContain('outputs:');
    expect(out.text).not.toMatch(/required\): /); // inputs by name and type only
    const [wide] = generateSearchSftTasks(
      {
        seed: 1,
        n: 1,
        split: 'train',
        presentation: {
          topK: 5,
          resultLimits: { maxDescriptionChars: 256, maxParamDescriptionChars: 96, maxOutputChars: 240 },
        },
      },
      renderChat,
    ).tasks;
    const wideOut = wide.handle.engine.search(query);
    expect(wideOut.hits).toHaveLength(5);
    expect(wideOut.hits.slice(0, 3).map((h) => h.doc.id)).toEqual(out.hits.map((h) => h.doc.id));
    expect(wideOut.text.split('\n')).toHaveLength(20);
  }, 30_000);
});

describe('resolveSearchWarmStartCounts (npm run pretrain --search-tasks …)', () => {
  const info = (extra: Partial<WarmStartInfo>): WarmStartInfo => ({ ...extra }) as WarmStartInfo;

  it('defaults: no search; --search-tasks N puts the N episodes in the vocabulary and evaluates 8 held-out queries', () => {
    expect(resolveSearchWarmStartCounts({})).toEqual({
      searchTasks: 0,
      vocabSearchTasks: 0,
      searchEvalTasks: 0,
      isVocabExtended: false,
    });
    expect(resolveSearchWarmStartCounts({ searchTasks: '200' })).toEqual({
      searchTasks: 200,
      vocabSearchTasks: 200,
      searchEvalTasks: 8,
      isVocabExtended: false,
    });
    expect(resolveSearchWarmStartCounts({ searchTasks: '200', vocabSearchTasks: '50', searchEvalTasks: '3' })).toEqual({
      searchTasks: 200,
      vocabSearchTasks: 50,
      searchEvalTasks: 3,
      isVocabExtended: false,
    });
  });

  it("--init DIR keeps DIR's vocabulary (its vocabSearchTasks, 0 for the shipped warm start) unless asked to grow it; it never shrinks", () => {
    expect(resolveSearchWarmStartCounts({ searchTasks: '64' }, { dir: 'public/warm-start', info: info({}) })).toEqual({
      searchTasks: 64,
      vocabSearchTasks: 0,
      searchEvalTasks: 8,
      isVocabExtended: false,
    });
    expect(
      resolveSearchWarmStartCounts(
        { searchTasks: '64', vocabSearchTasks: '64' },
        { dir: 'public/warm-start', info: info({}) },
      ),
    ).toMatchObject({
      vocabSearchTasks: 64,
      isVocabExtended: true,
    });
    expect(() =>
      resolveSearchWarmStartCounts({ vocabSearchTasks: '10' }, { dir: 'w', info: info({ vocabSearchTasks: 64 }) }),
    ).toThrow("--vocab-search-tasks 10: --init w's vocabulary was built with 64 search episodes and cannot shrink");
    expect(resolveSearchWarmStartCounts({}, { dir: 'x', info: info({ vocabSearchTasks: 300 }) }).vocabSearchTasks).toBe(
      300,
    );
    // A stage whose earlier stage trained search episodes is evaluated on search by default.
    expect(
      resolveSearchWarmStartCounts({}, { dir: 'x', info: info({ previousStage: info({ searchTasks: 10 }) }) })
        .searchEvalTasks,
    ).toBe(8);
  });

  it('rejects values that are not non-negative integers, naming the flag', () => {
    expect(() => resolveSearchWarmStartCounts({ searchTasks: '-3' })).toThrow(
      '--search-tasks must be a non-negative integer, got "-3"',
    );
    expect(() => resolveSearchWarmStartCounts({ searchEvalTasks: 'x' })).toThrow(
      '--search-eval-tasks must be a non-negative integer, got "x"',
    );
  });
});

describe('evaluateSearchGreedy', () => {
  it('runs greedy global-search rollouts of a tiny model and averages the held-out metrics', async () => {
    await selectBackend('cpu');
    const setup = createTinySearchSetup();
    const tokenizer = createCharTokenizer();
    const handle = { engine: setup.engine, renderChat: renderUserOnly };
    const held = setup.repo.queries.slice(0, 2).map((query) => {
      const result = buildSearchTeacherEpisode(setup.engine, query, { maxTurns: 2, isCategoryConstrained: false });
      if (!result.isOk) throw new Error(result.reason);
      return { query, handle, episode: result.episode };
    });
    const model = Qwen3Model.fromConfig(createTinyModelConfig(tokenizer.vocabSize), 1);
    try {
      const m = await evaluateSearchGreedy(model, tokenizer, held, {
        maxTurns: 2,
        maxPromptTokens: 256,
        maxResponseTokens: 24,
      });
      expect(m.nTasks).toBe(2);
      for (const key of ['f1', 'recall', 'precision', 'match', 'search_recall', 'format'] as const) {
        expect(m[key]).toBeGreaterThanOrEqual(0);
        expect(m[key]).toBeLessThanOrEqual(1);
      }
      // An untrained model writes no well-formed selection.
      expect(m.format).toBe(0);
      expect(m.turns).toBeGreaterThanOrEqual(1);
    } finally {
      model.dispose();
    }
  }, 60_000);
});

describe('extendWarmStartVocab', () => {
  it('copies the rows of kept tokens by full id, starts new tokens at the mean of the rows that spelled them, and loads as a model', async () => {
    await selectBackend('cpu');
    const executor = new InProcessExecutor();
    const text = (await encodeSearchEpisode(tasks[0], source)).text;
    const small = await buildPolicyVocab({ seed: 3, nTasks: 2, maxVocabSize: 4096 }, source, executor);
    const grown = await buildPolicyVocab(
      { seed: 3, nTasks: 2, maxVocabSize: 4096, extraTexts: [text] },
      source,
      executor,
    );
    const oldV = small.mapping.keptIds.length;
    // Under a cap, the extra text's tokens go first: the tool-use vocabulary stays a subset.
    const capped = await buildPolicyVocab(
      { seed: 3, nTasks: 2, maxVocabSize: oldV + 10, extraTexts: [text] },
      source,
      executor,
    );
    expect(capped.mapping.keptIds).toHaveLength(oldV + 10);
    expect(small.mapping.keptIds.every((id) => capped.mapping.keptIds.includes(id))).toBe(true);
    const config = { ...createTinyModelConfig(oldV), tie_word_embeddings: true };
    const model = Qwen3Model.fromConfig(config, 1);
    const tensors = new Map<string, HostTensor>();
    for (const [name, t] of model.params)
      tensors.set(name, { shape: [...t.shape], data: Float32Array.from(t.dataSync()) });
    model.dispose();
    const warm: WarmStart = { config, tensors, mapping: small.mapping };
    const out = extendWarmStartVocab(warm, grown.mapping, source);
    const newV = grown.mapping.keptIds.length;
    expect(newV).toBeGreaterThan(oldV);
    expect(out.config.vocab_size).toBe(newV);
    const H = config.hidden_size;
    const oldEmbed = tensors.get('model.embed_tokens.weight')!.data;
    const newEmbed = out.tensors.get('model.embed_tokens.weight')!;
    expect(newEmbed.shape).toEqual([newV, H]);
    const row = (data: Float32Array, r: number) => Array.from(data.subarray(r * H, (r + 1) * H));
    const oldCompact = new Map(small.mapping.keptIds.map((fullId, c) => [fullId, c]));
    const checked = { copied: 0, averaged: 0 };
    grown.mapping.keptIds.forEach((fullId, r) => {
      const c = oldCompact.get(fullId);
      if (c !== undefined) {
        expect(row(newEmbed.data, r)).toEqual(row(oldEmbed, c));
        checked.copied++;
      } else if (checked.averaged < 20 && source.encode(source.decode([fullId])).join() === String(fullId)) {
        // The old vocabulary spelled this token with pieces p1..pn: its row starts at their mean.
        const pieces = small.tokenizer.encode(source.decode([fullId]));
        const mean = row(oldEmbed, 0).map(
          (_, h) => pieces.reduce((acc, p) => acc + oldEmbed[p * H + h], 0) / pieces.length,
        );
        row(newEmbed.data, r).forEach((v, h) => expect(v).toBeCloseTo(mean[h], 6));
        checked.averaged++;
      }
    });
    expect(checked.copied).toBe(oldV);
    expect(checked.averaged).toBeGreaterThan(0);
    // The grown warm start is a model over the new vocabulary.
    const grownModel = Qwen3Model.fromTensors(out.config, out.tensors);
    expect(grownModel.config.vocab_size).toBe(newV);
    grownModel.dispose();
    // A vocabulary that is not a superset is refused.
    const lastOld = small.mapping.keptIds[oldV - 1];
    expect(() =>
      extendWarmStartVocab(warm, { keptIds: grown.mapping.keptIds.filter((id) => id !== lastOld) }, source),
    ).toThrow(/must be a superset/);
  }, 60_000);
});
