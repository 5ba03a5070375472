// The search prompts a run builds from its config: the engine behind them returns
// config.toolsearcher.topK hits shown within config.toolsearcher.resultLimits.
import { describe, expect, it } from 'vitest';
import { selectBackend } from '../model/backend';
import { getNodeWasmPaths } from '../model/qwen3/node';
import '../recipes/allRecipes';
import { readFileSync } from 'node:fs';
import { WARM_START_PRESET, resolveConfig } from '../recipes/config';
import { createGeneratedSearchPrompts, prepareRunAssetsWith, type RunPlatform } from './runAssets';
import { createNodePlatform } from './nodeRun';
import type { Qwen3Tokenizer } from '../model/tokenizer/qwen3Tokenizer';
import type { ToolExecutor } from '../envs/sandbox/types';
import { readToolSearchPrompt } from '../recipes/rollouts/searchRollouts';
import type { RenderChat } from '../envs/rollout';

const renderChat: RenderChat = (messages) => messages.map((m) => `${m.role}: ${m.content}`).join('\n');

describe('createGeneratedSearchPrompts', () => {
  it("searches with the run's topK and result limits", () => {
    const base = { recipe: 'toolsearcher', tasks: { nTrain: 4, nTest: 2 } } as const;
    const compact = createGeneratedSearchPrompts(resolveConfig(base), renderChat);
    expect(compact.trainPrompts).toHaveLength(4);
    expect(compact.testPrompts).toHaveLength(2);
    const { query, handle } = readToolSearchPrompt(compact.trainPrompts[0]);
    const hits = handle.engine.search(query.text);
    expect(hits.hits).toHaveLength(3);
    expect(hits.text).not.toContain('outputs:');

    const wide = createGeneratedSearchPrompts(
      resolveConfig({
        ...base,
        toolsearcher: { topK: 5, resultLimits: { maxParamDescriptionChars: 96, maxOutputChars: 240 } },
      }),
      renderChat,
    );
    const wideHandle = readToolSearchPrompt(wide.trainPrompts[0]);
    expect(wideHandle.query.id).toBe(query.id); // same split, only the presentation differs
    const wideHits = wideHandle.handle.engine.search(query.text);
    expect(wideHits.hits).toHaveLength(5);
    expect(wideHits.text.match(/^ {3}outputs: /gm)).toHaveLength(5);
  }, 60_000);
});

describe('prepareRunAssetsWith refuses what it cannot run, before loading anything', () => {
  /** A platform that records which warm-start files were read (none exist). */
  function recordingPlatform() {
    const read: string[] = [];
    const platform: RunPlatform = {
      loadSourceTokenizer: async () => ({}) as Qwen3Tokenizer,
      openWarmStart: (folder) => ({
        read: async (name) => {
          read.push(`${folder}/${name}`);
          throw new Error(`no file ${name} in this test`);
        },
        location: `test/${folder}`,
      }),
      createExecutor: () => ({}) as ToolExecutor,
    };
    return { platform, read };
  }

  it('does not start another preset from the shipped qwen3-nano warm start', async () => {
    for (const preset of ['qwen3-micro', 'Qwen3-0.6B'] as const) {
      const { platform, read } = recordingPlatform();
      await expect(
        prepareRunAssetsWith(platform, resolveConfig({ model: { preset, init: 'warm-start' } })),
      ).rejects.toThrow(
        `config.model.preset "${preset}": the shipped warm start is a qwen3-nano; start a ${preset} from random weights (model.init "scratch") or from a Qwen3 folder`,
      );
      expect(read).toEqual([]);
    }
  });

  it('"warm-start" means the search warm start for the search recipes, and the tool-use one for the rest', async () => {
    for (const [recipe, folder] of [
      ['toolsearcher', 'warm-start-search'],
      ['search_r1', 'warm-start-search'],
      ['gdpo', 'warm-start-search'],
      ['pact', 'warm-start'],
      ['matchtir', 'warm-start'],
    ] as const) {
      const { platform, read } = recordingPlatform();
      await expect(
        prepareRunAssetsWith(platform, resolveConfig({ recipe, model: { preset: 'qwen3-nano', init: 'warm-start' } })),
      ).rejects.toThrow(`run \`npm run pretrain\` to build test/${folder}`);
      expect(read.length).toBeGreaterThan(0);
      expect(read.every((f) => f.startsWith(`${folder}/`))).toBe(true);
    }
  });

  it('refuses a task source the recipe cannot train on, naming the ones it can', async () => {
    const { platform } = recordingPlatform();
    await expect(
      prepareRunAssetsWith(platform, resolveConfig({ recipe: 'pact', tasks: { source: 'tool-repo' } })),
    ).rejects.toThrow(
      'config.tasks.source: "tool-repo" is not wired into pact train yet for tool-use recipes; use "generated" or "ftrl"',
    );
    await expect(
      prepareRunAssetsWith(
        platform,
        resolveConfig({ recipe: 'toolsearcher', tasks: { source: 'ftrl', trainLines: '1', testLines: '2' } }),
      ),
    ).rejects.toThrow(
      'config.tasks.source: "ftrl" is not wired into pact train yet for tool-search recipes; use "generated" or "tool-repo"',
    );
  });

  it('refuses before any weight is made: prepareRunAssetsWith never builds the 0.6B model on wasm', async () => {
    await selectBackend('wasm', { wasmPaths: getNodeWasmPaths() });
    const platform: RunPlatform = {
      loadSourceTokenizer: async () => ({}) as Qwen3Tokenizer,
      openWarmStart: (folder) => ({
        read: async (name) => {
          throw new Error(`no file ${name} in this test`);
        },
        location: `test/${folder}`,
      }),
      createExecutor: () => ({}) as ToolExecutor,
    };
    // Building it would first allocate 2.4 GB of weights; the refusal comes before.
    await expect(
      prepareRunAssetsWith(platform, resolveConfig({ model: { preset: 'Qwen3-0.6B', init: 'scratch' } })),
    ).rejects.toThrow(
      /^config\.model: a model of 596,049,920 parameters needs at least 29\.07 GiB on wasm \(training state/,
    );
  });
});

describe('WARM_START_PRESET', () => {
  it('is the preset the shipped warm start records', () => {
    const info = JSON.parse(readFileSync('public/warm-start/warm_start.json', 'utf8')) as { preset: string };
    expect(WARM_START_PRESET).toBe(info.preset);
  });
});

describe('tasks.testSplit: the held-out world of generated tasks', () => {
  it("evaluates on a train-split world of testSeed with 'train', on the test split by default", async () => {
    await selectBackend('wasm', { wasmPaths: getNodeWasmPaths() });
    const base = { tasks: { source: 'generated' as const, trainSeed: 1, testSeed: 12, nTrain: 1, nTest: 3 } };
    const ids = async (testSplit?: 'train' | 'test') => {
      const assets = await prepareRunAssetsWith(
        createNodePlatform(),
        resolveConfig({ ...base, tasks: { ...base.tasks, testSplit } }),
      );
      return assets.testPrompts.map((p) => (p.kind === 'tool-use' ? p.task.id : p.kind));
    };
    expect(await ids('train')).toEqual(['gen-train-12-0', 'gen-train-12-1', 'gen-train-12-2']);
    expect(await ids()).toEqual(['gen-test-12-0', 'gen-test-12-1', 'gen-test-12-2']);
  }, 120_000);

  it('refuses a train-split held-out world that is the training world', () => {
    expect(() => resolveConfig({ tasks: { trainSeed: 4, testSeed: 4, testSplit: 'train' } })).toThrow(
      "tasks.testSeed: with testSplit 'train' the held-out world must differ from the training one: testSeed ≠ trainSeed (4)",
    );
    expect(resolveConfig({ tasks: { trainSeed: 4, testSeed: 4 } }).tasks.testSplit).toBeUndefined();
  });
});
