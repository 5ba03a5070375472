// The Task files panel's evaluation form: settings read from text with an error per field, and
// the policy menu (warm start, saved runs with a checkpoint, a picked folder).
import { describe, expect, it } from 'vitest';
import { listPolicyChoices, readDefaultFtrlEvalForm, readFtrlEvalForm, toPolicySpec } from './ftrlEvalForm';

describe('readFtrlEvalForm', () => {
  it('reads the defaults (every task) and numbers', () => {
    expect(readFtrlEvalForm(readDefaultFtrlEvalForm())).toEqual({
      settings: { maxTurns: 6, maxResponseTokens: 512, toolTimeoutMs: 5000, backend: 'webgpu' },
      errors: {},
    });
    expect(
      readFtrlEvalForm({ ...readDefaultFtrlEvalForm(), perCategory: ' 3 ', backend: 'wasm' }).settings,
    ).toMatchObject({ perCategory: 3, backend: 'wasm' });
  });

  it('names each bad field', () => {
    const r = readFtrlEvalForm({
      perCategory: '0',
      maxTurns: 'two',
      maxResponseTokens: '',
      toolTimeoutMs: '5000',
      backend: 'cpu',
    });
    expect(r.settings).toBeNull();
    expect(r.errors).toEqual({
      perCategory: 'must be an integer from 1 to 100000, got 0',
      maxTurns: 'must be an integer from 1 to 32, got text that is not a number',
      maxResponseTokens: 'is required',
    });
  });
});

describe('the policy menu', () => {
  it('offers the warm start, each run with a checkpoint, and a picked folder', () => {
    const runs = [
      { id: 'pact-s1-x', name: 'pact', recipe: 'pact', lastCheckpointId: 'pact-s1-x@12' },
      { id: 'grpo-s1-y', name: 'grpo-s1-y', recipe: 'grpo' },
    ];
    expect(listPolicyChoices(runs, 'my-qwen')).toEqual([
      { value: 'warm-start', label: 'Shipped warm start (qwen3-nano, 2048-token window)' },
      { value: 'checkpoint:pact-s1-x', label: 'Saved run pact · pact, checkpoint at step 12' },
      { value: 'folder', label: 'Your Qwen3 folder "my-qwen"' },
    ]);
    expect(toPolicySpec('checkpoint:pact-s1-x', null)).toEqual({ kind: 'checkpoint', runId: 'pact-s1-x' });
    expect(toPolicySpec('warm-start', null)).toEqual({ kind: 'warm-start' });
    expect(() => toPolicySpec('folder', null)).toThrow('pick a Qwen3 folder first');
  });
});
