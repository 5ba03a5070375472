import { describe, expect, it } from 'vitest';
import {
  describeRunEstimate,
  describeRunPhase,
  describeStepProgress,
  estimateRunTime,
  estimateSecondsLeft,
  formatDuration,
  measureTiming,
  shapeOfConfig,
  type StepTiming,
} from './runTime';

const demoConfig = {
  recipe: 'pact',
  model: { preset: 'qwen3-nano' },
  batchPrompts: 2,
  rolloutsPerPrompt: 4,
  maxTurns: 4,
  maxResponseTokens: 448,
};

describe('timings measured from a run', () => {
  it('reads the shape of a config and the mean step time and rollout length of its rows', () => {
    expect(shapeOfConfig(demoConfig)).toEqual({
      preset: 'qwen3-nano',
      rolloutsPerStep: 8,
      tokenCap: 1792,
      env: 'tool-use',
    });
    // A search recipe's rollouts are search episodes; a config without a known recipe counts as tool use.
    expect(shapeOfConfig({ ...demoConfig, recipe: 'toolsearcher' })?.env).toBe('tool-search');
    expect(shapeOfConfig({ ...demoConfig, recipe: 'gdpo' })?.env).toBe('tool-search');
    expect(shapeOfConfig({ ...demoConfig, recipe: undefined })?.env).toBe('tool-use');
    expect(shapeOfConfig({ batchPrompts: 2 })).toBeNull();
    const rows: { values: Record<string, number> }[] = [
      { values: { seconds: 170, 'completions/mean_length': 240 } },
      { values: { seconds: 180, 'completions/mean_length': 260 } },
      { values: { 'eval/solve_f1': 0.5 } }, // an evaluation-only row counts for neither
    ];
    expect(measureTiming(demoConfig, rows, 'wasm', 'the recorded demo run')).toEqual({
      preset: 'qwen3-nano',
      rolloutsPerStep: 8,
      tokenCap: 1792,
      env: 'tool-use',
      backend: 'wasm',
      secondsPerStep: 175,
      tokensPerRollout: 250,
      source: 'the recorded demo run',
    });
    expect(measureTiming(demoConfig, [], 'wasm', 'x')).toBeNull();
  });
});

describe('estimateRunTime', () => {
  const demo: StepTiming = {
    preset: 'qwen3-nano',
    rolloutsPerStep: 8,
    tokenCap: 1792,
    env: 'tool-use',
    backend: 'wasm',
    secondsPerStep: 160,
    tokensPerRollout: 250,
    source: 'demo',
  };

  it('scales seconds per step by the rollouts per step; a lower token cap makes it an upper bound', () => {
    // same shape: 24 steps × 160 s = 3840 s
    expect(
      estimateRunTime({ preset: 'qwen3-nano', rolloutsPerStep: 8, tokenCap: 1792, env: 'tool-use' }, 24, 'wasm', [
        demo,
      ]),
    ).toEqual({
      seconds: 3840,
      secondsPerStep: 160,
      timing: demo,
      isOtherBackend: false,
      isUpperBound: false,
    });
    // twice the rollouts: 320 s a step; capped at 25 tokens (< 250 measured): an upper bound
    expect(
      estimateRunTime({ preset: 'qwen3-nano', rolloutsPerStep: 16, tokenCap: 25, env: 'tool-use' }, 3, 'wasm', [demo]),
    ).toMatchObject({ seconds: 960, secondsPerStep: 320, isUpperBound: true });
    // half the rollouts
    expect(
      estimateRunTime({ preset: 'qwen3-nano', rolloutsPerStep: 4, tokenCap: 9999, env: 'tool-use' }, 1, 'wasm', [demo])!
        .secondsPerStep,
    ).toBe(80);
  });

  it('needs the same preset, prefers the same backend, and says when it had to use another', () => {
    // A search run is not timed by a tool-use run (its episodes run to 1,536 tokens), nor the reverse.
    expect(
      estimateRunTime({ preset: 'qwen3-nano', rolloutsPerStep: 8, tokenCap: 1792, env: 'tool-search' }, 24, 'wasm', [
        demo,
      ]),
    ).toBeNull();
    expect(
      estimateRunTime({ preset: 'qwen3-nano', rolloutsPerStep: 8, tokenCap: 1792, env: 'tool-search' }, 2, 'wasm', [
        demo,
        { ...demo, env: 'tool-search', secondsPerStep: 30 },
      ])?.seconds,
    ).toBe(60);
    expect(
      estimateRunTime({ preset: 'qwen3-micro', rolloutsPerStep: 8, tokenCap: 1792, env: 'tool-use' }, 24, 'wasm', [
        demo,
      ]),
    ).toBeNull();
    const gpu: StepTiming = { ...demo, backend: 'webgpu', secondsPerStep: 40, source: 'yours' };
    expect(
      estimateRunTime({ preset: 'qwen3-nano', rolloutsPerStep: 8, tokenCap: 1792, env: 'tool-use' }, 2, 'webgpu', [
        demo,
        gpu,
      ]),
    ).toMatchObject({ seconds: 80, isOtherBackend: false });
    expect(
      estimateRunTime({ preset: 'qwen3-nano', rolloutsPerStep: 8, tokenCap: 1792, env: 'tool-use' }, 2, 'cpu', [
        demo,
        gpu,
      ]),
    ).toMatchObject({ seconds: 320, isOtherBackend: true });
  });
});

describe('time left and progress in words', () => {
  it('uses the mean of the last five steps, less the time the current step has run', () => {
    expect(
      estimateSecondsLeft({ completedSteps: 0, totalSteps: 10, stepSeconds: [], elapsedInStepMs: 5000 }),
    ).toBeNull();
    // steps of 10, 20, 30: mean 20; 2 of 5 done; the third has run 5 s → 15 + 2 × 20 = 55
    expect(
      estimateSecondsLeft({ completedSteps: 2, totalSteps: 5, stepSeconds: [10, 20, 30], elapsedInStepMs: 5000 }),
    ).toBe(55);
    // only the last five count: [1000, 10 ×5] → 10 a step
    expect(
      estimateSecondsLeft({
        completedSteps: 6,
        totalSteps: 7,
        stepSeconds: [1000, 10, 10, 10, 10, 10],
        elapsedInStepMs: 0,
      }),
    ).toBe(10);
    // a step running longer than usual still has a tenth of a step left, not a negative time
    expect(estimateSecondsLeft({ completedSteps: 0, totalSteps: 1, stepSeconds: [20], elapsedInStepMs: 60_000 })).toBe(
      2,
    );
    expect(estimateSecondsLeft({ completedSteps: 4, totalSteps: 4, stepSeconds: [20], elapsedInStepMs: 0 })).toBe(0);
  });

  it('formats durations and the in-step progress', () => {
    expect([
      formatDuration(0.2),
      formatDuration(42),
      formatDuration(150),
      formatDuration(3600),
      formatDuration(4000),
      formatDuration(Number.NaN),
    ]).toEqual(['1 s', '42 s', '3 min', '1 h', '1 h 7 min', '—']);
    expect(describeStepProgress({ phase: 'rollouts', done: 3, total: 8, tokens: 1412, turn: 2 })).toBe(
      'rollouts: 5 of 8 running, 3 finished · turn 2 · 1,412 tokens generated',
    );
    // Before any episode ends the line still moves: the turn and the tokens advance, 8 running.
    expect(describeStepProgress({ phase: 'rollouts', done: 0, total: 8, tokens: 1351, turn: 2 })).toBe(
      'rollouts: 8 of 8 running, 0 finished · turn 2 · 1,351 tokens generated',
    );
    expect(describeStepProgress({ phase: 'rollouts', done: 8, total: 8, tokens: 2000, turn: 3 })).toBe(
      'rollouts: all 8 finished · turn 3 · 2,000 tokens generated',
    );
    expect(describeStepProgress({ phase: 'logprobs', done: 1, total: 4 })).toBe('log-probs (π_old, π_ref) 1 of 4');
    expect(describeStepProgress({ phase: 'eval', done: 0, total: 2 })).toBe(
      'held-out evaluation: 2 of 2 running, 0 finished',
    );
  });
});

describe('describeRunPhase', () => {
  it('names the step a phase belongs to: the next one for rollouts, the one just done for its checkpoint and evaluation', () => {
    // After step 1 is done (completedSteps 1) the worker saves step 1's checkpoint: not step 2's.
    expect(describeRunPhase(1, 'checkpoint')).toBe('Step 1: saving its checkpoint');
    expect(describeRunPhase(4, 'eval')).toBe('Step 4: held-out evaluation');
    expect(describeRunPhase(0, 'eval')).toBe('Step 0: held-out evaluation of the starting policy');
    expect(describeRunPhase(1, 'rollouts')).toBe('Step 2: rollouts');
    expect(describeRunPhase(0, 'update')).toBe('Step 1: update');
  });
});

describe('describeRunEstimate', () => {
  it('says the estimate with what it rests on, or that there is none yet', () => {
    const timing: StepTiming = {
      preset: 'qwen3-nano',
      rolloutsPerStep: 8,
      tokenCap: 1792,
      env: 'tool-use',
      backend: 'wasm',
      secondsPerStep: 175,
      tokensPerRollout: 250,
      source: 'the recorded demo run',
    };
    const est = estimateRunTime(
      { preset: 'qwen3-nano', rolloutsPerStep: 8, tokenCap: 1792, env: 'tool-use' },
      24,
      'webgpu',
      [timing],
    );
    // 24 × 175 s = 4200 s = 70 min
    expect(describeRunEstimate(est, 24)).toBe(
      'about 1 h 10 min for 24 steps (about 3 min a step, scaled from the recorded demo run, measured with WebAssembly; held-out evaluations add to it)',
    );
    const capped = estimateRunTime(
      { preset: 'qwen3-nano', rolloutsPerStep: 4, tokenCap: 24, env: 'tool-use' },
      3,
      'wasm',
      [timing],
    );
    // 3 × 175 / 2 = 262.5 s
    expect(describeRunEstimate(capped, 3)).toBe(
      'at most about 4 min for 3 steps (at most about 1 min a step, scaled from the recorded demo run; held-out evaluations add to it)',
    );
    expect(describeRunEstimate(null, 24)).toBe(
      'not known yet: no run of this model and kind of task was measured here; the first step of yours gives a measured figure',
    );
  });
});
