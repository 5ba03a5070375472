/**
 * scripts/reference/pretrain_torch.py (the warm start's SFT on a GPU) against this
 * project's tfjs objective: the PyTorch trainer's logged loss, for weights it saved, must
 * equal warmStart.ts computeSftLoss of the same weights on the same row, read through the
 * same packSftRows bytes and the app's own safetensors loader. Runs only where a python3
 * with torch is installed (Debian's python3-torch); skipped with the reason otherwise.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { selectBackend } from '../model/backend';
import { Qwen3Model, type Qwen3Config } from '../model/qwen3/index';
import type { HostTensor } from '../model/qwen3/model';
import { formatQwen3ConfigJson, loadQwen3Folder } from '../model/weights/qwen3Folder';
import { createTinyQwen3Config } from '../model/weights/testFolders';
import { findTorchPython } from '../cli/commands/bench';
import { computeSftLoss, packSftRows, type SftRow } from './warmStart';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = path.join(REPO, 'scripts/reference/pretrain_torch.py');

// Two layers, so the gradient passes through a whole decoder layer into another.
const TINY: Qwen3Config = createTinyQwen3Config({ vocab_size: 13, num_hidden_layers: 2, initializer_range: 0.05 });

const torch = findTorchPython();

beforeAll(async () => {
  await selectBackend('cpu');
});

describe.skipIf(!torch.python)(`pretrain_torch.py ${torch.python ? `(${torch.python})` : `(skipped: ${torch.reason})`}`, () => {
  it('logs, for the weights it saved after one AdamW step, the loss that computeSftLoss gives them', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pact-pretrain-torch-'));
    const row: SftRow = { ids: [1, 4, 2, 9, 3, 12, 5, 7], targetMask: [0, 1, 1, 0, 1, 1, 1] };
    writeFileSync(path.join(dir, 'config.json'), formatQwen3ConfigJson(TINY));
    writeFileSync(path.join(dir, 'rows.bin.gz'), gzipSync(packSftRows([row])));
    writeFileSync(path.join(dir, 'rows.json'), JSON.stringify({ preset: 'tiny', maxSeqLen: 64 }));
    const out = path.join(dir, 'out');
    // One row, so every batch is that row: the loss logged at step 2 is the loss of the
    // weights saved after step 1 (--save 1).
    const r = spawnSync(
      torch.python!,
      [SCRIPT, '--data', dir, '--out', out, '--steps', '2', '--batch', '1', '--lr', '0.05', '--warmup', '1', '--save', '1', '--log-every', '1', '--device', 'cpu'],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    const log = JSON.parse(readFileSync(path.join(out, 'train_log.json'), 'utf8')) as { losses: { step: number; loss: number }[] };
    expect(log.losses.map((l) => l.step)).toEqual([1, 2]);
    // Step 1 starts from N(0, 0.05²) weights: logits near 0, so the loss is near ln 13 = 2.565.
    expect(Math.abs(log.losses[0].loss - Math.log(13))).toBeLessThan(0.1);

    const files = new Map<string, Uint8Array>([
      ['config.json', readFileSync(path.join(dir, 'config.json'))],
      ['model.safetensors', readFileSync(path.join(out, 'model-step1.safetensors'))],
    ]);
    const folder = await loadQwen3Folder({ listFiles: async () => [...files.keys()], readFile: async (n) => files.get(n)! });
    const tensors = new Map<string, HostTensor>();
    for (const [name, t] of folder.tensors) tensors.set(name, { shape: t.shape, data: t.data });
    const model = Qwen3Model.fromTensors(folder.config, tensors);
    const loss = computeSftLoss(model, [row]);
    const tfjsLoss = (await loss.data())[0];
    loss.dispose();
    model.dispose();
    expect(Math.abs(tfjsLoss - log.losses[1].loss)).toBeLessThan(1e-4);
    // The step changed the weights: the step-2 loss is not the step-1 loss.
    expect(Math.abs(log.losses[1].loss - log.losses[0].loss)).toBeGreaterThan(1e-3);
  }, 120_000);
});
