/**
 * Every shipped experiment file expands into valid runs (expandExperiment validates each
 * config through resolveConfig), full size and --smoke, and its rows are the papers' rows.
 * Evaluation files ("kind": "ftrl-eval") validate through parseFtrlEvalExperiment instead.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandExperiment } from '../run/experimentFile';
import { listRecipes } from '../recipes/allRecipes';
import { shrinkForSmoke } from './smoke';
import { isFtrlEvalFile, parseFtrlEvalExperiment, shrinkFtrlEvalForSmoke } from './ftrlEvalConfig';

const RECIPE_NAMES = listRecipes();
const DIR = path.resolve(__dirname, '../../experiments');
const readJson = (name: string): unknown => JSON.parse(readFileSync(path.join(DIR, name), 'utf8'));
const ALL_FILES = readdirSync(DIR).filter((f) => f.endsWith('.json'));
const FILES = ALL_FILES.filter((f) => !isFtrlEvalFile(readJson(f)));
const EVAL_FILES = ALL_FILES.filter((f) => isFtrlEvalFile(readJson(f)));

function load(name: string) {
  const json = JSON.parse(readFileSync(path.join(DIR, name), 'utf8'));
  return {
    json,
    full: expandExperiment(json, { defaultName: name.replace(/\.json$/, ''), recipeNames: RECIPE_NAMES }),
  };
}

describe('experiments/*.json evaluation files', () => {
  it('ftrl-eval.json is one', () => expect(EVAL_FILES).toContain('ftrl-eval.json'));
  it.each(EVAL_FILES)('%s validates, full size and --smoke', (name) => {
    const exp = parseFtrlEvalExperiment(readJson(name), { defaultName: name.replace(/\.json$/, '') });
    expect(exp.name).toBe(name.replace(/\.json$/, '')); // results/NAME/ matches the file name
    expect(shrinkFtrlEvalForSmoke(exp).settings.perCategory).toBeLessThanOrEqual(2);
  });
});

describe('experiments/*.json', () => {
  it.each(FILES)('%s expands and validates, full size and --smoke', (name) => {
    const { json, full } = load(name);
    expect(full.runs.length).toBeGreaterThan(0);
    expect(full.name).toBe(name.replace(/\.json$/, '')); // results/NAME/ matches the file name
    const smoke = shrinkForSmoke(json);
    const small = expandExperiment(smoke.file, { recipeNames: RECIPE_NAMES, overrides: smoke.overrides });
    expect(new Set(small.runs.map((r) => r.name))).toEqual(new Set(full.runs.map((r) => r.name)));
    // Every run shrinks to 2 steps, except an evaluate-only run (steps 0), which stays so.
    full.runs.forEach((r) =>
      expect(small.runs.find((x) => x.name === r.name)!.config.steps).toBe(r.config.steps === 0 ? 0 : 2),
    );
    // Run ids become folder names (pact train --out) and --run takes a comma-separated list.
    for (const r of full.runs) expect(r.id).not.toMatch(/[/\\,]/);
  });

  it('table1: Vanilla, the eight methods of PACT Table 1 and the frozen control, 5 seeds each, 200 held-out tasks', () => {
    const { full } = load('table1.json');
    const names = [...new Set(full.runs.map((r) => r.name))];
    expect(names).toEqual([
      'vanilla',
      'sft',
      'grpo',
      'ftrl',
      'toolrl',
      'chord',
      'matchtir',
      'sft_then_matchtir',
      'pact',
      'frozen',
    ]);
    for (const name of names)
      expect(full.runs.filter((r) => r.name === name).map((r) => r.seed)).toEqual([1, 2, 3, 4, 5]);
    for (const r of full.runs.filter((x) => x.name !== 'vanilla' && x.name !== 'frozen'))
      expect(r.config.recipe).toBe(r.name);
    for (const r of full.runs) expect(r.config.tasks).toMatchObject({ testSeed: 11, nTest: 200 });
    // The frozen control: PACT whose weights do not move, on the same prompts and sampling streams.
    const pact = full.runs.find((r) => r.name === 'pact')!.config;
    const frozen = full.runs.find((r) => r.name === 'frozen')!.config;
    expect(frozen.lr).toBe(1e-12);
    expect({ ...frozen, lr: pact.lr, evalEvery: pact.evalEvery, name: pact.name }).toEqual(pact);
    const vanilla = full.runs.find((r) => r.name === 'vanilla')!.config;
    // The warm start untouched: steps 0 = no update, only the held-out evaluation.
    expect(vanilla).toMatchObject({ recipe: 'sft', steps: 0 });
    expect(full.runs.find((r) => r.name === 'pact')!.config.pact).toMatchObject({
      objective: 'Lh+SFT',
      anchorProb: 0.4,
    });
    for (const r of full.runs) expect(r.config.tasks.testSeed).not.toBe(r.config.tasks.trainSeed); // held-out tasks
  });

  it('the four ablations share one full-PACT row at q = 0: the same resolved config but its name, seed by seed', () => {
    const rows: [string, string][] = [
      ['ablation-objectives.json', 'Lh+SFT'],
      ['ablation-trace-components.json', 'All'],
      ['sft-schedules.json', 'Seg A + Scale A'],
      ['anchoring-q.json', 'q=0'],
    ];
    for (const seed of [1, 2, 3]) {
      const configs = rows.map(([file, name]) => {
        const run = load(file).full.runs.find((r) => r.name === name && r.seed === seed)!;
        return { ...run.config, name: '' };
      });
      for (const c of configs.slice(1)) expect(c).toEqual(configs[0]);
      expect(configs[0].pact).toMatchObject({ objective: 'Lh+SFT', anchorProb: 0 });
    }
  });

  it('ablation-objectives: PACT Table 2 rows at q = 0', () => {
    const { full } = load('ablation-objectives.json');
    const pact = full.runs.filter((r) => r.config.recipe === 'pact');
    expect([...new Set(pact.map((r) => r.config.pact.objective))]).toEqual(['Lx', 'Lh', 'Lx+SFT', 'Lh+SFT']);
    for (const r of pact) expect(r.config.pact.anchorProb).toBe(0);
    expect(full.runs[0].name).toBe('vanilla');
  });

  it('ablation-trace-components: PACT Table 3, one component off per row, then all', () => {
    const { full } = load('ablation-trace-components.json');
    const rows = full.runs
      .filter((r) => r.seed === 1)
      .map((r) => [r.name, r.config.pact.traceComponents, r.config.pact.anchorProb]);
    expect(rows).toEqual([
      ['no RE', { reasoning: false, toolCalls: true, toolResponses: true }, 0],
      ['no TC', { reasoning: true, toolCalls: false, toolResponses: true }, 0],
      ['no TR', { reasoning: true, toolCalls: true, toolResponses: false }, 0],
      ['All', { reasoning: true, toolCalls: true, toolResponses: true }, 0],
    ]);
  });

  it('sft-schedules: PACT Table 4 and App. D Table 8 rows', () => {
    const { full } = load('sft-schedules.json');
    const rows = full.runs
      .filter((r) => r.seed === 1)
      .map((r) => [r.config.pact.reasoningSchedule, r.config.pact.toolCallSchedule, r.config.pact.fullTokenAnneal]);
    expect(rows).toEqual([
      ['fixed', 'scale', false],
      ['segment', 'fixed', false],
      ['token', 'scale', false],
      ['segment', 'token', false],
      ['segment', 'none', false],
      ['none', 'scale', false],
      ['segment', 'scale', true],
      ['segment', 'scale', false],
    ]);
  });

  it('anchoring-q: Figure 5 sweeps q over {0, 0.2, 0.4, 0.6, 0.8}', () => {
    const { full } = load('anchoring-q.json');
    expect([...new Set(full.runs.map((r) => r.config.pact.anchorProb))]).toEqual([0, 0.2, 0.4, 0.6, 0.8]);
    expect(full.runs).toHaveLength(15);
  });

  it.each(['ablation-objectives.json', 'ablation-trace-components.json', 'sft-schedules.json', 'anchoring-q.json'])(
    "%s has table1's tasks and sizes, so table1's Vanilla row is its baseline",
    (name) => {
      const pick = (c: ReturnType<typeof load>['full']['runs'][number]['config']) => ({
        tasks: c.tasks,
        steps: c.steps,
        batchPrompts: c.batchPrompts,
        rolloutsPerPrompt: c.rolloutsPerPrompt,
        maxTurns: c.maxTurns,
        maxResponseTokens: c.maxResponseTokens,
        lr: c.lr,
        evalEvery: c.evalEvery,
        model: c.model,
      });
      const table1 = pick(load('table1.json').full.runs.find((r) => r.name === 'pact')!.config);
      for (const r of load(name).full.runs.filter((x) => x.config.steps > 0))
        expect(pick(r.config), `${name} ${r.id}`).toEqual(table1);
    },
  );

  it('toolsearcher: the untrained model, Search-R1, GSPO, GDPO, ToolSearcher and its three ablations', () => {
    const { full } = load('toolsearcher.json');
    const rows = full.runs
      .filter((r) => r.seed === 1)
      .map((r) => {
        const t = r.config.toolsearcher;
        return [r.config.recipe, t.eventLevelSearch, t.trajectoryAlignedCredit, t.categoryConstrained];
      });
    expect(rows).toEqual([
      ['search_r1', true, true, true],
      ['search_r1', true, true, true],
      ['gspo', true, true, true],
      ['gdpo', true, true, true],
      ['toolsearcher', true, true, true],
      ['toolsearcher', false, true, true],
      ['toolsearcher', true, false, true],
      ['toolsearcher', true, true, false],
      ['toolsearcher', true, true, true],
    ]);
    expect(full.runs[0].config).toMatchObject({ recipe: 'search_r1', steps: 0 });
    // The frozen control: ToolSearcher on the same prompts and streams, not moving, not evaluated.
    const frozen = full.runs.find((r) => r.name === 'frozen' && r.seed === 1)!.config;
    const toolsearcher = full.runs.find((r) => r.name === 'toolsearcher' && r.seed === 1)!.config;
    expect({ ...frozen, lr: toolsearcher.lr, evalEvery: toolsearcher.evalEvery, name: toolsearcher.name }).toEqual(
      toolsearcher,
    );
    expect([frozen.lr, frozen.evalEvery]).toEqual([1e-12, 0]);
    // The sizes: at least 200 held-out queries and 3 seeds for every row.
    expect(full.runs.every((r) => r.config.tasks.nTest >= 200)).toBe(true);
    expect(new Set(full.runs.map((r) => r.seed))).toEqual(new Set([1, 2, 3]));
  });
});
