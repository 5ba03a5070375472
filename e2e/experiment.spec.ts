/**
 * The experiment runner end to end: experiments/smoke-ui.json (one PACT step,
 * q = 0, wasm, K = 2, one prompt, 32 response tokens, 2 held-out tasks) run twice through
 * scripts/browserExperiment.ts's runExperiment against the built app this config serves. Each run
 * goes through the page's run setup (form + config overrides in the URL) and the Train
 * button; the metrics come from the page's IndexedDB. The two experiments must agree bit
 * for bit on every metric but the machine's (time, memory); table.md must have the method
 * row and the metric columns; results.json every step; the figures must be PNG files.
 */
import { test, expect } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runExperiment } from '../scripts/browserExperiment';
import { compareRunMetrics, isMachineMetric, type ExperimentResults } from '../src/experiments/results';
import { parseMetricsJsonl } from '../src/storage/metricsFile';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function isPng(file: string): boolean {
  const bytes = readFileSync(file);
  // signature, then the IHDR chunk: length 13, type "IHDR", width and height > 0
  return (
    PNG_SIGNATURE.every((b, i) => bytes[i] === b) &&
    bytes.readUInt32BE(8) === 13 &&
    bytes.subarray(12, 16).toString('latin1') === 'IHDR' &&
    bytes.readUInt32BE(16) > 0 &&
    bytes.readUInt32BE(20) > 0
  );
}

test('run setup: config overrides (JSON) in the URL are merged under the form, validated naming the field, and shown', async ({
  page,
}) => {
  const bad = new URLSearchParams({ K: '4', overrides: JSON.stringify({ pact: { objective: 'Lz' }, maxTurns: 3 }) });
  await page.goto(`/?${bad}`);
  const panel = page.getByTestId('run-setup');
  await expect(panel.getByTestId('setup-overrides')).toHaveAttribute('open', '');
  await expect(panel.getByTestId('setup-other-errors')).toContainText(
    'Config overrides (JSON): config.pact.objective: ',
  );
  await expect(panel.getByTestId('setup-status')).toContainText('1 value needs fixing');
  await panel.getByTestId('btn-train').click();
  await expect(panel.getByTestId('start-error')).toContainText('config.pact.objective');
  await expect(panel.getByTestId('train-progress')).toHaveAttribute('data-phase', 'idle');

  // Fix it in the textarea: the URL follows, the merged config shows the override and the form's K,
  // and an override of a form field (q) is ignored and said so.
  await panel
    .getByTestId('setup-overrides-text')
    .fill(JSON.stringify({ pact: { objective: 'Lx', anchorProb: 0.9 }, maxTurns: 3 }));
  await expect(panel.getByTestId('setup-status')).toContainText('Valid configuration');
  await expect(panel.getByTestId('setup-overrides-ignored')).toContainText("pact.anchorProb (the form's q field)");
  const merged = JSON.parse((await panel.getByTestId('setup-merged-config').textContent())!);
  expect(merged).toMatchObject({ rolloutsPerPrompt: 4, maxTurns: 3, pact: { objective: 'Lx', anchorProb: 0.4 } });
  await expect.poll(() => new URL(page.url()).searchParams.get('overrides')).toContain('"Lx"');
  await page.reload();
  await expect(panel.getByTestId('setup-overrides-text')).toHaveValue(/"objective":"Lx"/);
  await panel.scrollIntoViewIfNeeded();
  await panel.getByTestId('setup-overrides').screenshot({ path: 'e2e/screenshots/run-setup-overrides.png' });
});

test('a run the page rejects is recorded with its error, and the next run still goes', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pact-exp-bad-'));
  const file = path.join(dir, 'bad.json');
  // "nope" is a valid config string but no registered recipe: the page's setup refuses it.
  writeFileSync(
    file,
    JSON.stringify({ name: 'bad', base: { recipe: 'nope', backend: 'wasm' }, runs: [{ name: 'bad' }], seeds: [1, 2] }),
  );
  const lines: string[] = [];
  // Two jobs at once: both runs are recorded, in the file's order whichever ends first.
  const r = await runExperiment({
    file,
    baseUrl: test.info().project.use.baseURL!,
    outDir: path.join(dir, 'out'),
    log: (l) => lines.push(l),
    jobs: 2,
  });
  expect(r.runs.map((x) => [x.id, x.status])).toEqual([
    ['bad-s1', 'failed'],
    ['bad-s2', 'failed'],
  ]);
  // --resume keeps no failed run: both run again.
  const again = await runExperiment({
    file,
    baseUrl: test.info().project.use.baseURL!,
    outDir: path.join(dir, 'out'),
    log: (l) => lines.push(l),
    resume: true,
  });
  expect(again.runs.map((x) => [x.id, x.status])).toEqual([
    ['bad-s1', 'failed'],
    ['bad-s2', 'failed'],
  ]);
  expect(lines).toContain(`--resume: 0 of 2 run(s) kept from ${path.join(dir, 'out', 'runs')}, 2 to run`);
  lines.splice(0);
  await runExperiment({
    file,
    baseUrl: test.info().project.use.baseURL!,
    outDir: path.join(dir, 'out'),
    log: (l) => lines.push(l),
  });
  expect(r.runs[0].error).toMatch(/^the page rejected the setup: .*unknown recipe "nope"/);
  expect(lines.filter((l) => /^\[\d\/2\] bad-s\d: failed/.test(l))).toHaveLength(2);
  const md = readFileSync(path.join(dir, 'out', 'table.md'), 'utf8');
  expect(md).toContain('| bad | 0 |');
  expect(md).toContain('Failed runs (2, left out of the cells):');
});

test('smoke experiment through the UI, twice: identical metrics bit for bit, table, results.json, PNG figures', async () => {
  test.setTimeout(600_000);
  const baseUrl = test.info().project.use.baseURL!;
  const outs = [mkdtempSync(path.join(tmpdir(), 'pact-exp-a-')), mkdtempSync(path.join(tmpdir(), 'pact-exp-b-'))];
  const lines: string[] = [];
  const results: ExperimentResults[] = [];
  for (const outDir of outs) {
    results.push(
      await runExperiment({
        file: 'experiments/smoke-ui.json',
        baseUrl,
        outDir,
        backend: 'wasm',
        log: (l) => lines.push(l),
        runTimeoutMs: 240_000,
      }),
    );
  }
  const [a, b] = results;
  // The backend is printed first, then one progress line per run.
  expect(lines[0]).toMatch(/^experiment smoke-ui: 1 run\(s\) on wasm/);
  expect(lines.filter((l) => /^\[1\/1\] pact-s1: /.test(l))).toHaveLength(2);
  for (const r of results) {
    expect(r.runs.map((x) => [x.id, x.status, x.error])).toEqual([['pact-s1', 'finished', undefined]]);
    expect(r.backend.name).toBe('wasm');
    expect(r.app.gitCommit).toMatch(/^[0-9a-f]{40}$/);
  }

  // results.json: the run's one step with its training and held-out metrics, and the resolved config.
  const json = JSON.parse(readFileSync(path.join(outs[0], 'results.json'), 'utf8')) as ExperimentResults;
  const run = json.runs[0];
  expect(run.steps.map((s) => s.step)).toEqual([1]);
  for (const key of [
    'reward',
    'loss',
    'kl',
    'grad_norm',
    'eval/solve_r',
    'eval/solve_p',
    'eval/solve_f1',
    'eval/answer_correct',
  ]) {
    expect(run.steps[0].values, key).toHaveProperty([key]);
  }
  expect(run.config).toMatchObject({
    recipe: 'pact',
    seed: 1,
    backend: 'wasm',
    steps: 1,
    rolloutsPerPrompt: 2,
    maxResponseTokens: 32,
    maxTurns: 2,
  });
  expect(run.config.pact).toMatchObject({ objective: 'Lh+SFT', anchorProb: 0, annealHorizon: 1 });
  expect(run.config.tasks).toMatchObject({ nTrain: 4, nTest: 2 });
  // q = 0: every prompt took the trace-conditioned route, so the SFT term has a value.
  expect(run.steps[0].values.gate_fraction).toBe(0);
  expect(typeof run.steps[0].values['loss/SFT']).toBe('number');

  // Same config, seed and backend: the same numbers, bit for bit (machine metrics aside).
  expect(compareRunMetrics(a.runs, b.runs)).toEqual([]);
  const jsonB = JSON.parse(readFileSync(path.join(outs[1], 'results.json'), 'utf8')) as ExperimentResults;
  expect(compareRunMetrics(json.runs, jsonB.runs)).toEqual([]); // also after the JSON round trip

  // table.md: the method as a row, Solve-R/P/F1 and answer correctness as columns, n = 1 said so.
  const md = readFileSync(path.join(outs[0], 'table.md'), 'utf8').split('\n');
  const header = md.find((l) => l.startsWith('| Method'))!;
  expect(
    header
      .split('|')
      .map((c) => c.trim())
      .filter(Boolean)
      .slice(0, 6),
  ).toEqual(['Method', 'n', 'Solve-R', 'Solve-P', 'Solve-F1', 'Answer correct']);
  const row = md.find((l) => l.startsWith('| pact |'))!;
  expect(
    row
      .split('|')
      .map((c) => c.trim())
      .filter(Boolean),
  ).toHaveLength(
    header
      .split('|')
      .map((c) => c.trim())
      .filter(Boolean).length,
  );
  expect(row).toContain('(n=1)');
  expect(readFileSync(path.join(outs[0], 'table.csv'), 'utf8').split('\n')[1]).toMatch(/^pact,1,/);

  // Figures and panel screenshots are real PNGs.
  const figures = readdirSync(path.join(outs[0], 'figures'));
  expect(figures).toContain('reward.png');
  expect(figures).toContain('eval-solve_f1.png');
  for (const f of figures) expect(isPng(path.join(outs[0], 'figures', f)), f).toBe(true);
  for (const panel of ['live-charts', 'rollout-inspector', 'run-setup']) {
    const shot = path.join(outs[0], 'screenshots', `pact-s1-${panel}.png`);
    expect(existsSync(shot), shot).toBe(true);
    expect(isPng(shot)).toBe(true);
  }

  // --resume on the first folder: its finished run (runs/pact-s1.json) is kept, nothing trains,
  // and results.json holds the same numbers; a changed config (K 4) would run it again.
  expect(existsSync(path.join(outs[0], 'runs', 'pact-s1.json'))).toBe(true);
  lines.splice(0);
  const resumed = await runExperiment({
    file: 'experiments/smoke-ui.json',
    baseUrl,
    outDir: outs[0],
    backend: 'wasm',
    log: (l) => lines.push(l),
    resume: true,
  });
  expect(lines).toContain(`--resume: 1 of 1 run(s) kept from ${path.join(outs[0], 'runs')}, 0 to run`);
  expect(lines.some((l) => /^\[1\/1\] pact-s1: /.test(l))).toBe(false);
  expect(resumed.runs[0].seconds).toBe(a.runs[0].seconds);
  expect(compareRunMetrics(a.runs, resumed.runs)).toEqual([]);
  expect(readFileSync(path.join(outs[0], 'table.md'), 'utf8')).toContain(
    '1 run(s) were kept from an earlier invocation (--resume)',
  );

  // The same file through `pact train` in Node: the same run as the page's, bit for bit (machine
  // metrics aside), so the CLI and the app give one set of numbers. Two diagnostics are summed in
  // double from JS Math.exp (kl_prompt_only, trace_logprob_gap), which Node 20's and Chromium's V8
  // may round differently in the last bit: those to 1e-12 relative.
  const nodeOut = mkdtempSync(path.join(tmpdir(), 'pact-exp-node-'));
  const cli = spawnSync(
    'node',
    ['bin/pact.mjs', 'train', '--config', 'experiments/smoke-ui.json', '--threads', '1', '--out', nodeOut],
    { encoding: 'utf8' },
  );
  expect(cli.status, cli.stderr).toBe(0);
  const nodeRows = parseMetricsJsonl(readFileSync(path.join(nodeOut, 'smoke-ui', 'pact-s1', 'metrics.jsonl'))).rows;
  expect(nodeRows.map((r) => r.step)).toEqual(a.runs[0].steps.map((s) => s.step));
  const DOUBLE_MATH = new Set(['kl_prompt_only', 'trace_logprob_gap']);
  a.runs[0].steps.forEach((s, i) => {
    for (const [k, v] of Object.entries(s.values)) {
      if (isMachineMetric(k) || k.startsWith('memory/')) continue;
      const n = nodeRows[i].values[k];
      if (DOUBLE_MATH.has(k) && typeof v === 'number') expect(n, k).toBeCloseTo(v, 12 - Math.log10(Math.abs(v) || 1));
      else expect(Number.isNaN(n) ? null : (n ?? null), `step ${s.step} ${k}`).toBe(v); // NaN is null in results
    }
  });
});
