import { describe, expect, it } from 'vitest';
import {
  FIELD_BY_KEY,
  SETUP_FIELDS,
  describeStartingPolicyNote,
  isFieldShown,
  readDefaultValues,
  validateSetup,
} from './runSetup';
import { describeRecipeObjective, RECIPE_TITLES } from './recipeNames';
import { PANEL_LESSONS } from './lessons';
import { RUN_SIZES, countStepTokens, describeRunSize } from './runSizes';
import { describeChoiceNotes } from './setupChoices';

const defaults = readDefaultValues();

describe('a setup only offers what trains', () => {
  it('refuses a preset the shipped warm start is not, at its field, instead of training the nano under its name', () => {
    const v = validateSetup({ ...defaults, model: 'qwen3-micro' });
    expect(v.config).toBeNull();
    expect(v.fieldErrors.init).toBe(
      'Starting weights "warm-start": the shipped warm start is a qwen3-nano; a qwen3-micro starts from random weights or from your Qwen3 folder',
    );
    expect(v.unavailable.init['warm-start']).toMatch(/is a qwen3-nano/);
  });

  it('trains qwen3-micro from random weights, and says so', () => {
    const values = { ...defaults, model: 'qwen3-micro', init: 'scratch' };
    const v = validateSetup(values);
    expect(v.fieldErrors).toEqual({});
    expect(v.config?.model).toMatchObject({ preset: 'qwen3-micro', init: 'scratch' });
    expect(describeChoiceNotes(values)[0]).toMatch(/^Random weights: this qwen3-micro has never seen a tool call/);
  });

  it('offers Qwen3-0.6B only through its folder, with the reason', () => {
    for (const init of ['warm-start', 'scratch']) {
      const v = validateSetup({ ...defaults, model: 'Qwen3-0.6B', init });
      expect(v.config).toBeNull();
      // 596,049,920 parameters × 4 bytes × 5 copies (weights, gradients, two AdamW moments, π_ref) = 11.9 GB
      expect(v.fieldErrors.model).toBe(
        'Model preset "Qwen3-0.6B": needs its trained weights: pick a Qwen3-0.6B folder below (from random weights it would need about 12 GB of training state, and learn nothing)',
      );
    }
    // A picked folder is the model: the preset and starting weights are not used, and not errors.
    const withFolder = validateSetup({ ...defaults, model: 'Qwen3-0.6B' }, '', { modelFolderName: 'Qwen3-0.6B' });
    expect(withFolder.fieldErrors).toEqual({});
    expect(withFolder.config).not.toBeNull();
  });

  it('offers the fma engine kernels only where the page validates relaxed SIMD, and says why not', () => {
    expect(FIELD_BY_KEY.kernels).toMatchObject({
      path: ['engineKernels'],
      options: ['simd', 'fma'],
      defaultText: 'simd',
    });
    expect(FIELD_BY_KEY.kernels.hint).toMatch(
      /Intel Xeons measured.*AMD Zen 5 gained nothing.*last digits.*one setting/,
    );
    expect(validateSetup(defaults).config?.engineKernels).toBe('simd');
    const fma = { ...defaults, kernels: 'fma' };
    expect(validateSetup(fma, '', { hasRelaxedSimd: true }).config?.engineKernels).toBe('fma');
    expect(validateSetup(defaults, '', { hasRelaxedSimd: true }).unavailable.kernels).toEqual({});
    const without = validateSetup(fma, '', { hasRelaxedSimd: false });
    expect(without.config).toBeNull();
    expect(without.unavailable.kernels.fma).toMatch(/no relaxed SIMD/);
    expect(without.fieldErrors.kernels).toMatch(
      /^Engine kernels "fma": this browser's WebAssembly has no relaxed SIMD/,
    );
    expect(validateSetup(defaults, '', { hasRelaxedSimd: false }).fieldErrors).toEqual({});
  });

  it('shows the task sources this setup cannot train on as unavailable, and refuses them', () => {
    const ftrl = validateSetup({ ...defaults, tasks: 'ftrl' });
    expect(ftrl.config).toBeNull();
    expect(ftrl.fieldErrors.tasks).toBe(
      'Task source "ftrl": load an FTRL task file in the Task files panel first (FTRL\'s own test file is not shipped: it is public benchmark data you load from your disk)',
    );
    // A loaded file makes the source available (what it can train is ftrlSetup.ts's).
    expect(
      validateSetup({ ...defaults, tasks: 'ftrl' }, '', { ftrlFileName: 'tasks.jsonl' }).unavailable.tasks,
    ).toEqual({
      'tool-repo': 'only the search recipes (ToolSearcher, Search-R1, GSPO, GDPO) train on it',
    });
    expect(validateSetup({ ...defaults, tasks: 'tool-repo' }).fieldErrors.tasks).toBe(
      'Task source "tool-repo": only the search recipes (ToolSearcher, Search-R1, GSPO, GDPO) train on it',
    );
    // The search recipes do train on the tool repository.
    const search = validateSetup({ ...defaults, recipe: 'toolsearcher', tasks: 'tool-repo' });
    expect(search.fieldErrors).toEqual({});
    expect(Object.keys(search.unavailable.tasks)).toEqual(['ftrl']);
    expect(Object.keys(validateSetup(defaults).unavailable.tasks)).toEqual(['ftrl', 'tool-repo']);
  });
});

describe('each recipe shows its own knobs and objective', () => {
  const shown = (recipe: string) => SETUP_FIELDS.filter((f) => isFieldShown(f, recipe)).map((f) => f.key);

  it('shows PACT knobs only for PACT, μ only for CHORD, the SFT steps only for SFT → MatchTIR, K only with rollouts', () => {
    expect(shown('pact')).toEqual(
      expect.arrayContaining(['K', 'q', 'betaSft', 'lambdaStart', 'lambdaEnd', 'horizon', 'reasoning', 'toolCall']),
    );
    expect(shown('pact')).not.toContain('chordMu');
    for (const key of ['q', 'betaSft', 'lambdaStart', 'horizon', 'reasoning', 'toolCall', 'chordMu', 'sftSteps'])
      expect(shown('grpo')).not.toContain(key);
    expect(shown('grpo')).toContain('K');
    expect(shown('sft')).not.toContain('K');
    expect(shown('chord')).toContain('chordMu');
    expect(shown('sft_then_matchtir')).toContain('sftSteps');
    // Every run's own fields stay for every recipe.
    for (const key of [
      'recipe',
      'model',
      'init',
      'tasks',
      'steps',
      'seed',
      'backend',
      'batch',
      'miniBatch',
      'lr',
    ] as const)
      expect(shown('sft')).toContain(key);
  });

  it('names recipes by their title and says what each optimises, with its equation', () => {
    expect(RECIPE_TITLES.sft_then_matchtir).toBe('SFT → MatchTIR');
    const grpo = describeRecipeObjective('grpo', PANEL_LESSONS['run-setup'])!;
    expect(grpo.title).toBe('What a GRPO run optimises');
    expect(grpo.equation).toMatch(/A_k = \(R_k − mean R\)/);
    expect(grpo.equationRef).toBe('Shao et al. 2024 (DeepSeekMath) §4.1');
    const pact = describeRecipeObjective('pact', PANEL_LESSONS['run-setup'])!;
    expect(pact.equation).toBe(PANEL_LESSONS['run-setup'].equation);
    expect(describeRecipeObjective('chord')!.equation).toContain('(1 − μ)·L_GRPO + μ·L_SFT');
    expect(FIELD_BY_KEY.chordMu.defaultText).toBe('0.1');
  });
});

describe('run sizes', () => {
  it("the app's default run is the quick size: 2 prompts × K 4, 4 turns, 576 response tokens, 8 held-out tasks", () => {
    const v = validateSetup(defaults, '', { size: 'quick' });
    expect(v.config).toMatchObject({
      batchPrompts: 2,
      miniBatchPrompts: 1,
      rolloutsPerPrompt: 4,
      maxTurns: 4,
      maxResponseTokens: 576,
      model: { preset: 'qwen3-nano', init: 'warm-start' },
    });
    expect(v.config?.tasks).toMatchObject({ nTest: 8, categories: ['single_hop', 'multi_hop', 'parallel_single_hop'] });
    // An override still wins over the size.
    expect(validateSetup(defaults, '{"maxTurns": 2}', { size: 'quick' }).config?.maxTurns).toBe(2);
  });

  it('for the search recipes both sizes give a search episode its budget (512 + 1,536 tokens), in queries, not task kinds', () => {
    for (const recipe of ['toolsearcher', 'search_r1', 'gspo', 'gdpo']) {
      const quick = validateSetup({ ...defaults, recipe }, '', { size: 'quick' }).config;
      expect(quick).toMatchObject({
        batchPrompts: 2,
        rolloutsPerPrompt: 4,
        maxTurns: 4,
        maxPromptTokens: 512,
        maxResponseTokens: 1536,
      });
      expect(quick?.tasks.nTest).toBe(8);
      expect(quick?.tasks.categories).toBeUndefined();
      // With that budget the setup has no "episodes will be cut" warning.
      expect(describeStartingPolicyNote(quick!)).not.toContain('cut before their answer');
      const paper = validateSetup({ ...defaults, recipe, ...RUN_SIZES.paper.fields }, '', { size: 'paper' }).config;
      expect(paper).toMatchObject({
        batchPrompts: 8,
        rolloutsPerPrompt: 8,
        maxTurns: 10,
        maxPromptTokens: 512,
        maxResponseTokens: 1536,
      });
      expect(paper?.tasks.nTest).toBe(32);
    }
    // A tool-use recipe keeps its own budget, and an override still wins over a search size.
    expect(validateSetup(defaults, '', { size: 'quick' }).config?.maxResponseTokens).toBe(576);
    expect(
      validateSetup({ ...defaults, recipe: 'gdpo' }, '{"maxResponseTokens": 768}', { size: 'quick' }).config
        ?.maxResponseTokens,
    ).toBe(768);
    // 2·4·1536 = 12,288 rollout tokens a quick search step; 8·8·1536 = 98,304 a paper one: 8×
    expect(countStepTokens(RUN_SIZES.quick, 'tool-search')).toBe(12288);
    expect(describeRunSize(RUN_SIZES.quick, 'tool-search')).toBe(
      '2 prompts × K 4 rollouts a step, up to 4 turns and 1,536 response tokens each (search results count as response tokens), 8 held-out queries. Needs any machine (wasm on the CPU is enough).',
    );
    expect(describeRunSize(RUN_SIZES.paper, 'tool-search')).toBe(
      '8 prompts × K 8 rollouts a step, up to 10 turns and 1,536 response tokens each (search results count as response tokens), 32 held-out queries. About 8× the rollout tokens of a quick step. Needs a hardware WebGPU adapter (a GPU).',
    );
  });

  it('the paper-scaled size is the config defaults, and says it needs a GPU and how much more work it is', () => {
    const values = { ...defaults, ...RUN_SIZES.paper.fields };
    const v = validateSetup(values, '', { size: 'paper' });
    expect(v.config).toMatchObject({
      batchPrompts: 8,
      miniBatchPrompts: 4,
      rolloutsPerPrompt: 8,
      maxTurns: 10,
      maxResponseTokens: 1024,
    });
    expect(v.config?.tasks.nTest).toBe(32);
    expect(v.config?.tasks.categories).toBeUndefined();
    // 8·8·1024 = 65,536 rollout tokens against 2·4·576 = 4,608: 14.2×
    expect(countStepTokens(RUN_SIZES.paper) / countStepTokens(RUN_SIZES.quick)).toBeCloseTo(14.22, 2);
    expect(describeRunSize(RUN_SIZES.paper)).toBe(
      '8 prompts × K 8 rollouts a step, up to 10 turns and 1,024 response tokens each, all 4 task kinds, 32 held-out tasks. About 14× the rollout tokens of a quick step. Needs a hardware WebGPU adapter (a GPU); on a CPU one step took 1 min on 2 cores, where a quick step takes about 5 s.',
    );
  });
});
