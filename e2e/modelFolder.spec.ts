import { test, expect, type Page } from '@playwright/test';
import { tinyRunUrl } from './tinyRun';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listQwen3ParamShapes, type Qwen3Config } from '../src/model/qwen3/config';
import { saveQwen3Folder } from '../src/model/weights/qwen3Folder';

// "A user's Qwen3 folder as the model" (Run setup): folders are picked through the
// real <input webkitdirectory>; a broken one is refused on the page with the file and field
// named; a good one (written by saveQwen3Folder) shows its shape, and Train sends its files to
// the worker, which trains one step from it (the Device panel names the folder and the
// parameter count the worker built).

let root: string;
const WARM_START = path.resolve('public/warm-start');

// 2 layers, hidden 64, 4 heads of 16, 2 KV heads, MLP 128, the warm start's pruned vocabulary (1,022).
const TINY: Qwen3Config = {
  vocab_size: 1022,
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 2048,
};
// embed 1022·64 = 65,408; per layer: q 64·64 = 4,096, k and v 32·64 = 2,048 each, o 4,096,
// norms 64 + 64 + 16 + 16 = 160, MLP 3·128·64 = 24,576 → 37,024; ×2 = 74,048; final norm 64
const TINY_PARAMS = 139_520;

function writeFolder(name: string, files: Record<string, string | Uint8Array>): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(dir, file), content);
  return dir;
}

test.beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'pact-model-folder-'));
  const tensors = [...listQwen3ParamShapes(TINY)].map(([name, shape]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const isNorm = name.endsWith('norm.weight');
    return { name, shape, data: Float32Array.from({ length: n }, (_, i) => (isNorm ? 1 : 0.02 * Math.sin(i + 1))) };
  });
  const prunedVocab = JSON.parse(readFileSync(path.join(WARM_START, 'pruned_vocab.json'), 'utf8'));
  writeFolder('tiny-e2e', { ...saveQwen3Folder({ config: TINY, tensors, prunedVocab }) });
  const warmConfig = JSON.parse(readFileSync(path.join(WARM_START, 'config.json'), 'utf8'));
  writeFolder('llama-like', {
    'config.json': JSON.stringify({ ...warmConfig, model_type: 'llama' }),
    'model.safetensors': readFileSync(path.join(WARM_START, 'model.safetensors')),
  });
  writeFolder('config-only', { 'config.json': JSON.stringify(warmConfig) });
  writeFolder('bad-field', {
    'config.json': JSON.stringify({ ...warmConfig, num_key_value_heads: 3 }),
    'model.safetensors': readFileSync(path.join(WARM_START, 'model.safetensors')),
  });
});

test.afterAll(() => rmSync(root, { recursive: true, force: true }));

async function pick(page: Page, dir: string) {
  await page.getByTestId('run-setup').getByTestId('model-folder-input').setInputFiles(dir);
}

test('a folder that is not a Qwen3 folder is refused, naming the file and the field; a good one shows its shape', async ({
  page,
}) => {
  await page.goto('/');
  const picker = page.getByTestId('run-setup').getByTestId('model-folder');
  await expect(picker).toBeVisible();

  await pick(page, path.join(root, 'llama-like'));
  await expect(picker.getByTestId('model-folder-error')).toContainText(
    'Not usable as the model: config.json: model_type must be "qwen3" (found "llama")',
  );
  await expect(picker.getByTestId('model-folder-summary')).toHaveCount(0);

  await pick(page, path.join(root, 'config-only'));
  await expect(picker.getByTestId('model-folder-error')).toContainText(
    'not a Qwen3 folder: it has neither model.safetensors nor model.safetensors.index.json (found: config.json)',
  );

  await pick(page, path.join(root, 'bad-field'));
  await expect(picker.getByTestId('model-folder-error')).toContainText(
    'config.json field "num_key_value_heads": 3 must divide num_attention_heads (4)',
  );

  // The shipped warm start is a Qwen3 folder: 4 layers, hidden 192, pruned vocabulary of 1,022.
  await pick(page, WARM_START);
  await expect(picker.getByTestId('model-folder-error')).toHaveCount(0);
  await expect(picker.getByTestId('model-folder-name')).toHaveText('warm-start');
  // 1,820,352 parameters (counted by hand in src/ui/modelFolder.test.ts)
  await expect(picker.getByTestId('model-folder-shape')).toHaveText(
    '4 layers · hidden 192 · vocab 1,022 · 1.82 M parameters',
  );
  await expect(picker.getByTestId('model-folder-vocab')).toContainText('pruned: 1,022 kept Qwen3 tokens');
  await expect(picker.getByTestId('model-folder-weights')).toContainText('1 file, 6.95 MiB, F32'); // 7,286,280 B / 2^20 = 6.949 MiB
  await picker.scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/model-folder.png' });

  await picker.getByTestId('model-folder-clear').click();
  await expect(picker.getByTestId('model-folder-summary')).toHaveCount(0);

  await page.setViewportSize({ width: 390, height: 844 });
  await pick(page, path.join(root, 'llama-like'));
  await expect(picker.getByTestId('model-folder-error')).toBeVisible();
  await picker.scrollIntoViewIfNeeded();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: 'e2e/screenshots/model-folder-error-390.png' });
});

test("Train from a picked folder: the worker builds the folder's model and trains a step; the Device panel shows memory", async ({
  page,
}) => {
  test.setTimeout(600_000);
  await page.goto(tinyRunUrl({ steps: '1', K: '2', batch: '1', miniBatch: '1', backend: 'wasm' }));
  const panel = page.getByTestId('run-setup');
  await pick(page, path.join(root, 'tiny-e2e'));
  await expect(panel.getByTestId('model-folder-shape')).toHaveText(
    '2 layers · hidden 64 · vocab 1,022 · 139,520 parameters',
  );
  await panel.getByTestId('btn-train').click();
  const progress = panel.getByTestId('train-progress');
  await expect
    .poll(
      async () =>
        (await panel.getByTestId('start-error').count()) > 0 ? 'error' : await progress.getAttribute('data-phase'),
      { timeout: 120_000 },
    )
    .not.toBe('starting');
  expect(
    (await panel.getByTestId('start-error').count()) > 0 ? await panel.getByTestId('start-error').innerText() : '',
  ).toBe('');

  // The worker built the folder's model: its parameter count, not the warm start's 1,820,352.
  await expect(page.getByTestId('device-model')).toHaveText(
    `folder:tiny-e2e · ${TINY_PARAMS.toLocaleString('en-US')} parameters`,
  );
  await expect(progress).toHaveAttribute('data-phase', 'finished', { timeout: 300_000 });
  // tf.memory() from the worker's progress events: bytes with a unit, the tensor count, the backend.
  await expect(page.getByTestId('device-memory')).toContainText(
    /^\s*\d+(\.\d+)? (KiB|MiB|GiB) in [\d,]+ tensors? \(wasm\)/,
  );
  await expect(page.getByTestId('device-memory')).toContainText('(last reading of the run)');
  await page.getByTestId('device-memory').scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/device-memory.png' });
});
