#!/bin/bash
# The study's run queue (docs/results.md, "The study"): one worker takes lines from QUEUE until
# it is empty and runs each with `pact train` in TREE, a worktree pinned at the table's commit,
# so every row of a table shares one set of numerics. Start one worker per core:
#   git worktree add /work/table-tree <commit>; ln -s "$PWD/node_modules" /work/table-tree/
#   TREE=/work/table-tree OUT=/work/runs scripts/studyQueue.sh QUEUE 1 &
#   TREE=/work/table-tree OUT=/work/runs scripts/studyQueue.sh QUEUE 2 &
# QUEUE lines: "experiments/NAME.json RUN_ID" (a fresh run) or "RESUME NAME RUN_ID" (continue
# OUT/NAME/RUN_ID from its last checkpoint); RUN_ID is the rest of the line, so ids with spaces
# ("Seg A + Scale A-s1", as experiment files name them) work. Each finished run's metrics.jsonl and config.json go
# to RESULTS/NAME/runs/RUN_ID/ with provenance.json (the tree's commit, the engine, the CPU, Node),
# ready to commit; the run folder with its checkpoints stays in OUT.
# PACT_FMA=1: the CPU engine's fused multiply-add kernels (docs/engine.md; node gets Node 20's
# relaxed-SIMD flag); provenance.json's engine reads cpu-engine+fma when the run's log says they ran.
set -u
Q=$1; W=$2
NODE_FLAG=; [ "${PACT_FMA:-}" = 1 ] && NODE_FLAG=--experimental-wasm-relaxed-simd
TREE=${TREE:?TREE: the pinned worktree}; OUT=${OUT:-/work/runs}
RESULTS=${RESULTS:-$(cd "$(dirname "$0")/.." && pwd)/results}
mkdir -p "$OUT"
cd "$TREE"
while true; do
  LINE=$(flock "$Q.lock" bash -c "head -1 '$Q'; sed -i 1d '$Q'")
  [ -z "$LINE" ] && break
  if [ "${LINE%% *}" = RESUME ]; then
    read -r _ NAME ID <<< "$LINE"
    echo "$(date +%T) resume $NAME $ID" >> "$OUT/queue.w$W.log"
    node $NODE_FLAG bin/pact.mjs train --resume "$OUT/$NAME/$ID" --threads 1 >> "$OUT/$NAME.$ID.log" 2>&1
  else
    read -r CONFIG ID <<< "$LINE"
    NAME=$(node -e "console.log(JSON.parse(require('fs').readFileSync('$CONFIG','utf8')).name)")
    echo "$(date +%T) start $NAME $ID" >> "$OUT/queue.w$W.log"
    rm -rf "$OUT/$NAME/$ID"
    node $NODE_FLAG bin/pact.mjs train --config "$CONFIG" --run "$ID" --threads 1 --out "$OUT" >> "$OUT/$NAME.$ID.log" 2>&1
  fi
  RC=$?
  echo "$(date +%T) end $NAME $ID rc=$RC" >> "$OUT/queue.w$W.log"
  if [ $RC -eq 0 ]; then
    D=$RESULTS/$NAME/runs/$ID; mkdir -p "$D"
    ENGINE=${PACT_ENGINE:-cpu-engine}
    [ "$(grep '^engine kernels:' "$OUT/$NAME.$ID.log" | tail -1)" = 'engine kernels: fma' ] && ENGINE=$ENGINE+fma
    cp "$OUT/$NAME/$ID/metrics.jsonl" "$OUT/$NAME/$ID/config.json" "$D/"
    printf '{"commit": "%s", "engine": "%s", "backend": "wasm", "threads": 1, "cpu": "%s", "node": "%s"}\n' \
      "$(git rev-parse HEAD)" "$ENGINE" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" "$(node --version)" > "$D/provenance.json"
  fi
done
