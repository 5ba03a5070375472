import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { REASONING_SCHEDULES, TOOL_CALL_SCHEDULES } from '../core/schedules';
import { listRecipes } from '../recipes/allRecipes';
import { MODEL_PRESETS, resolveConfig } from '../recipes/config';
import {
  AUTO,
  describeStartingPolicyNote,
  SEARCH_WARM_START_HELD_OUT,
  FIELD_BY_KEY,
  OPTION_LABELS,
  SETUP_FIELDS,
  describeConfigAsSetup,
  describeRange,
  parseOverrides,
  parseSetupQuery,
  readDefaultValues,
  serializeSetup,
  validateSetup,
  wordConfigMessage,
} from './runSetup';

describe('fields read from the config schema', () => {
  it('takes ranges, options and defaults from src/recipes/config.ts', () => {
    // config.ts: anchorProb = z.number().min(0).max(1).default(0.4)
    expect(FIELD_BY_KEY.q.range).toMatchObject({
      min: 0,
      max: 1,
      isMinInclusive: true,
      isMaxInclusive: true,
      isInteger: false,
    });
    expect(FIELD_BY_KEY.q.defaultText).toBe('0.4');
    // lr = z.number().positive().default(1e-4)
    expect(describeRange(FIELD_BY_KEY.lr.range!)).toBe('> 0');
    expect(FIELD_BY_KEY.lr.defaultText).toBe('0.0001');
    // rolloutsPerPrompt = z.number().int().min(1).max(CONFIG_MAXIMA.rolloutsPerPrompt = 256).default(8)
    expect(describeRange(FIELD_BY_KEY.K.range!)).toBe('whole number 1 – 256');
    expect(FIELD_BY_KEY.K.defaultText).toBe('8');
    // annealHorizon default 0 means "the whole run" (resolveConfig fills it later)
    expect(FIELD_BY_KEY.horizon.defaultText).toBe('0');
    expect(FIELD_BY_KEY.reasoning.options).toEqual(['segment', 'fixed', 'token', 'none']);
    expect(FIELD_BY_KEY.backend.options).toEqual(['auto', 'webgpu', 'wasm', 'cpu']);
    expect(FIELD_BY_KEY.backend.defaultText).toBe('auto');
    expect(FIELD_BY_KEY.model.options).toContain('qwen3-nano');
  });
});

describe('validateSetup', () => {
  it('resolves the defaults to the config defaults', () => {
    const v = validateSetup(readDefaultValues());
    expect(v.fieldErrors).toEqual({});
    expect(v.config?.pact.anchorProb).toBe(0.4);
    expect(v.config?.pact.annealHorizon).toBe(24); // 0 → steps (24)
    expect(v.config?.backend).toBeUndefined();
  });

  it('names q in words for an out-of-range q and keeps the rest', () => {
    const v = validateSetup({ ...readDefaultValues(), q: '1.5', K: '4' });
    expect(v.config).toBeNull();
    expect(v.fieldErrors.q).toBe('q must be ≤ 1 (got "1.5")');
    expect(v.effective.pact.anchorProb).toBe(0.4); // preview falls back to the default
    expect(v.effective.rolloutsPerPrompt).toBe(4); // the valid field is kept
  });

  it('words non-numbers, fractions of integers, empty fields and unknown choices', () => {
    const v = validateSetup({
      ...readDefaultValues(),
      lr: 'fast',
      K: '2.5',
      seed: '',
      reasoning: 'cosine',
      recipe: 'nope',
    });
    expect(v.fieldErrors.lr).toBe('Learning rate must be a number (got "fast")');
    expect(v.fieldErrors.K).toBe('K must be a whole number (got "2.5")');
    expect(v.fieldErrors.seed).toBe('Seed must be a number (got nothing)');
    expect(v.fieldErrors.reasoning).toMatch(/^Reasoning schedule must be one of segment, fixed, token, none/);
    expect(v.fieldErrors.recipe).toMatch(/unknown recipe "nope"; valid: sft, grpo, .*\bpact\b/);
    expect(v.effective.recipe).toBe('pact');
  });

  it('puts cross-field errors on their field and previews with defaults', () => {
    const v = validateSetup({ ...readDefaultValues(), lambdaStart: '0.1', lambdaEnd: '0.5' });
    expect(v.fieldErrors.lambdaEnd).toMatch(/^λa end must be ≤ λa start \(0.1\)/);
    // end reset to 0.2 is still above start 0.1, so start resets too: 0.8 → 0.2
    expect(v.effective.pact.toolCallScaleStart).toBe(0.8);
    expect(v.effective.pact.toolCallScaleEnd).toBe(0.2);
  });

  it('words zod messages', () => {
    expect(wordConfigMessage('Too small: expected number to be >0')).toBe('must be > 0');
    expect(wordConfigMessage('Too small: expected number to be >=1')).toBe('must be ≥ 1');
  });
});

describe('the setup in the URL', () => {
  it('round-trips every field', () => {
    const values = {
      ...readDefaultValues(),
      q: '0.25',
      horizon: '10',
      toolCall: 'token',
      backend: 'wasm',
      lr: '1e-4',
      kernels: 'fma',
    };
    const qs = serializeSetup(values);
    expect(qs).toContain('q=0.25');
    expect(qs).toContain('kernels=fma');
    // A link made before the field existed: the plain kernels, as its runs had.
    expect(parseSetupQuery(`?${qs.replace('&kernels=fma', '')}`).values.kernels).toBe('simd');
    expect(qs.split('&')).toHaveLength(SETUP_FIELDS.length);
    // A link without a size keeps the config's defaults for the fields outside the form (as links made before sizes did).
    expect(parseSetupQuery(`?${qs}`)).toEqual({ values, overridesText: '', size: 'paper', unknownKeys: [] });
    expect(parseSetupQuery(`?${serializeSetup(values, '', 'quick')}`).size).toBe('quick');
    expect(parseSetupQuery('').size).toBe('quick'); // a bare visit: the app's default size
    // A hand-written partial link: the default size with the fields it names, the rest the size's.
    const partial = parseSetupQuery('?recipe=gdpo&K=6');
    expect(partial.size).toBe('quick');
    expect(partial.values).toEqual({ ...readDefaultValues(), recipe: 'gdpo', K: '6' });
    // Overrides make it a whole setup (the experiment runner's): the config's own defaults.
    expect(parseSetupQuery(`?recipe=gdpo&overrides=${encodeURIComponent('{"steps":3}')}`).size).toBe('paper');
  });

  it('keeps a bad value as text (so its error shows) and the other fields, and lists unknown keys', () => {
    const { values, unknownKeys } = parseSetupQuery('q=abc&K=4&zzz=1');
    expect(values.q).toBe('abc');
    expect(values.K).toBe('4');
    expect(values.seed).toBe(FIELD_BY_KEY.seed.defaultText);
    expect(unknownKeys).toEqual(['zzz']);
    expect(validateSetup(values).fieldErrors.q).toBe('q must be a number (got "abc")');
  });
});

describe('advanced: config overrides (JSON)', () => {
  it('merges fields the form does not carry into the config', () => {
    const v = validateSetup(
      { ...readDefaultValues(), K: '4' },
      '{"pact": {"objective": "Lx", "traceComponents": {"reasoning": false}}, "maxTurns": 3, "toolsearcher": {"eventLevelSearch": false}}',
    );
    expect(v.otherErrors).toEqual([]);
    expect(v.config?.pact.objective).toBe('Lx');
    expect(v.config?.pact.traceComponents).toEqual({ reasoning: false, toolCalls: true, toolResponses: true });
    expect(v.config?.pact.anchorProb).toBe(0.4); // the form's q, untouched by the nested merge
    expect(v.config?.maxTurns).toBe(3);
    expect(v.config?.toolsearcher.eventLevelSearch).toBe(false);
    expect(v.config?.rolloutsPerPrompt).toBe(4);
    expect(v.input).toMatchObject({ maxTurns: 3, rolloutsPerPrompt: 4 });
  });

  it('form fields win over an override of the same field, which is listed as ignored', () => {
    const v = validateSetup(
      { ...readDefaultValues(), q: '0.2' },
      '{"pact": {"anchorProb": 0.9}, "rolloutsPerPrompt": 2}',
    );
    expect(v.config?.pact.anchorProb).toBe(0.2);
    expect(v.config?.rolloutsPerPrompt).toBe(4); // the form's K default (the quick run size)
    expect(v.ignoredOverrides).toEqual([
      "rolloutsPerPrompt (the form's K field)",
      "pact.anchorProb (the form's q field)",
    ]);
  });

  it('names the config field of a bad override, blocks the config, and previews without the overrides', () => {
    const v = validateSetup({ ...readDefaultValues(), K: '4' }, '{"pact": {"objective": "Lz"}, "maxTurns": 0}');
    expect(v.config).toBeNull();
    expect(v.fieldErrors).toEqual({});
    expect(v.otherErrors).toHaveLength(2);
    expect(v.otherErrors[0]).toMatch(/^Config overrides \(JSON\): config\.maxTurns: /);
    expect(v.otherErrors[1]).toMatch(/^Config overrides \(JSON\): config\.pact\.objective: /);
    expect(v.effective.rolloutsPerPrompt).toBe(4); // the form is kept in the preview
    expect(v.effective.maxTurns).toBe(10); // the overrides are not
  });

  it('rejects text that is not a JSON object, in words', () => {
    expect(parseOverrides('')).toEqual({ value: {} });
    expect(parseOverrides('  ')).toEqual({ value: {} });
    expect(parseOverrides('[1]').error).toMatch(/^Config overrides \(JSON\): must be a JSON object/);
    expect(parseOverrides('{"a":').error).toMatch(/^Config overrides \(JSON\): not valid JSON/);
    const v = validateSetup(readDefaultValues(), '{nope');
    expect(v.config).toBeNull();
    expect(v.otherErrors[0]).toMatch(/not valid JSON/);
    expect(v.effective.rolloutsPerPrompt).toBe(4);
  });

  it('travels in the URL as one query parameter, only when present', () => {
    const values = { ...readDefaultValues(), K: '2' };
    const text = '{"pact":{"objective":"Lh"},"maxTurns":4}';
    const qs = serializeSetup(values, text);
    expect(qs.split('&')).toHaveLength(SETUP_FIELDS.length + 1);
    expect(new URLSearchParams(qs).get('overrides')).toBe(text);
    expect(parseSetupQuery(qs)).toEqual({ values, overridesText: text, size: 'paper', unknownKeys: [] });
    expect(serializeSetup(values, '  ')).not.toContain('overrides');
  });

  it('describes any config as form text + overrides that reproduce it exactly', () => {
    const config = resolveConfig({
      name: 'Lx-s3',
      recipe: 'pact',
      seed: 3,
      backend: 'wasm',
      lr: 1e-30,
      steps: 2,
      model: { preset: 'qwen3-nano', init: 'scratch', vocabTasks: 64 },
      tasks: { nTrain: 8, nTest: 2 },
      pact: { objective: 'Lx', anchorProb: 0, traceComponents: { toolResponses: false } },
      toolsearcher: { categoryConstrained: false },
    });
    const { values, overridesText } = describeConfigAsSetup(config as unknown as Record<string, unknown>);
    expect(values).toMatchObject({
      recipe: 'pact',
      seed: '3',
      backend: 'wasm',
      lr: '1e-30',
      steps: '2',
      q: '0',
      model: 'qwen3-nano',
      horizon: '2',
    });
    const overrides = JSON.parse(overridesText);
    expect(overrides.pact.anchorProb).toBeUndefined(); // carried by the form, not twice
    expect(overrides.rolloutsPerPrompt).toBeUndefined();
    const { values: v2, overridesText: o2 } = parseSetupQuery(serializeSetup(values, overridesText));
    const back = validateSetup(v2, o2);
    expect(back.ignoredOverrides).toEqual([]);
    expect(back.config).toEqual(config);
  });
});

describe('describeStartingPolicyNote', () => {
  it('names the search warm start for a search recipe started from "warm-start", and nothing else', () => {
    for (const recipe of ['toolsearcher', 'search_r1', 'gspo', 'gdpo']) {
      const short = describeStartingPolicyNote(resolveConfig({ recipe, maxResponseTokens: 576 }));
      expect(short).toContain(
        'At 576 response tokens many of its episodes are cut before their answer (search results count as response tokens; at 768, 38% were, and held-out F1 fell from 0.65 to 0.43): give it 1536',
      );
      expect(describeStartingPolicyNote(resolveConfig({ recipe, maxResponseTokens: 1536, maxPromptTokens: 512 }))).toBe(
        `A ${recipe} run starts from the search warm start (public/warm-start-search), not the tool-use one: the same qwen3-nano trained on search episodes as well. Before any RL it selects tools at F1 0.57 (recall 0.50, all tools right in 28%) on 200 held-out queries.`,
      );
    }
    expect(
      describeStartingPolicyNote(resolveConfig({ recipe: 'toolsearcher', model: { init: 'folder:Qwen3-0.6B' } })),
    ).toBe('');
    for (const recipe of ['pact', 'grpo', 'sft', 'matchtir'])
      expect(describeStartingPolicyNote(resolveConfig({ recipe }))).toBe('');
    expect(describeStartingPolicyNote(null)).toBe('');
  });
});

describe('SEARCH_WARM_START_HELD_OUT', () => {
  it("is what the shipped search warm start's own record says", () => {
    const info = JSON.parse(readFileSync('public/warm-start-search/warm_start.json', 'utf8')) as {
      searchEval: { nTasks: number; f1: number; recall: number; match: number };
    };
    const e = info.searchEval;
    expect(SEARCH_WARM_START_HELD_OUT.queries).toBe(e.nTasks);
    expect(SEARCH_WARM_START_HELD_OUT.f1).toBeCloseTo(e.f1, 2);
    expect(SEARCH_WARM_START_HELD_OUT.recall).toBeCloseTo(e.recall, 2);
    expect(SEARCH_WARM_START_HELD_OUT.match).toBeCloseTo(e.match, 2);
  });
});

describe('option lists read from the registries', () => {
  it('offers the registered recipes, schedules and presets, in registration order', () => {
    expect(FIELD_BY_KEY.recipe.options).toEqual(listRecipes());
    expect(FIELD_BY_KEY.reasoning.options).toEqual(REASONING_SCHEDULES.names());
    expect(FIELD_BY_KEY.toolCall.options).toEqual(TOOL_CALL_SCHEDULES.names());
    expect(FIELD_BY_KEY.model.options).toEqual(MODEL_PRESETS);
  });

  it('words exactly the options a field offers (no label for a name that is gone)', () => {
    for (const [key, labels] of Object.entries(OPTION_LABELS)) {
      const options = FIELD_BY_KEY[key as keyof typeof FIELD_BY_KEY].options ?? [];
      const named = key === 'backend' ? [AUTO] : options; // the backends are named as they are
      expect(Object.keys(labels).sort(), key).toEqual([...named].sort());
    }
  });
});
