// Warm start: the SFT row/mask construction, the SFT loss against a log-softmax computed
// by hand from the full logits, determinism and memory of the SFT loop, scoring of
// transcripts, and the save → load round trip (Node reader and fetch reader), plus the
// shipped checkpoint under public/warm-start.
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from '../../model/qwen3/tf';
import { selectBackend } from '../../model/backend';
import { Qwen3Model, getQwen3Preset } from '../../model/qwen3/index';
import { createTinyQwen3Config } from '../../model/weights/testFolders';
import type { TokenTag } from '../../core/types';
import { RolloutEnv } from '../../envs/rollout';
import { generateTasks } from '../../envs/generator';
import { createTinySetup, type TinySetup } from '../testing/testKit';
import { encodeEpisode, replayExpertEpisode } from '../policyVocab';
import {
  buildSftRow,
  computeSftLoss,
  createFetchReader,
  createWarmStartConfig,
  DEFAULT_WARM_START_OPTIONS,
  evaluateGreedy,
  exportWarmStartFiles,
  loadWarmStart,
  packSftRows,
  runWarmStartSft,
  scoreTranscripts,
  unpackSftRows,
  WARM_START_FILES,
  type SftTargetRow,
  type WarmStartInfo,
} from './index';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const TINY = createTinyQwen3Config({ vocab_size: 11, initializer_range: 0.5 });

const tag = (kind: TokenTag['kind']): TokenTag => ({ kind, turn: kind === 'prompt' ? -1 : 0 });

beforeAll(async () => {
  await selectBackend('cpu');
});

describe('buildSftRow', () => {
  it('marks the targets that are policy-written and cuts at maxSeqLen', () => {
    // ids:  p p r c o t a   → targets ids[1..]: p r c o t a → mask 0 1 1 0 1 1
    const episode = {
      ids: [1, 2, 3, 4, 5, 6, 7],
      tags: [
        tag('prompt'),
        tag('prompt'),
        tag('reasoning'),
        tag('control'),
        tag('observation'),
        tag('tool_call'),
        tag('answer'),
      ],
    };
    expect(buildSftRow(episode, 100)).toEqual({ ids: [1, 2, 3, 4, 5, 6, 7], targetMask: [0, 1, 1, 0, 1, 1] });
    expect(buildSftRow(episode, 4)).toEqual({ ids: [1, 2, 3, 4], targetMask: [0, 1, 1] });
    expect(() => buildSftRow({ ids: [1, 2], tags: [tag('prompt')] }, 4)).toThrow('buildSftRow: 2 ids but 1 tags');
  });
});

describe('packSftRows', () => {
  it('writes the count, the lengths and id | trained << 15 little-endian, and reads it back', () => {
    const rows: SftTargetRow[] = [
      { ids: [5, 300, 7], targetMask: [1, 0] },
      { ids: [32767, 1], targetMask: [1] },
    ];
    const bytes = packSftRows(rows);
    // u32 2 | u32 3 | u32 2 | 5 | 300+32768=33068 (0x812C) | 7 | 32767 (0x7FFF) | 1+32768 (0x8001)
    expect([...bytes]).toEqual([2, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0x2c, 0x81, 7, 0, 0xff, 0x7f, 0x01, 0x80]);
    expect(unpackSftRows(bytes)).toEqual(rows);
    expect(() => packSftRows([{ ids: [32768, 1], targetMask: [1] }])).toThrow(
      'row 0 token 0 id 32768 is not in [0, 32768)',
    );
    expect(() => packSftRows([{ ids: [1, 2], targetMask: [] }])).toThrow('row 0 has 2 ids but 0 target-mask entries');
    expect(() => unpackSftRows(bytes.subarray(0, 20))).toThrow();
  });
});

describe('computeSftLoss', () => {
  it('equals −Σ m·log softmax(logits)[next] / Σ m from the full logits', async () => {
    const model = Qwen3Model.fromConfig(TINY, 3);
    const rows: SftTargetRow[] = [
      { ids: [1, 4, 2, 9, 3], targetMask: [0, 1, 1, 1] },
      { ids: [5, 6, 7], targetMask: [1, 0] },
    ];
    const loss = computeSftLoss(model, rows);
    const got = (await loss.data())[0];
    loss.dispose();
    let sum = 0;
    let count = 0;
    for (const row of rows) {
      const logits = model.computeLogits(
        tf.tensor2d([row.ids], [1, row.ids.length], 'int32'),
        tf.ones([1, row.ids.length]) as tf.Tensor2D,
      );
      const z = await logits.data();
      logits.dispose();
      const V = TINY.vocab_size;
      row.targetMask.forEach((m, t) => {
        if (m === 0) return;
        const zt = Array.from(z.slice(t * V, (t + 1) * V));
        const max = Math.max(...zt);
        const lse = max + Math.log(zt.reduce((s, v) => s + Math.exp(v - max), 0));
        sum -= zt[row.ids[t + 1]] - lse;
        count += 1;
      });
    }
    expect(count).toBe(4); // 3 targets of row 0 + 1 of row 1
    expect(Math.abs(got - sum / count)).toBeLessThan(1e-5);
    model.dispose();
  });
});

describe('runWarmStartSft', () => {
  it('is deterministic by seed, lowers the loss on a repeated row, and leaks no tensors per step', async () => {
    const rows: SftTargetRow[] = [{ ids: [1, 2, 3, 4, 5, 6, 7, 8], targetMask: [0, 0, 1, 1, 1, 1, 1] }];
    const run = async (steps: number) => {
      const model = Qwen3Model.fromConfig(TINY, 1);
      const before = tf.memory().numTensors;
      const losses = await runWarmStartSft(model, rows, {
        ...DEFAULT_WARM_START_OPTIONS,
        steps,
        warmupSteps: 1,
        lrPeak: 1e-2,
      });
      const leftover = tf.memory().numTensors - before;
      model.dispose();
      return { losses, leftover };
    };
    const a = await run(6);
    const b = await run(6);
    expect(b.losses).toEqual(a.losses);
    expect(a.losses.length).toBe(6);
    expect(a.losses[5]).toBeLessThan(a.losses[0]);
    // Whatever the optimiser's construction leaves behind, the steps add nothing: 2 steps
    // and 6 steps leave the same tensor count.
    expect((await run(2)).leftover).toBe(a.leftover);
  });

  it('names a bad option', async () => {
    const model = Qwen3Model.fromConfig(TINY, 1);
    await expect(runWarmStartSft(model, [], DEFAULT_WARM_START_OPTIONS)).rejects.toThrow(
      'runWarmStartSft: no training rows',
    );
    await expect(
      runWarmStartSft(model, [{ ids: [1, 2], targetMask: [1] }], { ...DEFAULT_WARM_START_OPTIONS, steps: 0 }),
    ).rejects.toThrow('runWarmStartSft: steps must be a positive integer, got 0');
    model.dispose();
  });
});

describe('evaluation', () => {
  let setup: TinySetup;
  beforeAll(async () => {
    setup = await createTinySetup();
  });

  it('scores the teacher replay as fully solved and a wrong answer as unsolved', async () => {
    const env = new RolloutEnv({ executor: setup.executor, renderChat: setup.renderChat });
    const task = setup.trainTasks[1]; // multi_hop
    const expert = structuredClone(await replayExpertEpisode(task, env));
    env.reset(task);
    await env.step('<think>\nno tools\n</think>\n\n<answer>nothing</answer><|im_end|>');
    const wrong = env.transcript;
    const m = scoreTranscripts([expert, wrong]);
    // expert: Solve-R = 1 (every sub-answer obtained), answer correct; wrong: no calls → R = 0,
    // P = 1 by FTRL's convention for no calls (ftrlSolveMetrics), answer wrong.
    expect(m.nTasks).toBe(2);
    expect(m.answerAccuracy).toBe(0.5);
    expect(m.fullySolved).toBe(0.5);
    expect(m.solveR).toBe(0.5);
    expect(m.byCategory).toEqual({ multi_hop: [2, 1] });
  });

  it('evaluateGreedy runs greedy rollouts of a tiny model and returns one transcript per task', async () => {
    const model = setup.createModel(3);
    const tasks = generateTasks({ seed: 2, split: 'test', n: 2, distractors: 0, categories: ['single_hop'] });
    const { metrics, transcripts } = await evaluateGreedy(model, setup.tokenizer, tasks, setup, {
      maxTurns: 2,
      maxPromptTokens: 2048,
      maxResponseTokens: 8,
    });
    expect(transcripts.map((t) => t.task.id)).toEqual(tasks.map((t) => t.id));
    expect(metrics.nTasks).toBe(2);
    expect(metrics.answerAccuracy).toBe(0); // 8 random tokens cannot hold an <answer> block
    model.dispose();
  });
});

describe('warm-start files', () => {
  it('save → load round trip through a Node reader and a fetch reader', async () => {
    const config = createWarmStartConfig(9, TINY);
    expect(config.vocab_size).toBe(9);
    expect(() => createWarmStartConfig(12, TINY)).toThrow("keeps 12 tokens, over the preset's vocab_size 11");
    const model = Qwen3Model.fromConfig(config, 4);
    const mapping = { keptIds: [0, 3, 5, 7, 11, 13, 17, 19, 23] };
    const info = { preset: 'tiny', finalLoss: 1.5 } as unknown as WarmStartInfo;
    const files = await exportWarmStartFiles(model, mapping, info);
    expect(Object.keys(files).sort()).toEqual([...WARM_START_FILES].sort());
    const bytesOf = (name: string) => {
      const v = files[name];
      return typeof v === 'string' ? new TextEncoder().encode(v) : v;
    };
    const fetchFn = async (url: string) => ({
      ok: url.startsWith('/warm-start/') && url.slice(12) in files,
      status: url.slice(12) in files ? 200 : 404,
      arrayBuffer: async () => bytesOf(url.slice(12)).slice().buffer,
    });
    for (const read of [async (n: string) => bytesOf(n), createFetchReader('/warm-start', fetchFn)]) {
      const loaded = await loadWarmStart(read);
      expect(loaded.config).toEqual(config);
      expect(loaded.mapping).toEqual(mapping);
      expect(loaded.info).toEqual(info);
      for (const [name, v] of model.params) {
        expect(Array.from(loaded.tensors.get(name)!.data)).toEqual(Array.from(await v.data()));
      }
    }
    await expect(
      loadWarmStart(async (n) => (n === 'model.safetensors' ? Promise.reject(new Error('gone')) : bytesOf(n))),
    ).rejects.toThrow('warm start: cannot read model.safetensors (gone)');
    model.dispose();
  });

  const shipped = path.join(REPO, 'public/warm-start');
  it('the shipped public/warm-start (npm run pretrain) loads as a qwen3-nano with its pruned vocabulary', async () => {
    expect(
      existsSync(path.join(shipped, 'model.safetensors')),
      `${shipped} lacks model.safetensors: run npm run pretrain`,
    ).toBe(true);
    const ws = await loadWarmStart(async (n) => new Uint8Array(readFileSync(path.join(shipped, n))));
    const nano = getQwen3Preset('qwen3-nano');
    expect({ ...ws.config, vocab_size: nano.vocab_size }).toEqual(nano);
    expect(ws.config.vocab_size).toBe(ws.mapping.keptIds.length);
    expect(ws.info?.keptTokens).toBe(ws.mapping.keptIds.length);
    expect(ws.info?.eval.nTasks).toBe(20);
    expect(Number.isFinite(ws.info?.finalLoss)).toBe(true);
    // ≤ 20 MB in all (the size budget of the shipped warm start)
    const total = WARM_START_FILES.reduce((s, n) => s + readFileSync(path.join(shipped, n)).byteLength, 0);
    expect(total).toBeLessThanOrEqual(20 * 1024 * 1024);
  });
});

describe('the replayed expert episode as SFT data', () => {
  it('trains on the assistant turns only', async () => {
    const setup = await createTinySetup();
    const env = new RolloutEnv({ executor: setup.executor, renderChat: setup.renderChat });
    const transcript = await replayExpertEpisode(setup.trainTasks[0], env);
    const episode = encodeEpisode(transcript, setup.tokenizer);
    const row = buildSftRow(episode, 10_000);
    const trained = row.ids.slice(1).filter((_, t) => row.targetMask[t] === 1);
    expect(setup.tokenizer.decode(trained)).toBe(transcript.turns.map((t) => t.assistantText).join(''));
  });
});
