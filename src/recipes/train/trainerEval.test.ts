// Held-out evaluation (Trainer.evaluate): greedy by default, or evalSamples rollouts per task
// sampled at the run's temperature. The scripted policy of searchTestKit solves a task on
// even rows of a generation batch (gold calls, then the gold answer) and fails on odd rows
// (a wrong tool, then "unknown"), so every expected mean below is a count of rows.
import { describe, expect, it } from 'vitest';
import { runOneStep } from '../testing/searchTestKit';
import '../index';

const KEYS = ['eval/solve_r', 'eval/solve_p', 'eval/solve_f1', 'eval/answer_correct', 'eval/reward'];

describe('Trainer.evaluate', () => {
  it('evalSamples 0 (default): one greedy rollout per task (temperature 0), row 0 solves → every metric 1', async () => {
    const { evaluation, trainer, policy } = await runOneStep('matchtir');
    expect(trainer.config.evalSamples).toBe(0);
    expect(evaluation.nTasks).toBe(1);
    expect(evaluation.nRollouts).toBe(1);
    for (const key of KEYS) expect(evaluation[key], key).toBe(1);
    expect(trainer.lastEvalGroups.map((g) => g.rollouts.length)).toEqual([1]);
    // Training rollouts sample at T = 1; the evaluation's generation calls are greedy.
    expect(policy.temperatures[0]).toBe(1);
    const before = policy.temperatures.length;
    expect(await trainer.evaluate({ nTasks: 1 })).toEqual(evaluation);
    const evalCalls = policy.temperatures.slice(before);
    expect(evalCalls.length).toBeGreaterThanOrEqual(2); // a tool-call turn, then the answer turn
    expect(evalCalls.every((t) => t === 0)).toBe(true);
    trainer.dispose();
  }, 120_000);

  it('evalSamples 2: two rollouts at the run temperature, rows 0 and 1 → every metric (1 + 0) / 2', async () => {
    const { evaluation, trainer, policy } = await runOneStep('matchtir', { evalSamples: 2, temperature: 0.7 });
    expect(evaluation.nRollouts).toBe(2);
    for (const key of KEYS) expect(evaluation[key], key).toBe(0.5);
    const before = policy.temperatures.length;
    await trainer.evaluate({ nTasks: 1 });
    const evalCalls = policy.temperatures.slice(before);
    expect(evalCalls.length).toBeGreaterThanOrEqual(2);
    expect(evalCalls.every((t) => t === 0.7)).toBe(true);
    trainer.dispose();
  }, 120_000);

  it('evalSamples 3: rows 0, 1, 2 → 2/3 (the rollouts of one task share a generation batch)', async () => {
    const { evaluation, trainer } = await runOneStep('matchtir', { evalSamples: 3 });
    expect(evaluation.nRollouts).toBe(3);
    for (const key of KEYS) expect(evaluation[key], key).toBeCloseTo(2 / 3, 12);
    expect(trainer.lastEvalGroups[0].rollouts.length).toBe(3);
    trainer.dispose();
  }, 120_000);
});
