#!/usr/bin/env python3
"""The warm start's SFT on a GPU, with PyTorch: the same objective and schedule as
`npm run pretrain` (src/recipes/warmStart.ts runWarmStartSft), on the rows that
`npm run pretrain -- --export-rows DIR` wrote, so the shipped qwen3-nano can see far more
expert episodes than 2 CPU cores allow.

The model is the project's independent PyTorch Qwen3 (qwen3_reference.py, the one the
TypeScript model is tested against, fixtures in src/model/qwen3/fixtures), run in float32
(bf16 autocast on CUDA). The weights it writes are HF-named float32 safetensors, which the
app and `npm run pretrain -- --init DIR --steps 0` load.

Objective (warmStart.ts, PACT Eq. sft-mask with m(s) = 1 on every policy-written token):
  L = − Σ_{b,t} m[b,t] · log π_θ(x[b,t+1] | x[b,≤t]) / Σ_{b,t} m[b,t]
AdamW β = (0.9, 0.95), ε = 1e-8, decoupled weight decay on matrices only (norms excluded,
isNormOrBias), gradient clipping by global norm, linear warm-up then cosine to
min_lr_ratio · lr (lrSchedule.ts computeLearningRate). Batches are drawn uniformly with
replacement from the rows, from a generator seeded by --seed. Initial weights: N(0, σ²)
with σ = initializer_range for matrices and the embedding, 1 for norms (HF Qwen3's
_init_weights).

Rows (warmStart.ts packSftRows), little-endian: u32 n, n × u32 lengths, then each row's
tokens as u16 `id | trained << 15` (trained = the token is a target).

Usage:
  python3 scripts/reference/pretrain_torch.py --data DIR --out DIR [--steps 4000] [--batch 64]
      [--lr 2e-3] [--warmup 100] [--min-lr-ratio 0.2] [--weight-decay 0.01] [--clip 1]
      [--seed 1] [--save 250,500,...] [--time-limit SECONDS] [--device cuda|cpu] [--log-every 50]
Writes OUT/model-step{N}.safetensors at each --save step (and at the last step or when
the time limit ends training), and OUT/train_log.json (options, losses, timings).

  python3 scripts/reference/pretrain_torch.py --data DIR --out DIR --assemble N
makes OUT/warm-start-step{N}/ a warm-start folder (config.json, model.safetensors,
pruned_vocab.json and warm_start.json, its training record) from what training wrote;
`npm run pretrain -- --init OUT/warm-start-step{N} --steps 0 --out public/warm-start`
then evaluates it on held-out tasks with the app's own tfjs model and ships it.
"""
import argparse
import gzip
import json
import math
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qwen3_reference as ref  # noqa: E402

ref.DTYPE = torch.float32


def read_rows(path):
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    n = int.from_bytes(raw[:4], "little")
    lengths = np.frombuffer(raw, dtype="<u4", count=n, offset=4).astype(np.int64)
    tokens = np.frombuffer(raw, dtype="<u2", offset=4 + 4 * n)
    if tokens.size != lengths.sum():
        raise SystemExit(f"{path}: {tokens.size} tokens but the lengths sum to {lengths.sum()}")
    ids = (tokens & 0x7FFF).astype(np.int64)
    trained = (tokens >> 15).astype(np.float32)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return [(ids[s : s + l], trained[s : s + l]) for s, l in zip(starts, lengths)]


def make_batch(rows, picks, device):
    T = max(len(rows[i][0]) for i in picks)
    ids = np.zeros((len(picks), T), dtype=np.int64)
    attn = np.zeros((len(picks), T), dtype=np.int64)
    target = np.zeros((len(picks), T - 1), dtype=np.float32)
    for b, i in enumerate(picks):
        x, m = rows[i]
        ids[b, : len(x)] = x
        attn[b, : len(x)] = 1
        target[b, : len(x) - 1] = m[1:]
    return (torch.from_numpy(ids).to(device), torch.from_numpy(attn).to(device), torch.from_numpy(target).to(device))


def learning_rate(step, peak, warmup, total, min_ratio):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def init_weights(model, std, gen):
    with torch.no_grad():
        for _, p in model.named_parameters():
            if p.dim() == 1:
                p.fill_(1.0)
            else:
                p.copy_(torch.randn(p.shape, generator=gen, device="cpu") * std)


def weights_for_file(model, config):
    out = {}
    for name, p in model.state_dict().items():
        if name == "lm_head.weight" and config["tie_word_embeddings"]:
            continue
        if name.startswith("model.") or name == "lm_head.weight":
            out[name] = p.detach().float().cpu()
    return out


def assemble(args):
    """A warm-start folder from checkpoint --assemble N (warm_start.json as warmStart.ts WarmStartInfo)."""
    import shutil

    with open(os.path.join(args.out, "train_log.json")) as f:
        log = json.load(f)
    step = args.assemble
    saved = [s for s in log["saved"] if s["step"] == step]
    if not saved:
        raise SystemExit(f"--assemble {step}: no checkpoint at that step; saved: {[s['step'] for s in log['saved']]}")
    folder = os.path.join(args.out, f"warm-start-step{step}")
    os.makedirs(folder, exist_ok=True)
    shutil.copyfile(os.path.join(args.out, saved[0]["file"]), os.path.join(folder, "model.safetensors"))
    for name in ("config.json", "pruned_vocab.json"):
        shutil.copyfile(os.path.join(args.data, name), os.path.join(folder, name))
    o, meta = log["options"], log["data"]
    upto = [l for l in log["losses"] if l["step"] <= step]
    info = {
        "preset": meta["preset"],
        "options": {"seed": o["seed"], "stage": 1, "steps": step, "batchSize": o["batch"], "maxSeqLen": meta["maxSeqLen"],
                    "lrPeak": o["lr"], "warmupSteps": o["warmup"], "minLrRatio": o["min_lr_ratio"],
                    "maxGradNorm": o["clip"], "weightDecay": o["weight_decay"]},
        "trainer": {"script": "scripts/reference/pretrain_torch.py", "torch": log["torch"], "device": log["device"],
                    "scheduledSteps": o["steps"], "bf16Autocast": log["device"] != "cpu"},
        "trainTasks": meta["trainTasks"],
        "trainWorlds": meta["trainWorlds"],
        "trainCategories": meta["categories"],
        "vocabTasks": meta["vocabTasks"],
        # search-teacher rows and the search episodes in the vocabulary (npm run pretrain --search-tasks):
        # `--init` of this folder rebuilds the vocabulary with vocabSearchTasks, so it must travel.
        **({"searchTasks": meta["searchTasks"]} if meta.get("searchTasks") else {}),
        **({"vocabSearchTasks": meta["vocabSearchTasks"]} if meta.get("vocabSearchTasks") else {}),
        "keptTokens": meta["keptTokens"],
        "finalLoss": upto[-1]["loss"],
        "lossStart": upto[0]["loss"],
        "lossEnd": upto[-1]["loss"],
        "lossCurve": [[l["step"], round(l["loss"], 4)] for l in upto],
        "trainSeconds": saved[0]["seconds"],
        "backend": "pytorch",
        "gitCommit": meta["gitCommit"],
    }
    with open(os.path.join(folder, "warm_start.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    print(f"wrote {folder}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--min-lr-ratio", type=float, default=0.2)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--save", default="")
    ap.add_argument("--time-limit", type=float, default=float("inf"))
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--assemble", type=int, default=None)
    ap.add_argument("--log-every", type=int, default=50)
    args = ap.parse_args()
    if args.assemble is not None:
        return assemble(args)
    t_start = time.time()

    with open(os.path.join(args.data, "config.json")) as f:
        config = json.load(f)
    with open(os.path.join(args.data, "rows.json")) as f:
        meta = json.load(f)
    rows = read_rows(os.path.join(args.data, "rows.bin.gz"))
    if len(rows) == 0:
        raise SystemExit("no rows")
    too_big = max(int(r[0].max()) for r in rows)
    if too_big >= config["vocab_size"]:
        raise SystemExit(f"a row holds id {too_big}, over config vocab_size {config['vocab_size']}")
    save_steps = sorted({int(s) for s in args.save.split(",") if s.strip()} | {args.steps})
    os.makedirs(args.out, exist_ok=True)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.set_default_device(device)  # the reference builds its causal mask with torch.ones
        torch.backends.cuda.matmul.allow_tf32 = True
    print(f"{len(rows)} rows, mean {np.mean([len(r[0]) for r in rows]):.0f} tokens; device {device}"
          f"{' (' + torch.cuda.get_device_name(device) + ')' if device.type == 'cuda' else ''}; torch {torch.__version__}", flush=True)

    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    model = ref.Qwen3ForCausalLM(config).to(device)
    init_weights(model, config.get("initializer_range", 0.02), gen)
    decay = [p for n, p in model.named_parameters() if p.dim() > 1]
    no_decay = [p for n, p in model.named_parameters() if p.dim() <= 1]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.95), eps=1e-8,
    )
    pick_rng = np.random.default_rng(args.seed)
    options = {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in vars(args).items()}  # valid JSON
    log = {"options": options, "data": meta, "rows": len(rows), "torch": torch.__version__,
           "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
           "losses": [], "saved": []}
    use_bf16 = device.type == "cuda"
    window = []
    step = 0
    for step in range(args.steps):
        picks = pick_rng.integers(0, len(rows), size=args.batch)
        ids, attn, target = make_batch(rows, picks, device)
        lr = learning_rate(step, args.lr, args.warmup, args.steps, args.min_lr_ratio)
        for g in opt.param_groups:
            g["lr"] = lr
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=use_bf16):
            logits = model(ids, attn, ref.position_ids_from_mask(attn))
        logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
        token_logp = logp.gather(-1, ids[:, 1:, None])[..., 0]
        loss = -(token_logp * target).sum() / target.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        window.append(float(loss))
        if (step + 1) % args.log_every == 0 or step == 0:
            mean = sum(window) / len(window)
            window = []
            elapsed = time.time() - t_start
            log["losses"].append({"step": step + 1, "loss": mean, "grad_norm": float(grad_norm), "lr": lr, "seconds": elapsed})
            print(f"step {step + 1}/{args.steps}  loss {mean:.4f}  grad_norm {float(grad_norm):.3f}  lr {lr:.2e}  {elapsed:.0f} s", flush=True)
        out_of_time = time.time() - t_start > args.time_limit
        if (step + 1) in save_steps or out_of_time or step + 1 == args.steps:
            path = os.path.join(args.out, f"model-step{step + 1}.safetensors")
            ref.write_safetensors(path, weights_for_file(model, config))
            log["saved"].append({"step": step + 1, "file": os.path.basename(path), "seconds": time.time() - t_start})
            with open(os.path.join(args.out, "train_log.json"), "w") as f:
                json.dump(log, f, indent=1)
        if out_of_time:
            print(f"time limit {args.time_limit} s reached at step {step + 1}", flush=True)
            break
    log["seconds"] = time.time() - t_start
    with open(os.path.join(args.out, "train_log.json"), "w") as f:
        json.dump(log, f, indent=1)
    print(f"done in {log['seconds']:.0f} s", flush=True)


if __name__ == "__main__":
    main()
