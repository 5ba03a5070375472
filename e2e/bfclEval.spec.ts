import { test, expect } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeScriptedFolder } from './scriptedQwen3Folder';

// BFCL v4 multi-turn evaluation in the app (Task files → BFCL v4 multi-turn): the hand-written
// fixtures (src/envs/bfcl/fixtures: the SimpleCounterAPI backend in BFCL's source layout, three
// entries, copied under BFCL's file names), plus one more entry written here in a second file, and a Qwen3 folder over the full
// vocabulary with an 8,192-token window; Evaluate runs in the trainer worker with the backend in
// Pyodide, and the result must equal what `pact eval-bfcl` gives in Node for the same inputs.
//
// The folder (e2e/scriptedQwen3Folder.ts) is random except for what makes it call: attention and
// MLP outputs are zero, the embeddings and LM head form a chain whose every step is
// `<tool_call>{"name":"list_counters","arguments":{}}</tool_call><|im_end|>`. With at most 1 step
// with calls per turn, every entry is force-terminated in its first turn (step 2 calls again):
// the three fixture entries have 2 or 3 turns and fail BFCL's turn count (force_terminated); the
// extra entry has one turn whose ground truth is list_counters(), so its turn is kept, the state
// is unchanged and the ground truth's result is among the model's: correct. 1 of 4, 25%.

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = path.join(repo, 'src/envs/bfcl/fixtures');
const CALL = '<tool_call>{"name":"list_counters","arguments":{}}</tool_call>';
const EXTRA = 'BFCL_v4_multi_turn_one.json';
const FIXTURE = 'BFCL_v4_multi_turn_simple.json';

let root: string;
let dataDir: string;
let folder: string;
let node: { overall: unknown; rows: unknown[]; entries: Record<string, unknown>[] };

test.beforeAll(async () => {
  test.setTimeout(240_000);
  root = mkdtempSync(path.join(os.tmpdir(), 'pact-bfcl-e2e-'));
  dataDir = path.join(root, 'bfcl-data');
  cpSync(path.join(fixtures, 'data'), dataDir, { recursive: true });
  // The fixtures are stored as handmade_multi_turn_…; a copy of BFCL's data folder has BFCL's names.
  for (const sub of ['', 'possible_answer'])
    renameSync(path.join(dataDir, sub, FIXTURE.replace('BFCL_v4_', 'handmade_')), path.join(dataDir, sub, FIXTURE));
  const entry = {
    id: 'multi_turn_one_0',
    question: [[{ role: 'user', content: 'Which counters are there?' }]],
    initial_config: { SimpleCounterAPI: { counters: { p: 1, q: 2 } } },
    path: ['SimpleCounterAPI.list_counters'],
    involved_classes: ['SimpleCounterAPI'],
  };
  writeFileSync(path.join(dataDir, EXTRA), `${JSON.stringify(entry)}\n`);
  writeFileSync(
    path.join(dataDir, 'possible_answer', EXTRA),
    `${JSON.stringify({ id: entry.id, ground_truth: [['list_counters()']] })}\n`,
  );
  folder = path.join(root, 'qwen3-scripted');
  await writeScriptedFolder(folder, CALL);
  // The same inputs through `pact eval-bfcl` in Node.
  const cli = spawnSync(
    process.execPath,
    [
      path.join(repo, 'bin/pact.mjs'),
      'eval-bfcl',
      '--data',
      // in the app's order: the folder's entry files sorted by name
      [path.join(dataDir, EXTRA), path.join(dataDir, FIXTURE)].join(','),
      '--bfcl-src',
      path.join(fixtures, 'bfcl_src'),
      '--model',
      folder,
      '--max-steps',
      '1',
      '--max-response-tokens',
      '32',
      '--backend',
      'cpu',
      '--json',
    ],
    { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (cli.status !== 0) throw new Error(`pact eval-bfcl failed (${cli.status}): ${cli.stderr}`);
  node = JSON.parse(cli.stdout);
});

test.afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What an entry's verdict is made of, without the free-text message. */
const verdictOf = (e: Record<string, unknown>) => ({
  id: e.id,
  file: e.file,
  valid: e.valid,
  errorType: e.errorType,
  turn: e.turn,
  status: e.status,
  steps: e.steps,
  generatedTokens: e.generatedTokens,
});

test("BFCL fixtures evaluated in the app equal pact eval-bfcl in Node: 1 of 4, BFCL's verdict per entry", async ({
  page,
}) => {
  test.setTimeout(240_000);
  // Node's answer, checked against the hand count in the header first.
  expect(node.overall).toMatchObject({ entries: 4, correct: 1, accuracy: 0.25, promptTooLong: 0, errors: 0 });
  expect(node.entries.map((e) => [e.id, e.valid ? 'correct' : e.errorType])).toEqual([
    ['multi_turn_one_0', 'correct'],
    ['multi_turn_simple_0', 'multi_turn:force_terminated'],
    ['multi_turn_simple_1', 'multi_turn:force_terminated'],
    ['multi_turn_simple_2', 'multi_turn:force_terminated'],
  ]);

  await page.goto('/');
  const panel = page.getByTestId('bfcl-eval');
  await expect(panel.getByTestId('bfcl-sizes')).toContainText('3,184 to 7,118 tokens');
  await panel.getByTestId('bfcl-data-input').setInputFiles(dataDir);
  await expect(panel.getByTestId('bfcl-file-row')).toHaveCount(2, { timeout: 60_000 });
  const entries = await panel
    .getByTestId('bfcl-file-row')
    .evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute('data-file'), tr.querySelector('[data-col="entries"]')!.textContent]),
    );
  expect(entries).toEqual([
    [EXTRA, '1'],
    [FIXTURE, '3'],
  ]);
  // The fixture prompts (four short docs) fit even the warm start's 2,048 tokens.
  await expect(panel.getByTestId('bfcl-fit-summary')).toContainText(
    "4 entries to evaluate; 4 of them fit the policy's 2048-token window",
  );
  await expect(panel.getByTestId('btn-bfcl-eval')).toBeDisabled(); // no source yet
  await panel.getByTestId('bfcl-source-input').setInputFiles(path.join(fixtures, 'bfcl_src'));
  await expect(panel.getByTestId('bfcl-source-summary')).toContainText('SimpleCounterAPI');
  await panel.getByTestId('model-folder-input').setInputFiles(folder);
  await expect(panel.getByTestId('bfcl-eval-policy')).toHaveValue('folder');
  await expect(panel.getByTestId('bfcl-fit-summary')).toContainText("4 of them fit the policy's 8192-token window");
  await panel.getByTestId('bfcl-eval-maxSteps').fill('1');
  await panel.getByTestId('bfcl-eval-maxResponseTokens').fill('32');
  await panel.getByTestId('bfcl-eval-backend').selectOption('wasm');
  await panel.getByTestId('btn-bfcl-eval').click();
  await expect(panel).toHaveAttribute('data-status', /finished|failed/, { timeout: 200_000 });
  await expect(panel.getByTestId('bfcl-eval-error')).toHaveCount(0);
  await expect(panel.getByTestId('bfcl-eval-accuracy')).toHaveText('1 of 4');
  await expect(panel.getByTestId('bfcl-verdict')).toHaveCount(4);

  const report = JSON.parse((await panel.getByTestId('bfcl-eval-report').textContent()) ?? '{}');
  expect(report.classProblems).toEqual({});
  expect(report.backend).toBe('wasm');
  expect(report.summary.overall).toEqual(node.overall);
  expect(report.summary.rows).toEqual(node.rows);
  expect(report.summary.entries.map(verdictOf)).toEqual(node.entries.map(verdictOf));
  await panel.scrollIntoViewIfNeeded();
  await panel.screenshot({ path: 'e2e/screenshots/bfcl-eval.png' });
});
