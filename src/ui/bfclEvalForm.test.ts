import { describe, expect, it } from 'vitest';
import { readBfclEvalForm, readDefaultBfclEvalForm, readPolicyWindow } from './bfclEvalForm';

describe('readBfclEvalForm', () => {
  it("defaults to pact eval-bfcl's: every entry, 512 tokens a step, 20 steps a turn, 10 s", () => {
    expect(readBfclEvalForm(readDefaultBfclEvalForm())).toEqual({
      settings: { maxResponseTokens: 512, maxSteps: 20, toolTimeoutMs: 10_000, backend: 'webgpu' },
      errors: {},
    });
    expect(readBfclEvalForm({ ...readDefaultBfclEvalForm(), limit: ' 3 ', backend: 'wasm' }).settings).toEqual({
      limit: 3,
      maxResponseTokens: 512,
      maxSteps: 20,
      toolTimeoutMs: 10_000,
      backend: 'wasm',
    });
  });

  it('names each bad field and gives no settings', () => {
    const r = readBfclEvalForm({ ...readDefaultBfclEvalForm(), limit: '0', maxSteps: '', toolTimeoutMs: '1.5' });
    expect(r.settings).toBeNull();
    expect(r.errors).toEqual({
      limit: 'must be an integer from 1 to 100000, got 0',
      maxSteps: 'is required',
      toolTimeoutMs: 'must be an integer from 100 to 600000, got 1.5',
    });
  });
});

describe('readPolicyWindow', () => {
  it('the warm start 2048, a folder its own, a checkpoint unknown until Evaluate', () => {
    expect(readPolicyWindow('warm-start', 8192)).toBe(2048);
    expect(readPolicyWindow('folder', 8192)).toBe(8192);
    expect(readPolicyWindow('folder', null)).toBeNull();
    expect(readPolicyWindow('checkpoint:run-1', 8192)).toBeNull();
  });
});
