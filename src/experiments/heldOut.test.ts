import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../recipes/config';
import { describeHeldOut, formatHeldOutNote } from './heldOut';
import '../recipes';

describe('the held-out line under a table', () => {
  it('a tool-use run: tasks of the test world of testSeed; a search run: queries of the repository of trainSeed', () => {
    const tasks = { source: 'generated' as const, trainSeed: 1, testSeed: 11, nTrain: 128, nTest: 200 };
    expect(formatHeldOutNote(resolveConfig({ recipe: 'pact', tasks }))).toBe(
      'Held out: 200 tasks of the test world of seed 11, one greedy rollout each.',
    );
    expect(formatHeldOutNote(resolveConfig({ recipe: 'toolsearcher', tasks }))).toBe(
      'Held out: 200 queries held out of the tool repository generated from seed 1, one greedy rollout each.',
    );
    expect(describeHeldOut(resolveConfig({ recipe: 'pact', tasks: { ...tasks, testSplit: 'train' } }))).toBe(
      '200 tasks of the train-split world of seed 11',
    );
    expect(formatHeldOutNote(resolveConfig({ recipe: 'grpo', evalSamples: 4, tasks }))).toBe(
      'Held out: 200 tasks of the test world of seed 11, 4 sampled rollouts each.',
    );
  });
});
