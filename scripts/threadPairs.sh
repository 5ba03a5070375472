#!/bin/bash
# Two threads against one, in pairs: `pact bench` on the whole steps of an experiment file with
# --threads 1 and --threads 2 in turn (1 first in odd pairs, 2 first in even ones), and each
# pair's speed-up (the steps' wall seconds on one thread ÷ on two) with the median. On a shared
# machine whose speed moves within minutes one pair is one draw (docs/perf.md, "Two threads, five
# pairs"). Run it on a quiet machine:
#   scripts/threadPairs.sh [PAIRS=5] [FILE=experiments/pact-nano-short.json] [STEPS=2]
set -eu
PAIRS=${1:-5}; FILE=${2:-experiments/pact-nano-short.json}; STEPS=${3:-2}
cd "$(dirname "$0")/.."
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
seconds() { # wall seconds of all steps of one bench run on $1 threads
  node bin/pact.mjs bench --step "$FILE" --steps "$STEPS" --threads "$1" --no-kernels --no-torch \
    --out "$TMP/bench-$1.json" > "$TMP/log-$1.txt" 2>&1 || { cat "$TMP/log-$1.txt" >&2; exit 1; }
  node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(r.steps.reduce((s, x) => s + x.seconds, 0).toFixed(2))' "$TMP/bench-$1.json"
}
RATIOS=()
for ((p = 1; p <= PAIRS; p++)); do
  if ((p % 2)); then one=$(seconds 1); two=$(seconds 2); else two=$(seconds 2); one=$(seconds 1); fi
  r=$(node -e "console.log(($one / $two).toFixed(2))")
  RATIOS+=("$r")
  echo "pair $p ($( ((p % 2)) && echo 1 || echo 2) thread(s) first): $one s on 1 thread, $two s on 2: ${r}×"
done
node -e 'const x = process.argv.slice(1).map(Number).sort((a, b) => a - b), m = x.length >> 1;
  const med = x.length % 2 ? x[m] : (x[m - 1] + x[m]) / 2;
  console.log(`median ${med.toFixed(2)}× (${x[0].toFixed(2)}–${x[x.length - 1].toFixed(2)}×) over ${x.length} pairs`)' "${RATIOS[@]}"
