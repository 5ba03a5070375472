/**
 * scripts/reference/pretrain_torch.py (the warm start's SFT on a GPU) against this
 * project's tfjs objective: the PyTorch trainer's logged loss, for weights it saved, must
 * equal warmStart/ computeSftLoss of the same weights on the same row, read through the
 * same packSftRows bytes and the app's own safetensors loader; and a run cut into pieces
 * (--time-limit, --until, --resume) must equal one uninterrupted run bit for bit. Runs only
 * where a python3 with torch is installed (Debian's python3-torch); skipped with the reason
 * otherwise.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { selectBackend } from '../../model/backend';
import { Qwen3Model, type Qwen3Config } from '../../model/qwen3/index';
import type { HostTensor } from '../../model/qwen3/model';
import { formatQwen3ConfigJson, loadQwen3Folder } from '../../model/weights/qwen3Folder';
import { createTinyQwen3Config } from '../../model/weights/testFolders';
import { findTorchPython } from '../../model/torchPython';
import { computeSftLoss, packSftRows, type SftTargetRow } from './index';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SCRIPT = path.join(REPO, 'scripts/reference/pretrain_torch.py');

// Two layers, so the gradient passes through a whole decoder layer into another.
const TINY: Qwen3Config = createTinyQwen3Config({ vocab_size: 13, num_hidden_layers: 2, initializer_range: 0.05 });

const torch = findTorchPython();

beforeAll(async () => {
  await selectBackend('cpu');
});

describe.skipIf(!torch.python)(
  `pretrain_torch.py ${torch.python ? `(${torch.python})` : `(skipped: ${torch.reason})`}`,
  () => {
    it('logs, for the weights it saved after one AdamW step, the loss that computeSftLoss gives them', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'pact-pretrain-torch-'));
      const row: SftTargetRow = { ids: [1, 4, 2, 9, 3, 12, 5, 7], targetMask: [0, 1, 1, 0, 1, 1, 1] };
      writeFileSync(path.join(dir, 'config.json'), formatQwen3ConfigJson(TINY));
      writeFileSync(path.join(dir, 'rows.bin.gz'), gzipSync(packSftRows([row])));
      writeFileSync(path.join(dir, 'rows.json'), JSON.stringify({ preset: 'tiny', maxSeqLen: 64 }));
      const out = path.join(dir, 'out');
      // One row, so every batch is that row: the loss logged at step 2 is the loss of the
      // weights saved after step 1 (--save 1).
      const r = spawnSync(
        torch.python!,
        [
          SCRIPT,
          '--data',
          dir,
          '--out',
          out,
          '--steps',
          '2',
          '--batch',
          '1',
          '--lr',
          '0.05',
          '--warmup',
          '1',
          '--save',
          '1',
          '--log-every',
          '1',
          '--device',
          'cpu',
        ],
        { encoding: 'utf8' },
      );
      expect(r.status, r.stderr).toBe(0);
      const log = JSON.parse(readFileSync(path.join(out, 'train_log.json'), 'utf8')) as {
        losses: { step: number; loss: number }[];
      };
      expect(log.losses.map((l) => l.step)).toEqual([1, 2]);
      // Step 1 starts from N(0, 0.05²) weights: logits near 0, so the loss is near ln 13 = 2.565.
      expect(Math.abs(log.losses[0].loss - Math.log(13))).toBeLessThan(0.1);

      const files = new Map<string, Uint8Array>([
        ['config.json', readFileSync(path.join(dir, 'config.json'))],
        ['model.safetensors', readFileSync(path.join(out, 'model-step1.safetensors'))],
      ]);
      const folder = await loadQwen3Folder({
        listFiles: async () => [...files.keys()],
        readFile: async (n) => files.get(n)!,
      });
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

    it("computes a batch of unequal rows lean (sorted micro-batches, causal-only attention, LM head on targets) to the reference forward's loss and gradient", () => {
      // Rows of 2 to 300 tokens (300 > one attention block of 256), one drawn twice, micro-batches
      // of at most 40 padded tokens (several groups, the 300-token row alone); the reference pads
      // the whole batch to 300 and masks causal + padding additively over full logits.
      const check = `
import sys, json, numpy as np, torch
sys.path.insert(0, ${JSON.stringify(path.dirname(SCRIPT))})
import pretrain_torch as pt
cfg = ${JSON.stringify(TINY).replace(/true/g, 'True').replace(/false/g, 'False')}
rng = np.random.default_rng(3)
rows = [(rng.integers(0, cfg["vocab_size"], size=L).astype(np.int64), (rng.random(L) < 0.6).astype(np.float32))
        for L in [5, 9, 17, 300, 33, 2, 64, 8]]
picks = np.array([0, 3, 1, 3, 2, 4, 6, 7, 5])
model = pt.ref.Qwen3ForCausalLM(cfg)
pt.init_weights(model, 0.2, torch.Generator().manual_seed(3))
cpu = torch.device("cpu")
ref_loss = pt.reference_batch_loss(model, rows, picks, cpu)
ref_loss.backward()
g_ref = {n: p.grad.clone() for n, p in model.named_parameters()}
model.zero_grad(set_to_none=True)
lean = pt.lean_batch_loss(model, rows, picks, cpu, max_tokens=40)
groups = pt.plan_micro_batches([len(rows[i][0]) for i in picks], 40)
grad_err = max(float((p.grad - g_ref[n]).abs().max() / g_ref[n].abs().max()) for n, p in model.named_parameters())
print(json.dumps({"ref": float(ref_loss), "lean": lean, "grad_err": grad_err, "groups": [[int(picks[g]) for g in grp] for grp in groups]}))
`;
      const r = spawnSync(torch.python!, ['-c', check], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { ref: number; lean: number; grad_err: number; groups: number[][] };
      expect(out.groups.length).toBeGreaterThan(2);
      expect(out.groups.flat().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 3, 4, 5, 6, 7]);
      expect(out.groups).toContainEqual([3]); // 300 tokens: alone
      expect(Math.abs(out.lean - out.ref)).toBeLessThan(1e-5);
      expect(out.grad_err).toBeLessThan(1e-4);
    }, 120_000);

    it('a warm restart (--restart-from) starts from the file at step N with a fresh AdamW and a linear re-warm-up', () => {
      // One row, so every batch is that row: the restart's first loss is the loss of the weights
      // it loaded, which the straight run logged at the same step (the loss precedes the update).
      const dir = mkdtempSync(path.join(tmpdir(), 'pact-pretrain-restart-'));
      const row: SftTargetRow = { ids: [1, 4, 2, 9, 3, 12, 5, 7], targetMask: [0, 1, 1, 0, 1, 1, 1] };
      writeFileSync(path.join(dir, 'config.json'), formatQwen3ConfigJson(TINY));
      writeFileSync(path.join(dir, 'rows.bin.gz'), gzipSync(packSftRows([row])));
      // What --assemble copies into the folder's record (npm run pretrain -- --export-rows writes these).
      const meta = { trainTasks: 1, trainWorlds: 1, categories: [], vocabTasks: 0, keptTokens: 13, gitCommit: 'test' };
      writeFileSync(path.join(dir, 'rows.json'), JSON.stringify({ preset: 'tiny', maxSeqLen: 64, ...meta }));
      writeFileSync(path.join(dir, 'pruned_vocab.json'), '{}');
      const schedule = ['--steps', '8', '--batch', '1', '--lr', '0.05', '--warmup', '1', '--log-every', '1'];
      const train = (out: string, ...extra: string[]) => {
        const args = [SCRIPT, '--data', dir, '--out', out, ...schedule, '--device', 'cpu', '--threads', '1', ...extra];
        const r = spawnSync(torch.python!, args, {
          encoding: 'utf8',
          env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
        });
        expect(r.status, r.stdout + r.stderr).toBe(0);
      };
      const straight = path.join(dir, 'straight');
      const restarted = path.join(dir, 'restarted');
      train(straight, '--until', '5', '--save', '3');
      train(
        restarted,
        '--until',
        '5',
        '--restart-from',
        path.join(straight, 'model-step3.safetensors'),
        '--restart-step',
        '3',
        '--restart-warmup',
        '4',
      );
      type Log = { losses: { step: number; loss: number; lr: number }[]; restart?: unknown };
      const readLog = (out: string) => JSON.parse(readFileSync(path.join(out, 'train_log.json'), 'utf8')) as Log;
      const a = readLog(straight);
      const b = readLog(restarted);
      expect(b.restart).toEqual({ from: 'model-step3.safetensors', step: 3, warmup: 4 });
      expect(b.losses.map((l) => l.step)).toEqual([4, 5]);
      const at = (log: Log, step: number) => log.losses.find((l) => l.step === step)!;
      expect(at(b, 4).loss).toBe(at(a, 4).loss); // the same weights, bit for bit, on the same row
      // Re-warm-up: the schedule's lr times 1/4, then 2/4.
      expect(at(b, 4).lr).toBeCloseTo(at(a, 4).lr / 4, 15);
      expect(at(b, 5).lr).toBeCloseTo(at(a, 5).lr / 2, 15);
      // A fresh AdamW at a quarter of the lr: the update differs from the straight run's.
      expect(at(b, 5).loss).not.toBe(at(a, 5).loss);
      // The folder it assembles says where its weights came from.
      const r = spawnSync(torch.python!, [SCRIPT, '--data', dir, '--out', restarted, '--assemble', '5'], {
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      const info = JSON.parse(readFileSync(path.join(restarted, 'warm-start-step5', 'warm_start.json'), 'utf8')) as {
        trainer: { restart?: unknown };
      };
      expect(info.trainer.restart).toEqual({ from: 'model-step3.safetensors', step: 3, warmup: 4 });
    }, 120_000);
    it('resumes bit for bit: 1 step (time limit) + resume to step 3 (--until) + resume to 6 equals 6 steps straight', () => {
      // Rows of unequal length, batches of 3 drawn with replacement: the sampler's state matters.
      // Logged every 2 steps, so the window of step 4 (steps 3 and 4) spans the second resume.
      const dir = mkdtempSync(path.join(tmpdir(), 'pact-pretrain-resume-'));
      const rows: SftTargetRow[] = [5, 9, 17, 33, 12, 26].map((n, r) => ({
        ids: Array.from({ length: n }, (_, t) => (t * 7 + r * 3 + 1) % TINY.vocab_size),
        targetMask: Array.from({ length: n - 1 }, (_, t) => ((t + r) % 3 === 0 ? 0 : 1)),
      }));
      writeFileSync(path.join(dir, 'config.json'), formatQwen3ConfigJson(TINY));
      writeFileSync(path.join(dir, 'rows.bin.gz'), gzipSync(packSftRows(rows)));
      writeFileSync(path.join(dir, 'rows.json'), JSON.stringify({ preset: 'tiny', maxSeqLen: 64 }));
      const schedule = ['--steps', '6', '--batch', '3', '--lr', '0.05', '--warmup', '2', '--log-every', '2'];
      const train = (out: string, ...extra: string[]) => {
        const args = [SCRIPT, '--data', dir, '--out', out, ...schedule, '--device', 'cpu', '--threads', '1', ...extra];
        const r = spawnSync(torch.python!, args, {
          encoding: 'utf8',
          env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
        });
        return { status: r.status, output: r.stdout + r.stderr };
      };
      const straight = path.join(dir, 'straight');
      const pieces = path.join(dir, 'pieces');
      for (const [out, extra] of [
        [straight, []],
        [pieces, ['--time-limit', '0']],
        [pieces, ['--resume', '--until', '3']],
        [pieces, ['--resume']],
      ] as const) {
        const r = train(out, ...extra);
        expect(r.status, r.output).toBe(0);
      }
      type Log = {
        step: number;
        losses: { step: number; loss: number; grad_norm: number; lr: number; tokens: number }[];
        pieces: { from_step: number; to_step: number }[];
      };
      const readLog = (out: string) => JSON.parse(readFileSync(path.join(out, 'train_log.json'), 'utf8')) as Log;
      const numbers = (log: Log) =>
        log.losses.map(({ step, loss, grad_norm, lr, tokens }) => [step, loss, grad_norm, lr, tokens]);
      const a = readLog(straight);
      const b = readLog(pieces);
      expect(b.pieces.map((p) => [p.from_step, p.to_step])).toEqual([
        [0, 1],
        [1, 3],
        [3, 6],
      ]);
      expect(a.losses.map((l) => l.step)).toEqual([1, 2, 4, 6]);
      expect(b.step).toBe(6);
      expect(numbers(b)).toEqual(numbers(a)); // exact: JSON keeps every bit of a float64
      const weights = (out: string) => readFileSync(path.join(out, 'model-step6.safetensors'));
      expect(weights(pieces).equals(weights(straight))).toBe(true);
      // AdamW's moments and step, and the sampler, at the end.
      const compare = `
import sys, json, torch
a, b = (torch.load(p, weights_only=False) for p in sys.argv[1:3])
opt = all(torch.equal(x[k], b["optimizer"]["state"][i][k]) for i, x in a["optimizer"]["state"].items() for k in x)
print(json.dumps({"optimizer": opt, "model": all(torch.equal(v, b["model"][k]) for k, v in a["model"].items()),
                  "sampler": a["pick_rng"] == b["pick_rng"], "step": [a["step"], b["step"]]}))
`;
      const r = spawnSync(
        torch.python!,
        ['-c', compare, path.join(straight, 'checkpoint.pt'), path.join(pieces, 'checkpoint.pt')],
        { encoding: 'utf8' },
      );
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ optimizer: true, model: true, sampler: true, step: [6, 6] });

      // Another schedule, or a fresh start over a checkpoint, is refused.
      const other = train(pieces, '--resume', '--lr', '0.01');
      expect(other.status).not.toBe(0);
      expect(other.output).toContain('--lr 0.01 (checkpoint: 0.05)');
      const fresh = train(pieces);
      expect(fresh.status).not.toBe(0);
      expect(fresh.output).toContain('pass --resume to continue it');
    }, 180_000);
  },
);
