#!/usr/bin/env python3
"""The warm start's SFT on a GPU, with PyTorch: the same objective and schedule as
`npm run pretrain` (src/recipes/warmStart/index.ts runWarmStartSft), on the rows that
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

The step is computed lean, to the same loss and gradient as the reference forward on the
batch padded to its longest row (pretrainTorch.test.ts checks both): the drawn rows are
sorted by length and cut into micro-batches of at most --micro-tokens padded tokens (each
padded to its own longest row; gradients accumulate, each micro-batch's summed loss divided
by the whole batch's target count); attention is causal only (rows are right-padded, so no
real query sees a padding key; SDPA with is_causal where torch has it, else causal blocks of
256 queries that skip the keys above the diagonal); the LM head and the cross-entropy run on
the target positions only. Timings (wall and process CPU seconds, real tokens/s) are logged.

Usage:
  python3 scripts/reference/pretrain_torch.py --data DIR --out DIR [--steps 4000] [--batch 64]
      [--lr 2e-3] [--warmup 100] [--min-lr-ratio 0.2] [--weight-decay 0.01] [--clip 1]
      [--seed 1] [--save 250,500,...] [--until N] [--time-limit SECONDS] [--resume]
      [--device cuda|cpu] [--log-every 50] [--threads N] [--blas-threads N] [--micro-tokens N]
On CPU keep torch at 1 thread and give the cores to OpenBLAS (its default: all of them): on
the 2 busy development cores that ran 2.3× the 1-thread speed, and 2 torch threads 2 to 10× slower.
Writes OUT/model-step{N}.safetensors at each --save step (and at the last step or when
the time limit ends training), and OUT/train_log.json (options, losses, timings).
--until N stops after step N while the learning rate still follows the --steps schedule (the
shipped warm start is step 500 of a 6,000-step schedule).

Resume. At each --save step, at --until and when --time-limit ends training, OUT/checkpoint.pt
is (re)written, atomically: the weights, AdamW's state, the step, the row sampler's state, the
loss log so far and the partial logging window, with the SHA-256 of the rows and the schedule's
options. `--resume` continues from it (a fresh start when OUT has none), so a run cut into
pieces by --time-limit logs the same losses and ends at the same weights, bit for bit, as one
uninterrupted run on the same machine and threads (pretrainTorch.test.ts checks it); on another
CPU or BLAS it continues the same training, not the same bits. The schedule (--steps, --batch,
--lr, --warmup, --min-lr-ratio, --weight-decay, --clip, --seed, --log-every) and the rows must
be those of the checkpoint; --until, --save, --time-limit, threads and device may change.
Where checkpoints live: work stops without warning on these machines and only committed files
survive, so OUT belongs in a committed folder (scripts/searchWarmStart.sh: checkpoints/
warm-start-search/, with the rows it trains on) and each piece ends with a commit of
checkpoint.pt, train_log.json and the --save steps' weights. Only the newest checkpoint.pt is
kept in the tree (it is overwritten). Its size for qwen3-nano: 4 bytes × 3 × parameters
(weights + two AdamW moments): 22 MB at the shipped 1,022-token vocabulary, 29 MB at the
4,096 tokens a vocabulary with search text reaches; each committed piece adds that blob to the
git history (about 3 pieces for the search warm start, ~90 MB), which we accept for a run that
must survive a machine change; the folder is removed once the warm start is shipped.

Warm restart. `--restart-from OUT/model-step{N}.safetensors --restart-step N [--restart-warmup W]`
continues the same schedule from step N with weights only, for a run whose checkpoint.pt was not
kept (the search warm start's first GPU piece, whose checkpoint exceeded what the lent machine
returns): AdamW's moments start at zero, so the lr ramps linearly from 1/W of the schedule's over
W steps; batches come from a generator seeded by (seed, N). Not bit-identical to an uninterrupted
run; train_log.json and the assembled warm_start.json record it (trainer.restart).

  python3 scripts/reference/pretrain_torch.py --data DIR --out DIR --assemble N
makes OUT/warm-start-step{N}/ a warm-start folder (config.json, model.safetensors,
pruned_vocab.json and warm_start.json, its training record) from what training wrote;
`npm run pretrain -- --init OUT/warm-start-step{N} --steps 0 --out public/warm-start`
then evaluates it on held-out tasks with the app's own tfjs model and ships it.
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import openblas_core  # noqa: E402

openblas_core.ensure_openblas_kernel()  # before numpy or torch loads OpenBLAS (openblas_core.py's header)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import bench_torch  # noqa: E402
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


def plan_micro_batches(lengths, max_tokens):
    """Indices into `lengths`, sorted by length and cut into groups whose padded size
    (rows × longest row) stays within max_tokens (a longer row goes alone)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups, group = [], []
    for i in order:  # ascending: the row added is the group's longest
        if group and (len(group) + 1) * lengths[i] > max_tokens:
            groups.append(group)
            group = []
        group.append(i)
    if group:
        groups.append(group)
    return groups


def causal_attention(q, k, v, scaling, block=256):
    """Causal softmax(q kᵀ · scaling) v for q [b, nh, T, d] and k, v [b, nkv, T, d] (query heads
    g·rep … g·rep + rep − 1 share key head g, as repeat_kv pairs them) → [b, nh, T, d].
    torch ≥ 2.0: SDPA with is_causal (its default scale is d^-1/2 = scaling). Else, without
    copying k and v per query head: the rep query heads of a group stacked along the query
    axis, in blocks of `block` positions against the keys up to the block's end (the keys
    above the diagonal never computed beyond the block), the scale folded into q."""
    b, nh, T, d = q.shape
    nkv = k.shape[1]
    rep = nh // nkv
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, ref.repeat_kv(k, rep), ref.repeat_kv(v, rep), is_causal=True)
    q = (q * scaling).reshape(b, nkv, rep, T, d)
    k, v = k.contiguous(), v.contiguous()
    out = []
    for start in range(0, T, block):
        end = min(T, start + block)
        n = end - start
        qb = q[:, :, :, start:end].reshape(b, nkv, rep * n, d)  # row r·n + i: head g·rep + r, position start + i
        scores = torch.matmul(qb, k[:, :, :end].transpose(2, 3))  # [b, nkv, rep·n, end]
        above = torch.ones(n, end, dtype=torch.bool, device=q.device).triu(start + 1).repeat(rep, 1)  # key > query
        probs = torch.softmax(scores.masked_fill(above, float("-inf")), dim=-1)
        out.append(torch.matmul(probs, v[:, :, :end]).view(b, nkv, rep, n, d))
    return torch.cat(out, dim=3).reshape(b, nh, T, d)


def lean_hidden_states(model, ids):
    """The reference model's final hidden states [b, T, H] for right-padded ids [b, T], with its
    own modules and weights but causal-only attention (positions 0..T−1, as the reference gives
    a right-padded row's real tokens)."""
    m = model.model
    b, T = ids.shape
    h = m.embed_tokens(ids)
    cos, sin = m.rotary_emb(h, torch.arange(T, device=ids.device)[None])  # [1, T, d]
    for layer in m.layers:
        attn = layer.self_attn
        x = layer.input_layernorm(h)
        shape = (b, T, -1, attn.head_dim)
        q = attn.q_norm(attn.q_proj(x).view(shape)).transpose(1, 2)  # [b, nh, T, d]
        k = attn.k_norm(attn.k_proj(x).view(shape)).transpose(1, 2)  # [b, nkv, T, d]
        v = attn.v_proj(x).view(shape).transpose(1, 2)
        q, k = ref.apply_rotary_pos_emb(q, k, cos, sin)
        o = causal_attention(q, k, v, attn.scaling)  # [b, nh, T, d]
        h = h + attn.o_proj(o.transpose(1, 2).reshape(b, T, -1))
        h = h + layer.mlp(layer.post_attention_layernorm(h))
    return m.norm(h)


def make_lean_batch(rows, picks, device):
    """Right-padded ids [b, T] and the target flags [b, T−1] (target t predicts ids[t+1])."""
    T = max(len(rows[i][0]) for i in picks)
    ids = np.zeros((len(picks), T), dtype=np.int64)
    target = np.zeros((len(picks), T - 1), dtype=bool)
    for b, i in enumerate(picks):
        x, m = rows[i]
        ids[b, : len(x)] = x
        target[b, : len(x) - 1] = m[1:] > 0
    return torch.from_numpy(ids).to(device), torch.from_numpy(target).to(device)


def lean_batch_loss(model, rows, picks, device, max_tokens, use_bf16=False):
    """Accumulates into .grad the gradient of the batch's mean next-token loss over its target
    tokens (the header's objective) and returns that loss, micro-batch by micro-batch."""
    n_targets = max(1, int(sum(rows[i][1][1:].sum() for i in picks)))
    total = 0.0
    for group in plan_micro_batches([len(rows[i][0]) for i in picks], max_tokens):
        ids, target = make_lean_batch(rows, [picks[g] for g in group], device)
        if not bool(target.any()):
            continue
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=use_bf16):
            hidden = lean_hidden_states(model, ids)[:, :-1][target]  # [n, H]: target positions only
            logits = model.lm_head(hidden)  # [n, V]
        loss_sum = F.cross_entropy(logits.float(), ids[:, 1:][target], reduction="sum")
        (loss_sum / n_targets).backward()
        total += float(loss_sum)
    return total / n_targets


def reference_batch_loss(model, rows, picks, device):
    """The same loss through the reference forward on the batch padded to its longest row
    (additive causal + padding mask, full logits): what lean_batch_loss must equal."""
    ids, attn, target = make_batch(rows, picks, device)
    logits = model(ids, attn, ref.position_ids_from_mask(attn))
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    token_logp = logp.gather(-1, ids[:, 1:, None])[..., 0]
    return -(token_logp * target).sum() / target.sum().clamp(min=1)


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
                    "scheduledSteps": o["steps"], "bf16Autocast": log["device"] != "cpu",
                    # a warm restart (--restart-from): the weights it started from and where
                    **({"restart": log["restart"]} if log.get("restart") else {}),
                    # the --resume pieces that trained these weights (one for an uninterrupted run)
                    "pieces": [{**{k: p.get(k) for k in ("from_step", "to_step", "device", "threads")},
                                "to_step": min(p.get("to_step") or step, step)}
                               for p in log.get("pieces", []) if p["from_step"] < step]},
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


CHECKPOINT = "checkpoint.pt"
# Options that fix the training's numbers: a resumed run must have the checkpoint's.
SCHEDULE_OPTIONS = ("steps", "batch", "lr", "warmup", "min_lr_ratio", "weight_decay", "clip", "seed", "log_every")


def hash_rows(data_dir):
    """SHA-256 of the rows and their config (what a resumed run must train on)."""
    h = hashlib.sha256()
    for name in ("config.json", "rows.bin.gz"):
        with open(os.path.join(data_dir, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def save_checkpoint(out, state):
    """OUT/checkpoint.pt, written to a temporary file first so a kill mid-write keeps the last one."""
    path = os.path.join(out, CHECKPOINT)
    torch.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def load_checkpoint(out, args, rows_sha, device):
    """The checkpoint of OUT, checked against this run's rows and schedule; None when OUT has none."""
    path = os.path.join(out, CHECKPOINT)
    if not os.path.exists(path):
        if os.path.exists(os.path.join(out, "train_log.json")):
            raise SystemExit(f"--resume: {out} has a train_log.json but no {CHECKPOINT} (written by a run before --resume?)")
        return None
    # Our own file (its log and AdamW's settings are Python floats, which torch 1.13's weights-only loader refuses).
    ckpt = torch.load(path, map_location=device, weights_only=False)
    if ckpt["rows_sha256"] != rows_sha:
        raise SystemExit(f"--resume: the rows in --data differ from the ones {path} trained on (SHA-256 {ckpt['rows_sha256'][:12]}…)")
    differ = [f"--{k.replace('_', '-')} {getattr(args, k)} (checkpoint: {ckpt['schedule'][k]})"
              for k in SCHEDULE_OPTIONS if ckpt["schedule"][k] != getattr(args, k)]
    if differ:
        raise SystemExit(f"--resume: {path} was trained with another schedule: {', '.join(differ)}")
    return ckpt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--until", type=int, default=None, help="stop after this step (default --steps); the schedule still runs to --steps")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--min-lr-ratio", type=float, default=0.2)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--save", default="")
    ap.add_argument("--time-limit", type=float, default=float("inf"))
    ap.add_argument("--resume", action="store_true", help=f"continue from OUT/{CHECKPOINT} (a fresh start when there is none)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--assemble", type=int, default=None)
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--threads", type=int, default=None, help="torch's intra-op CPU threads; default: torch's")
    ap.add_argument("--blas-threads", type=int, default=None, help="OpenBLAS's own pool; default: --threads if given, else OpenBLAS's (all cores)")
    ap.add_argument("--restart-from", default=None,
                    help="warm restart: start from these weights (a model-step{N}.safetensors this script wrote) at "
                         "--restart-step N of the same schedule, with a fresh AdamW and --restart-warmup steps of linear "
                         "warm-up to the schedule's lr (for a run whose checkpoint.pt was not kept)")
    ap.add_argument("--restart-step", type=int, default=None)
    ap.add_argument("--restart-warmup", type=int, default=50)
    ap.add_argument("--micro-tokens", type=int, default=None,
                    help="padded tokens per micro-batch; default 2048 on CPU (measured best: cache-sized), 32768 on CUDA")
    args = ap.parse_args()
    if args.assemble is not None:
        return assemble(args)
    t_start = time.time()
    until = args.steps if args.until is None else args.until
    if not 1 <= until <= args.steps:
        raise SystemExit(f"--until {until}: must be within 1..--steps {args.steps}")

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
    rows_sha = hash_rows(args.data)
    save_steps = sorted({int(s) for s in args.save.split(",") if s.strip()} | {until})
    os.makedirs(args.out, exist_ok=True)
    if not args.resume and os.path.exists(os.path.join(args.out, CHECKPOINT)):
        raise SystemExit(f"{args.out} holds a {CHECKPOINT}: pass --resume to continue it, or choose another --out")
    device = torch.device(args.device)
    if args.micro_tokens is None:
        args.micro_tokens = 32768 if device.type == "cuda" else 2048
    if args.threads or args.blas_threads:
        bench_torch.set_threads(args.threads, args.blas_threads)
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
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    ckpt = load_checkpoint(args.out, args, rows_sha, device) if args.resume else None
    if ckpt is None:
        log = {"options": options, "data": meta, "rows": len(rows), "rows_sha256": rows_sha, "torch": torch.__version__,
               "device": device_name, "threads": torch.get_num_threads(), "losses": [], "saved": [], "pieces": []}
        first_step, window, window_tokens, elapsed_before = 0, [], 0, 0.0
        if args.restart_from:
            # Warm restart (not bit-identical to an uninterrupted run: AdamW's moments start at zero,
            # hence the short re-warm-up; the batches are drawn from a generator seeded by (seed, N)).
            if args.restart_step is None or not 0 < args.restart_step < until:
                raise SystemExit("--restart-from needs --restart-step N with 0 < N < --until")
            tensors = ref.read_safetensors(args.restart_from)
            state = model.state_dict()
            with torch.no_grad():
                for name, t in tensors.items():
                    state[name].copy_(torch.from_numpy(t.copy()))
                if config["tie_word_embeddings"]:
                    state["lm_head.weight"].copy_(state["model.embed_tokens.weight"])
            first_step = args.restart_step
            pick_rng = np.random.default_rng([args.seed, first_step])
            log["restart"] = {"from": os.path.basename(args.restart_from), "step": first_step, "warmup": args.restart_warmup}
            print(f"warm restart from {args.restart_from} at step {first_step} (fresh AdamW, {args.restart_warmup} "
                  f"steps of re-warm-up)", flush=True)
        elif args.resume:
            print(f"--resume: no {CHECKPOINT} in {args.out}, starting at step 0", flush=True)
    else:
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        pick_rng.bit_generator.state = ckpt["pick_rng"]
        log = ckpt["log"]
        first_step, window, window_tokens = ckpt["step"], list(ckpt["window"]), ckpt["window_tokens"]
        elapsed_before = ckpt["elapsed"]
        print(f"resumed {args.out}/{CHECKPOINT} at step {first_step} ({elapsed_before:.0f} s of training so far)", flush=True)
    if first_step >= until:
        print(f"step {first_step} is already --until {until}: nothing to train", flush=True)
        return
    piece = {"from_step": first_step, "until": until, "time_limit": options["time_limit"], "device": device_name,
             "threads": torch.get_num_threads(), "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    log["pieces"].append(piece)
    if device.type == "cpu":  # which BLAS the CPU figures were measured on (bench_torch.py's verdict)
        blas = bench_torch.describe_blas(device, bench_torch.time_gemm(1024, device)["gflops"])
        piece["blas"] = {k: blas[k] for k in ("kind", "library", "openblas_threads", "gemm_gflops", "is_reference", "why")}
        log.setdefault("blas", piece["blas"])
        print(f"BLAS: {blas['kind']} ({blas['library'] or blas['why']}), 1024³ gemm {blas['gemm_gflops']:.0f} GFLOP/s, "
              f"{torch.get_num_threads()} torch thread(s)", flush=True)
    use_bf16 = device.type == "cuda"
    t_piece = time.time()  # --time-limit counts this piece's time (its start: after the rows are read)
    window_wall, window_cpu = time.perf_counter(), time.process_time()

    def write_log():
        with open(os.path.join(args.out, "train_log.json"), "w") as f:
            json.dump(log, f, indent=1)

    for step in range(first_step, until):
        picks = pick_rng.integers(0, len(rows), size=args.batch)
        lr = learning_rate(step, args.lr, args.warmup, args.steps, args.min_lr_ratio)
        restart = log.get("restart")
        if restart and step - restart["step"] < restart["warmup"]:
            lr *= (step - restart["step"] + 1) / restart["warmup"]
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad(set_to_none=True)
        loss = lean_batch_loss(model, rows, picks, device, args.micro_tokens, use_bf16)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        window.append(loss)
        window_tokens += int(sum(len(rows[i][0]) for i in picks))
        elapsed = elapsed_before + time.time() - t_piece
        if (step + 1) % args.log_every == 0 or step == 0:
            mean = sum(window) / len(window)
            window = []
            if device.type == "cuda":
                torch.cuda.synchronize()
            wall, cpu = time.perf_counter() - window_wall, time.process_time() - window_cpu
            tokens_per_s = window_tokens / wall
            log["losses"].append({"step": step + 1, "loss": mean, "grad_norm": float(grad_norm), "lr": lr, "seconds": elapsed,
                                  "tokens_per_s": tokens_per_s, "cpu_seconds": cpu, "wall_seconds": wall, "tokens": window_tokens})
            print(f"step {step + 1}/{args.steps}  loss {mean:.4f}  grad_norm {float(grad_norm):.3f}  lr {lr:.2e}  {elapsed:.0f} s"
                  f"  {tokens_per_s:.0f} tokens/s ({window_tokens} row tokens, {cpu:.0f} CPU s)", flush=True)
            window_tokens, window_wall, window_cpu = 0, time.perf_counter(), time.process_time()
        out_of_time = time.time() - t_piece > args.time_limit
        if (step + 1) in save_steps or out_of_time:
            path = os.path.join(args.out, f"model-step{step + 1}.safetensors")
            ref.write_safetensors(path, weights_for_file(model, config))
            log["saved"].append({"step": step + 1, "file": os.path.basename(path), "seconds": elapsed})
            log["step"] = piece["to_step"] = step + 1
            log["seconds"] = elapsed
            save_checkpoint(args.out, {
                "step": step + 1, "model": model.state_dict(), "optimizer": opt.state_dict(),
                "pick_rng": pick_rng.bit_generator.state, "log": log, "window": window, "window_tokens": window_tokens,
                "elapsed": elapsed, "rows_sha256": rows_sha, "schedule": {k: getattr(args, k) for k in SCHEDULE_OPTIONS},
            })
            write_log()
        if out_of_time:
            print(f"time limit {args.time_limit} s reached at step {step + 1}; continue with --resume", flush=True)
            break
    print(f"done in {time.time() - t_start:.0f} s (this piece), {log['seconds']:.0f} s of training in all", flush=True)


if __name__ == "__main__":
    main()
