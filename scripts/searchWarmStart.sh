#!/usr/bin/env bash
# The search warm start on CPU, in one command (issue 29, item 1): today's warm start (public/
# warm-start) has never seen a search episode, so every ToolSearcher recipe trains at F1 0. This
# trains the shipped recipe again with search-teacher episodes mixed into its rows, in pieces that
# survive a machine change, then evaluates it beside today's warm start and ships it.
#
#   scripts/searchWarmStart.sh                 run every stage not yet done (re-run it after a stop)
#   scripts/searchWarmStart.sh rows|train|eval|ship   one stage
#
# 1. rows   npm run pretrain -- --export-rows: the shipped recipe's 16,000 expert episodes (1,600
#           worlds, all four categories, --max-seq-len 2048) + SEARCH_TASKS search-teacher episodes,
#           whose text is also in the vocabulary (--vocab-search-tasks). 4,000 search episodes are
#           20 % of the rows (all fit 2,048 tokens whole; ~1,060 tokens, 190 of them trained, against
#           ~950 and 360 for a tool-use row); committed (rows.bin.gz ~7 MB).
# 2. train  pretrain_torch.py on CPU (torch 1 thread, OpenBLAS on every core) with the shipped
#           schedule (batch 64, lr 2e-3, warmup 200, cosine over 6,000 steps), stopped at --until
#           UNTIL = 625: 40,000 draws, of which 32,000 tool-use (the shipped step 500's 32,000, so its
#           tool use should match today's) and 8,000 search (each episode drawn twice, as each
#           tool-use one). In pieces of --time-limit PIECE_SECONDS (6,600 s) with --resume; after each
#           piece checkpoint.pt (weights + AdamW, ~29 MB, the only one kept), train_log.json and the
#           SAVE steps' weights are committed, so a new machine continues from the last piece
#           (pretrain_torch.py's docstring: what the checkpoint holds, why in git).
# 3. eval   pretrain_torch.py --assemble at each SAVE step, then npm run pretrain -- --init DIR
#           --steps 0 on it and on today's warm start: held-out answer accuracy and Solve-F1 on
#           EVAL_TASKS tasks of the PACT mix (test split, all four categories) and tool-selection
#           F1 / recall / precision on SEARCH_EVAL_TASKS held-out search queries (their own
#           repository, seed·1000 + 999); the table in EVAL/summary.md, committed.
# 4. ship   copies the evaluated folder of SHIP_STEP (default UNTIL) to DEST and commits it.
#           DEST is a second folder, public/warm-start-search, not public/warm-start: every PACT
#           run (model.init "warm-start", runAssets.ts) and the Table 1 study in progress load
#           public/warm-start, and this one differs in shape (a 4,096-token vocabulary, not 1,022)
#           and in training, so replacing it would change every tool-use number. `pact train` opens
#           a Qwen3 folder named by model.init, so experiments/toolsearcher.json picks it with
#           "init": "public/warm-start-search"; the page cannot open a folder by name (workers/
#           runPlatform.ts), so in the app it is picked in Run setup until a policy source is
#           registered for it. Nothing is set to it here: that, and whether it should replace
#           public/warm-start after all, is decided on EVAL/summary.md.
#
# Measured (the shipped public/warm-start-search was trained this way on a lent H200, not here;
# docs/runs.md): held-out tool-selection F1 by step 625: 0, 1,000: 0.02, 1,421: 0.25, 2,000: 0.57,
# so UNTIL is 2,000, about 16 hours of these 2 cores at 2,140 tokens/s (2,000 x 64 rows of 976
# tokens). The estimate below was made for step 625 and is kept for its method.
# Time on these 2 cores, estimated (not yet run): 40,000 draws × ~975 tokens = 39M row tokens; at
# the 2,140 tokens/s pretrain_torch.py trained on them (bench/2026-12-02-pretrain-torch-cpu.txt,
# rows of 693 tokens; longer rows run somewhat slower) 5.1 h of training, 3 pieces. Plus ~15 min
# for the rows (800 took 33 s) and ~15 min per evaluated folder (3: today, 500, 625; the smoke's
# greedy rollouts took ~1 s per task and ~4 s per search query, each folder's vocabulary rebuilt
# first). UNTIL=500 SAVE=250,500 saves a fifth (25,600 tool-use draws). A machine lost mid-piece
# costs at most that piece: re-run the same command on the new one.
#
# Smoke at toy size (no commits in this repository; a scratch git repository under /tmp):
#   git init -q /tmp/sws && DIR=/tmp/sws/ckpt DEST=/tmp/sws/dest TRAIN_TASKS=24 WORLDS=4 \
#     SEARCH_TASKS=16 STEPS=6 UNTIL=6 SAVE=3,6 BATCH=4 WARMUP=2 PIECE_SECONDS=0 EVAL_TASKS=2 \
#     SEARCH_EVAL_TASKS=2 NICE="nice -n 19" scripts/searchWarmStart.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

DIR=${DIR:-checkpoints/warm-start-search}       # committed: data/ (rows), out/ (trainer), eval/
DEST=${DEST:-public/warm-start-search}
SEED=${SEED:-1}
TRAIN_TASKS=${TRAIN_TASKS:-16000}
WORLDS=${WORLDS:-1600}
SEARCH_TASKS=${SEARCH_TASKS:-4000}
MAX_SEQ_LEN=${MAX_SEQ_LEN:-2048}
STEPS=${STEPS:-6000}                             # the schedule's length (the shipped run's)
UNTIL=${UNTIL:-2000}                             # where training stops (step 625 selects no tool held out)
SAVE=${SAVE:-1000,1500,2000}                     # weights kept (and evaluated) at these steps
BATCH=${BATCH:-64}
LR=${LR:-2e-3}
WARMUP=${WARMUP:-200}
PIECE_SECONDS=${PIECE_SECONDS:-6600}
EVAL_TASKS=${EVAL_TASKS:-100}
SEARCH_EVAL_TASKS=${SEARCH_EVAL_TASKS:-50}
SHIP_STEP=${SHIP_STEP:-$UNTIL}
PY=${PY:-/usr/bin/python3}                       # Debian's python3 has torch; pyenv's does not
NICE=${NICE:-}                                   # e.g. "nice -n 19" beside other work
COMMIT=${COMMIT:-1}                              # 0: never commit
export PYTHONDONTWRITEBYTECODE=1

case ",$SAVE," in *",$UNTIL,"*) ;; *) SAVE="$SAVE,$UNTIL" ;; esac  # the last step is always kept
mkdir -p "$DIR"
DIR=$(realpath "$DIR")
DATA=$DIR/data OUT=$DIR/out EVAL=$DIR/eval
mkdir -p "$DATA" "$OUT" "$EVAL" "$DIR/logs"
REPO=""
[ "$COMMIT" = 1 ] && REPO=$(git -C "$DIR" rev-parse --show-toplevel)
say() { echo "[search-warm-start $(date +%T)] $*"; }

# commit MESSAGE PATH...: commits these paths only (other staged work stays staged).
commit() {
  local msg=$1
  shift
  [ "$COMMIT" = 1 ] || return 0
  git -C "$REPO" add -- "$@"
  if git -C "$REPO" diff --cached --quiet -- "$@"; then return 0; fi
  git -C "$REPO" commit -q -m "$msg" -- "$@"
  say "committed: $msg"
}

# Files the commits must not take: evaluation copies of the weights, the stdout logs (*.log).
printf '%s\n' 'eval/*/model.safetensors' 'out/warm-start-step*/' 'logs/' > "$DIR/.gitignore"

trained_step() {
  [ -f "$OUT/train_log.json" ] || { echo 0; return; }
  "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("step", 0))' "$OUT/train_log.json"
}

stage_rows() {
  if [ -f "$DATA/pruned_vocab.json" ]; then say "rows: $DATA has them"; return; fi  # written last
  say "rows: $TRAIN_TASKS tool-use + $SEARCH_TASKS search episodes -> $DATA"
  $NICE npm run --silent pretrain -- --seed "$SEED" --worlds "$WORLDS" --train-tasks "$TRAIN_TASKS" \
    --categories single_hop,multi_hop,parallel_single_hop,parallel_multi_hop --max-seq-len "$MAX_SEQ_LEN" \
    --search-tasks "$SEARCH_TASKS" --vocab-search-tasks "$SEARCH_TASKS" --export-rows "$DATA" \
    2>&1 | tee "$DIR/logs/rows.log"
  commit "search warm start: the rows ($TRAIN_TASKS tool-use + $SEARCH_TASKS search episodes, seed $SEED)" "$DIR/.gitignore" "$DATA"
}

stage_train() {
  local step
  step=$(trained_step)
  while [ "$step" -lt "$UNTIL" ]; do
    say "train: piece from step $step (until $UNTIL of $STEPS, at most $PIECE_SECONDS s)"
    $NICE "$PY" scripts/reference/pretrain_torch.py --data "$DATA" --out "$OUT" --resume \
      --steps "$STEPS" --until "$UNTIL" --batch "$BATCH" --lr "$LR" --warmup "$WARMUP" --seed "$SEED" \
      --save "$SAVE" --time-limit "$PIECE_SECONDS" --device cpu --threads 1 --blas-threads "$(nproc)" \
      2>&1 | tee -a "$DIR/logs/train.log"
    local now
    now=$(trained_step)
    [ "$now" -gt "$step" ] || { say "train: no progress from step $step"; exit 1; }
    # A piece's last weights live in checkpoint.pt: keep only the SAVE steps' files.
    for f in "$OUT"/model-step*.safetensors; do
      local s=${f##*model-step}
      s=${s%.safetensors}
      case ",$SAVE," in *",$s,"*) ;; *) rm -f "$f" ;; esac
    done
    commit "search warm start: steps $step-$now of $UNTIL (checkpoint for --resume)" "$OUT"
    step=$now
  done
  say "train: step $step of $UNTIL done"
}

# evaluate NAME FOLDER: npm run pretrain's held-out evaluation of FOLDER into EVAL/NAME.
evaluate() {
  local name=$1 folder=$2
  if [ -f "$EVAL/$name/warm_start.json" ]; then say "eval: $name done"; return; fi
  say "eval: $name ($folder)"
  $NICE npm run --silent pretrain -- --init "$folder" --steps 0 --seed "$SEED" --eval-tasks "$EVAL_TASKS" \
    --search-eval-tasks "$SEARCH_EVAL_TASKS" --out "$EVAL/$name" 2>&1 | tee "$DIR/logs/eval-$name.log"
}

stage_eval() {
  evaluate today public/warm-start
  local s
  for s in ${SAVE//,/ }; do
    [ -f "$OUT/model-step$s.safetensors" ] || { say "eval: no weights of step $s"; continue; }
    [ -d "$OUT/warm-start-step$s" ] || "$PY" scripts/reference/pretrain_torch.py --data "$DATA" --out "$OUT" --assemble "$s"
    evaluate "step$s" "$OUT/warm-start-step$s"
  done
  "$PY" - "$EVAL" > "$EVAL/summary.md" <<'PY'
import json, os, sys
root = sys.argv[1]
names = sorted(os.listdir(root), key=lambda n: (n != "today", int(n[4:]) if n.startswith("step") else 0))
print("| warm start | vocab | answers | Solve-F1 | fully solved | search F1 | recall | precision | match | SRecall | turns |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for n in names:
    p = os.path.join(root, n, "warm_start.json")
    if not os.path.exists(p):
        continue
    w = json.load(open(p))
    e, s = w["eval"], w.get("searchEval", {})
    f = lambda d, k: f"{d[k]:.3f}" if k in d else "-"
    print(f"| {n} (step {w['options']['steps']}) | {w['keptTokens']} | {f(e, 'answerAccuracy')} of {e['nTasks']} | "
          f"{f(e, 'solveF1')} | {f(e, 'fullySolved')} | {f(s, 'f1')} of {s.get('nTasks', 0)} | {f(s, 'recall')} | "
          f"{f(s, 'precision')} | {f(s, 'match')} | {f(s, 'search_recall')} | {f(s, 'turns')} |")
PY
  cat "$EVAL/summary.md"
  commit "search warm start: held-out evaluation beside today's warm start ($EVAL_TASKS tasks, $SEARCH_EVAL_TASKS search queries)" "$EVAL"
}

stage_ship() {
  local from=$EVAL/step$SHIP_STEP
  [ -f "$from/warm_start.json" ] || { say "ship: $from is not evaluated yet"; exit 1; }
  mkdir -p "$DEST"
  cp "$from"/config.json "$from"/model.safetensors "$from"/pruned_vocab.json "$from"/warm_start.json "$DEST/"
  say "ship: $from -> $DEST"
  commit "search warm start: step $SHIP_STEP shipped as $DEST (summary: $EVAL/summary.md)" "$DEST"
}

case "${1:-all}" in
  rows) stage_rows ;;
  train) stage_train ;;
  eval) stage_eval ;;
  ship) stage_ship ;;
  all) stage_rows && stage_train && stage_eval && stage_ship ;;
  *) echo "usage: $0 [rows|train|eval|ship|all]" >&2; exit 2 ;;
esac
