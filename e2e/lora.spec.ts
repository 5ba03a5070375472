/**
 * A LoRA run in the browser: `"model": {"lora": …}` in Run setup's config overrides trains
 * adapters in the worker on wasm (one tiny step from the shipped warm start), and its
 * checkpoint leaves the page as a .tar holding the adapters as PEFT writes them
 * (adapter_model.safetensors + adapter_config.json), the frozen base as
 * reference.safetensors and the merged policy as model.safetensors; the .tar imports back as
 * a new run.
 *
 * Checked against independent readings: the base in the .tar equals the shipped warm
 * start's weights bit for bit (the base did not move in the worker), and the merged
 * q_proj of layer 0 equals W + (α/r)·B·A recomputed here from the .tar's own tensors.
 */
import { test, expect } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTar } from '../src/storage/tar';
import { parseSafetensors } from '../src/model/weights/safetensors';
import { readPageDb } from '../scripts/pageDb';
import { tinyRunUrl } from './tinyRun';

const HERE = dirname(fileURLToPath(import.meta.url));
const LORA = { rank: 2, alpha: 8, targets: ['q', 'v'] };

test('a LoRA run trains adapters in the worker and exports them with the frozen base and the merged policy', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await page.goto(
    tinyRunUrl({ steps: '1', K: '2', batch: '1', miniBatch: '1', q: '0', backend: 'wasm' }, { model: { lora: LORA } }),
  ); // q = 0, L^h + SFT: a gradient even when the 2 rewards tie
  const setup = page.getByTestId('run-setup');
  await expect(setup.getByTestId('setup-other-errors')).toHaveCount(0);
  await setup.getByTestId('btn-train').click();
  await expect
    .poll(async () => ((await readPageDb(page)) as unknown as { runs: { status: string }[] }).runs[0]?.status, {
      timeout: 240_000,
      intervals: [2000],
    })
    .toBe('finished');

  const panel = page.getByTestId('runs-panel');
  await panel.getByTestId('runs-refresh').click();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    panel.getByTestId('export-checkpoint').first().click(),
  ]);
  const entries = readTar(new Uint8Array(readFileSync((await download.path())!)));
  const file = (name: string) => entries.find((e) => e.name.endsWith(`/${name}`))?.data;
  for (const name of [
    'model.safetensors',
    'reference.safetensors',
    'adapter_model.safetensors',
    'adapter_config.json',
    'optimizer.safetensors',
    'trainer_state.json',
  ]) {
    expect(file(name), name).toBeDefined();
  }
  const adapterConfig = JSON.parse(new TextDecoder().decode(file('adapter_config.json')));
  expect([adapterConfig.peft_type, adapterConfig.r, adapterConfig.lora_alpha, adapterConfig.target_modules]).toEqual([
    'LORA',
    2,
    8,
    ['q_proj', 'v_proj'],
  ]);
  const state = JSON.parse(new TextDecoder().decode(file('trainer_state.json')));
  expect([state.step, state.config.model.lora, state.config.pact.anchorProb]).toEqual([1, LORA, 0]);

  // The frozen base = the shipped warm start, bit for bit.
  const warm = parseSafetensors(
    new Uint8Array(readFileSync(resolve(HERE, '../public/warm-start/model.safetensors'))),
  ).tensors;
  const base = parseSafetensors(file('reference.safetensors')!).tensors;
  expect([...base.keys()].sort()).toEqual([...warm.keys()].sort());
  for (const [name, t] of warm)
    expect(
      Buffer.from(base.get(name)!.data.buffer as ArrayBuffer).equals(Buffer.from(t.data.buffer as ArrayBuffer)),
      name,
    ).toBe(true);

  // Only A and B were optimised, and the merged weight is W + (α/r)·B·A.
  const adapters = parseSafetensors(file('adapter_model.safetensors')!).tensors;
  const layers = JSON.parse(readFileSync(resolve(HERE, '../public/warm-start/config.json'), 'utf8'))
    .num_hidden_layers as number;
  expect(adapters.size).toBe(2 * 2 * layers); // A and B of q and v in every layer
  const optimizerParams = new Set(
    [...parseSafetensors(file('optimizer.safetensors')!).tensors.keys()].map((n) =>
      n.replace(/\.(exp_avg|exp_avg_sq|step)$/, ''),
    ),
  );
  expect(optimizerParams).toEqual(new Set([...adapters.keys()].map((n) => n.replace(/^base_model\.model\./, ''))));
  const stem = 'model.layers.0.self_attn.q_proj';
  const A = adapters.get(`base_model.model.${stem}.lora_A.weight`)!;
  const B = adapters.get(`base_model.model.${stem}.lora_B.weight`)!;
  const W = warm.get(`${stem}.weight`)!;
  const merged = parseSafetensors(file('model.safetensors')!).tensors.get(`${stem}.weight`)!;
  const [outDim, inDim] = W.shape;
  let moved = 0;
  for (let o = 0; o < outDim; o += 7) {
    for (let i = 0; i < inDim; i += 5) {
      const ba = B.data[o * 2] * A.data[i] + B.data[o * 2 + 1] * A.data[inDim + i];
      const want = W.data[o * inDim + i] + (LORA.alpha / LORA.rank) * ba;
      expect(Math.abs(merged.data[o * inDim + i] - want)).toBeLessThan(1e-6);
      if (ba !== 0) moved++;
    }
  }
  expect(moved, 'the adapters moved in one step').toBeGreaterThan(0);

  // The .tar comes back in as a new run (readCheckpointFolder reads the adapter files).
  const tarName = download.suggestedFilename();
  const [chooser] = await Promise.all([
    page.waitForEvent('filechooser'),
    panel.getByTestId('import-checkpoint').click(),
  ]);
  await chooser.setFiles([
    { name: tarName, mimeType: 'application/x-tar', buffer: readFileSync((await download.path())!) },
  ]);
  await expect(panel.getByTestId('ckpt-import-message')).toContainText(`Imported ${tarName} as run`, {
    timeout: 60_000,
  });
  await expect(panel.getByTestId('runs-table').locator('tbody tr')).toHaveCount(2);
});
