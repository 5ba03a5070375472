import { describe, expect, it } from 'vitest';
import { LOSS_AGGREGATION_NAMES, LOSS_AGGREGATIONS } from '../core/losses';
import { createRegistry } from '../core/registry';
import { REASONING_SCHEDULES, TOOL_CALL_SCHEDULES } from '../core/schedules';
import { QWEN3_PRESETS } from '../model/qwen3/config';
import { ConfigError, MODEL_PRESETS, registryEnum, resolveConfig, trainConfigSchema } from './config';

describe('resolveConfig', () => {
  it('fills the PACT Table 6 defaults (scaled where documented) and sets the horizon to the run length', () => {
    const c = resolveConfig({});
    expect(c.recipe).toBe('pact');
    expect(c.rolloutsPerPrompt).toBe(8); // Table 6: 8 rollouts
    expect(c.klCoef).toBe(0.001); // Table 6
    expect(c.pact.betaSft).toBe(0.1); // Table 6
    expect([c.pact.toolCallScaleStart, c.pact.toolCallScaleEnd]).toEqual([0.8, 0.2]); // Table 6
    expect(c.pact.anchorProb).toBe(0.4); // Table 6, q
    expect(c.clipEps).toBe(0.2);
    expect(c.steps).toBe(24); // Table 6: 24 steps
    expect(c.pact.annealHorizon).toBe(24); // 0 → whole run
    expect(c.pact.objective).toBe('Lh+SFT');
    expect(c.pact.traceComponents).toEqual({ reasoning: true, toolCalls: true, toolResponses: true });
  });

  it('keeps an explicit horizon and nested overrides', () => {
    const c = resolveConfig({
      steps: 10,
      pact: { annealHorizon: 5, anchorProb: 0.2, traceComponents: { toolResponses: false } },
    });
    expect(c.pact.annealHorizon).toBe(5);
    expect(c.pact.anchorProb).toBe(0.2);
    expect(c.pact.traceComponents).toEqual({ reasoning: true, toolCalls: true, toolResponses: false });
  });

  it('names every bad field with its path and reason', () => {
    let err: unknown;
    try {
      resolveConfig({
        pact: { anchorProb: 1.5, reasoningSchedule: 'sometimes' },
        batchPrompts: 6,
        miniBatchPrompts: 4,
        typo: 1,
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues.join('\n');
    expect(issues).toMatch(/config\.pact\.anchorProb: .*1/);
    expect(issues).toMatch(/config\.pact\.reasoningSchedule: /);
    expect(issues).toMatch(/config: .*typo/);
  });

  it("runs the engine's plain kernels unless a config asks for fma, and names a bad build", () => {
    // A config written before the field existed keeps the plain kernels' bits.
    expect(resolveConfig({}).engineKernels).toBe('simd');
    expect(resolveConfig({ engineKernels: 'fma' }).engineKernels).toBe('fma');
    expect(() => resolveConfig({ engineKernels: 'avx' })).toThrow(/config\.engineKernels: /);
  });

  it('takes generated task categories and names a bad one', () => {
    expect(resolveConfig({ tasks: { categories: ['single_hop'] } }).tasks.categories).toEqual(['single_hop']);
    expect(resolveConfig({}).tasks.categories).toBeUndefined();
    expect(() => resolveConfig({ tasks: { categories: ['single_hop', 'two_hop'] } })).toThrow(
      'config.tasks.categories.1',
    );
    expect(() => resolveConfig({ tasks: { categories: [] } })).toThrow('config.tasks.categories');
  });

  it('sizes search results for qwen3-nano by default (3 short hits) and names a bad search field', () => {
    const c = resolveConfig({});
    expect(c.toolsearcher.topK).toBe(3); // ToolSearcher: top 5; see SEARCH_PRESENTATION
    expect(c.toolsearcher.resultLimits).toEqual({
      maxDescriptionChars: 96,
      maxParamDescriptionChars: 0,
      maxOutputChars: 0,
    });
    const wide = resolveConfig({ toolsearcher: { topK: 5, resultLimits: { maxOutputChars: 240 } } });
    expect(wide.toolsearcher.topK).toBe(5);
    expect(wide.toolsearcher.resultLimits).toEqual({
      maxDescriptionChars: 96,
      maxParamDescriptionChars: 0,
      maxOutputChars: 240,
    });
    expect(() => resolveConfig({ toolsearcher: { topK: 0 } })).toThrow('config.toolsearcher.topK');
    expect(() => resolveConfig({ toolsearcher: { resultLimits: { maxDescriptionChars: 0 } } })).toThrow(
      'config.toolsearcher.resultLimits.maxDescriptionChars',
    );
    expect(() => resolveConfig({ toolsearcher: { resultLimits: { maxOutput: 5 } } })).toThrow(
      /config\.toolsearcher\.resultLimits: .*maxOutput/,
    );
  });

  it('checks cross-field constraints: mini-batches divide the batch, λa does not grow', () => {
    expect(() => resolveConfig({ batchPrompts: 6, miniBatchPrompts: 4 })).toThrow(
      'config.miniBatchPrompts: must divide batchPrompts (6), got 4',
    );
    expect(() => resolveConfig({ batchPrompts: 2, miniBatchPrompts: 4 })).toThrow(
      'config.miniBatchPrompts: must be ≤ batchPrompts (2), got 4',
    );
    expect(() => resolveConfig({ pact: { toolCallScaleStart: 0.2, toolCallScaleEnd: 0.8 } })).toThrow(
      'config.pact.toolCallScaleEnd: must be ≤ toolCallScaleStart (0.2)',
    );
  });
});

describe('names read from the registries', () => {
  const pactShape = trainConfigSchema.shape.pact.unwrap().shape;
  it('accepts exactly the registered schedules, aggregation modes and model presets, in their order', () => {
    expect(pactShape.reasoningSchedule.unwrap().options).toEqual(REASONING_SCHEDULES.names());
    expect(pactShape.toolCallSchedule.unwrap().options).toEqual(TOOL_CALL_SCHEDULES.names());
    expect(trainConfigSchema.shape.lossAgg.unwrap().options).toEqual(LOSS_AGGREGATIONS.names());
    expect(trainConfigSchema.shape.model.unwrap().shape.preset.unwrap().options).toEqual(Object.keys(QWEN3_PRESETS));
    expect(MODEL_PRESETS).toEqual(Object.keys(QWEN3_PRESETS));
  });

  it('takes every registered loss aggregation, and the trainer computes each of them', async () => {
    const tf = await import('../model/qwen3/tf');
    const { useCpuBackend } = await import('../model/qwen3/train/testBackend');
    const { aggregateLossTf } = await import('./train/tfLosses');
    await useCpuBackend();
    const [lossMat, mask] = [tf.tensor2d([[1, 2]]), tf.tensor2d([[1, 1]])]; // [B = 1, T = 2]
    for (const mode of LOSS_AGGREGATION_NAMES) {
      expect(resolveConfig({ lossAgg: mode }).lossAgg).toBe(mode);
      const loss = aggregateLossTf(lossMat, mask, mode);
      expect(Number.isFinite((await loss.data())[0]), mode).toBe(true);
      loss.dispose();
    }
    tf.dispose([lossMat, mask]);
    expect(() => resolveConfig({ lossAgg: 'sum' })).toThrow(/config\.lossAgg: /);
  });

  it('registryEnum refuses an empty registry', () => {
    expect(() => registryEnum(createRegistry<number>('widget'))).toThrow('registryEnum: no widget is registered');
    const r = createRegistry<number>('widget');
    r.register('b', 2);
    r.register('a', 1);
    expect(registryEnum(r).options).toEqual(['b', 'a']);
  });
});
