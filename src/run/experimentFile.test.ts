import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expandExperiment, mergeDeep } from './experimentFile';

describe('experiment files', () => {
  it('deep-merges objects and replaces everything else', () => {
    expect(
      mergeDeep({ a: 1, pact: { anchorProb: 0.4, betaSft: 0.1 }, l: [1, 2] }, { pact: { anchorProb: 0 }, l: [3] }),
    ).toEqual({
      a: 1,
      pact: { anchorProb: 0, betaSft: 0.1 },
      l: [3],
    });
  });

  it('expands runs × seeds with ids, base merged under each run, overrides last', () => {
    const e = expandExperiment(
      {
        base: { recipe: 'pact', steps: 10, pact: { betaSft: 0.2 } },
        runs: [{ name: 'full' }, { name: 'q0', pact: { anchorProb: 0 } }],
        seeds: [1, 2],
      },
      { defaultName: 'abl', overrides: { steps: 2 } },
    );
    expect(e.name).toBe('abl');
    expect(e.runs.map((r) => r.id)).toEqual(['full-s1', 'full-s2', 'q0-s1', 'q0-s2']);
    const q0 = e.runs[2].config;
    expect([q0.pact.anchorProb, q0.pact.betaSft, q0.steps, q0.seed, q0.name]).toEqual([0, 0.2, 2, 1, 'q0']);
    expect(e.runs[0].config.pact.anchorProb).toBe(0.4); // default untouched
  });

  it("puts each run's seed into model.init where it says {seed}", () => {
    const e = expandExperiment({
      base: { recipe: 'sft', steps: 0 },
      runs: [{ name: 'pact', model: { init: 'runs/table1/pact-s{seed}/checkpoint-32' } }, { name: 'vanilla' }],
      seeds: [2, 5],
    });
    expect(e.runs.map((r) => [r.id, r.config.model.init])).toEqual([
      ['pact-s2', 'runs/table1/pact-s2/checkpoint-32'],
      ['pact-s5', 'runs/table1/pact-s5/checkpoint-32'],
      ['vanilla-s2', 'warm-start'],
      ['vanilla-s5', 'warm-start'],
    ]);
  });

  it('"*" expands to one run per registered recipe', () => {
    const e = expandExperiment({ runs: [{ recipe: '*' }] }, { recipeNames: ['sft', 'grpo'] });
    expect(e.runs.map((r) => [r.id, r.config.recipe])).toEqual([
      ['sft-s1', 'sft'],
      ['grpo-s1', 'grpo'],
    ]);
  });

  it('names the run and the field of a bad config, and unknown file fields', () => {
    expect(() => expandExperiment({ runs: [{ name: 'bad', pact: { anchorProb: 2 } }] })).toThrow(
      /runs\[0\] \(bad\): config\.pact\.anchorProb/,
    );
    expect(() => expandExperiment({ bse: {} })).toThrow('unknown field "bse"');
    expect(() => expandExperiment({ runs: [{}, {}] })).toThrow('two runs are both named "run-s1"');
  });

  it('the committed experiment files are valid', () => {
    const names = ['sft', 'grpo', 'pact'];
    const smoke = expandExperiment(JSON.parse(readFileSync('experiments/smoke.json', 'utf8')), {
      recipeNames: names,
      overrides: { steps: 2 },
    });
    expect(smoke.runs.map((r) => r.config.recipe)).toEqual(names);
    expect(smoke.runs.every((r) => r.config.model.init === 'scratch' && r.config.steps === 2)).toBe(true);
    const short = expandExperiment(JSON.parse(readFileSync('experiments/pact-nano-short.json', 'utf8')));
    expect(short.runs.map((r) => [r.id, r.config.recipe, r.config.model.init, r.config.lr])).toEqual([
      ['pact-s1', 'pact', 'warm-start', 3e-5],
      ['pact-s2', 'pact', 'warm-start', 3e-5],
      ['pact-s3', 'pact', 'warm-start', 3e-5],
      ['frozen-s1', 'pact', 'warm-start', 1e-12],
      ['frozen-s2', 'pact', 'warm-start', 1e-12],
      ['frozen-s3', 'pact', 'warm-start', 1e-12],
    ]);
  });
});
