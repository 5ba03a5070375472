#!/usr/bin/env bash
# The GPU benchmark in one command, for a lent NVIDIA machine (no internet; maybe no Node, no
# node_modules, no Vulkan loader): tfjs-webgpu in Node through Dawn (npm `webgpu`, on the GPU's
# Vulkan driver) beside PyTorch CUDA eager on the same shapes. JSON under $OUT (default
# ./gpu-bench-out): summary.json, plus one file per case. A few minutes on a GPU.
#
#   bash scripts/gpu/bench.sh --prepare [--with-node]   here, with node_modules: writes .gpu-bundle.tgz
#   bash scripts/gpu/bench.sh                           there (carry .gpu-bundle.tgz unless the
#                                                       checkout has node_modules and Dawn)
# Cases, when an NVIDIA GPU answers: the adapter Dawn finds; the PyTorch reference fixtures through
# tfjs-webgpu (scripts/gpu/numerics.ts); `pact bench --backends webgpu` (decode and a training step
# at the real shapes, and whole steps of pact-nano-short and table1); the CPU engine on every core;
# bench_torch.py --device cuda on the real shapes (--real: decode 8x1024+576, train 8x1536, a 1024³
# gemm). Without a GPU it says so and runs only the CPU-side
# checks (Node, the CLI, Dawn's module, PyTorch, a gemm reading, and the reference fixtures through
# tfjs-webgpu on Chromium's SwiftShader Vulkan where it is installed). Never part of a test.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
if [ "${1:-}" = "--prepare" ]; then shift; exec node --import tsx scripts/gpu/prepare.ts "$@"; fi

OUT="${OUT:-$ROOT/gpu-bench-out}"
mkdir -p "$OUT"
: > "$OUT/log.txt"
log() { echo "[gpu-bench] $*" | tee -a "$OUT/log.txt" >&2; }
STATUS=()   # "case|ok|file" or "case|skipped|reason" or "case|failed|reason"
record() { STATUS+=("$1|$2|$3"); log "$1: $2 ${3:+($3)}"; }
# run NAME OUTFILE TIMEOUT CMD...: stdout to OUTFILE, stderr to OUT/NAME.err
run_case() {
  local name="$1" file="$2" limit="$3"; shift 3
  if timeout "$limit" "$@" > "$file" 2> "$OUT/$name.err"; then record "$name" ok "$(basename "$file")"
  else record "$name" failed "exit $?; see $name.err: $(tail -n 2 "$OUT/$name.err" | tr '\n' ' ' | cut -c1-300)"; fi
}

# --- the bundle (scripts/gpu/prepare.ts), when the checkout lacks node_modules -------------
if [ ! -d .gpu-bundle ] && [ -f .gpu-bundle.tgz ]; then mkdir -p .gpu-bundle && tar xzf .gpu-bundle.tgz -C .gpu-bundle; fi
NODE="$(command -v node || true)"
if [ -z "$NODE" ] && [ -x .gpu-bundle/bin/node ]; then NODE="$ROOT/.gpu-bundle/bin/node"; fi
PACT=()
NUMERICS=()
if [ -n "$NODE" ] && [ -f node_modules/tsx/package.json ]; then
  PACT=("$NODE" bin/pact.mjs); NUMERICS=("$NODE" --import tsx scripts/gpu/numerics.ts); PACT_FROM=checkout
elif [ -n "$NODE" ] && [ -f .gpu-bundle/cli/chunks/pact.mjs ]; then
  PACT=("$NODE" .gpu-bundle/cli/chunks/pact.mjs); NUMERICS=("$NODE" .gpu-bundle/cli/chunks/numerics.mjs); PACT_FROM=bundle
else PACT_FROM=missing; fi
if [ ! -f node_modules/webgpu/index.js ] && [ -f .gpu-bundle/node_modules/webgpu/index.js ]; then
  export PACT_WEBGPU_MODULE="$ROOT/.gpu-bundle/node_modules/webgpu/index.js"
fi
CASES=""
if [ -f .gpu-bundle/cases.json ]; then CASES=.gpu-bundle/cases.json
elif [ "$PACT_FROM" = checkout ]; then "$NODE" --import tsx scripts/gpu/prepare.ts --cases-only "$OUT" && CASES="$OUT/cases.json"; fi
log "node: ${NODE:-missing} ${NODE:+$("$NODE" --version)}; pact CLI: $PACT_FROM; cases: ${CASES:-missing}"

# --- the GPU, and Vulkan for Dawn ----------------------------------------------------------
GPU=none
if command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L > "$OUT/nvidia-smi.txt" 2>&1; then GPU=nvidia
elif ls /dev/nvidia0 > /dev/null 2>&1; then GPU=nvidia-device-without-nvidia-smi; fi
log "GPU: $GPU $( [ -f "$OUT/nvidia-smi.txt" ] && head -n 1 "$OUT/nvidia-smi.txt")"
has_lib() { ldconfig -p 2>/dev/null | grep -q "$1" || ls /usr/lib/x86_64-linux-gnu/"$1" /usr/lib64/"$1" /usr/local/nvidia/lib64/"$1" > /dev/null 2>&1; }
EXTRA_LIB="$OUT/lib"
mkdir -p "$EXTRA_LIB"
for so in libvulkan.so.1 libGLdispatch.so.0; do   # only what the machine lacks, so its own libraries win
  if ! has_lib "$so" && [ -f ".gpu-bundle/lib/$so" ]; then ln -sf "$ROOT/.gpu-bundle/lib/$so" "$EXTRA_LIB/$so"; log "using the bundle's $so"; fi
done
[ -d /usr/local/nvidia/lib64 ] && LD_LIBRARY_PATH="/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$EXTRA_LIB"
ICD="$(find /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/nvidia -maxdepth 4 -iname '*nvidia*.json' 2>/dev/null | head -n 1)"
if [ -z "$ICD" ] && [ "$GPU" != none ]; then   # containers often have the driver but not its ICD file
  GLX="$( (ldconfig -p 2>/dev/null | awk '/libGLX_nvidia.so.0/ {print $NF; exit}'); find /usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64 -maxdepth 3 -name 'libGLX_nvidia.so.0' 2>/dev/null | head -n 1)"
  GLX="$(echo "$GLX" | head -n 1)"
  if [ -n "$GLX" ]; then
    ICD="$OUT/nvidia_icd.json"
    printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "1.3.0"}}\n' "$GLX" > "$ICD"
  fi
fi
if [ -n "$ICD" ]; then export VK_ICD_FILENAMES="$ICD" VK_DRIVER_FILES="$ICD"; fi
log "Vulkan ICD: ${ICD:-none found}"

# --- PyTorch -----------------------------------------------------------------------------
PY=""
for p in /usr/bin/python3 python3 python; do
  if command -v "$p" > /dev/null 2>&1 && "$p" -c 'import torch' > /dev/null 2>&1; then PY="$(command -v "$p")"; break; fi
done
CUDA=no
if [ -n "$PY" ]; then
  "$PY" -c 'import json, torch; print(json.dumps({"torch": torch.__version__, "cuda": torch.cuda.is_available(), "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}))' > "$OUT/torch.json" 2>> "$OUT/log.txt"
  grep -q '"cuda": true' "$OUT/torch.json" && CUDA=yes
fi
log "python with torch: ${PY:-none}; CUDA: $CUDA"
THREADS="$(nproc 2>/dev/null || echo 1)"
BENCH_TORCH=scripts/reference/bench_torch.py
preset_args() {  # --config NAME=JSON for bench_torch.py --real, from cases.json
  "$PY" -c 'import json, sys; p = json.load(open(sys.argv[1]))["presets"]; print("\n".join(f"--config\n{k}={json.dumps(v)}" for k, v in p.items()))' "$CASES"
}

# --- CPU-side checks (always) ------------------------------------------------------------
if [ -n "$NODE" ]; then run_case webgpu-adapter "$OUT/webgpu-adapter.json" 120 "$NODE" scripts/gpu/probeWebGpu.mjs
else record webgpu-adapter skipped "no node (prepare with --with-node)"; fi
if [ ${#PACT[@]} -gt 0 ]; then run_case pact-cli "$OUT/pact-help.txt" 120 "${PACT[@]}" bench --help
else record pact-cli skipped "no node_modules and no .gpu-bundle (run --prepare and carry .gpu-bundle.tgz)"; fi
if [ -n "$PY" ]; then run_case torch-cpu-gemm "$OUT/torch-cpu-gemm.json" 300 "$PY" "$BENCH_TORCH" --real --cases gemm --threads "$THREADS"
else record torch-cpu-gemm skipped "no python3 with torch"; fi

# --- GPU cases ---------------------------------------------------------------------------
SWIFTSHADER=/usr/lib/chromium/vk_swiftshader_icd.json
if [ "$GPU" = none ]; then
  log "no NVIDIA GPU here (no nvidia-smi, no /dev/nvidia0): the GPU cases are skipped; the CPU-side checks above ran"
  # The same tfjs-webgpu path on Chromium's software Vulkan (SwiftShader), where Debian's chromium is installed:
  # slow, so only the reference numerics, not the timings.
  if [ ${#NUMERICS[@]} -gt 0 ] && [ -f "$SWIFTSHADER" ]; then
    VK_ICD_FILENAMES="$SWIFTSHADER" VK_DRIVER_FILES="$SWIFTSHADER" run_case webgpu-numerics-swiftshader "$OUT/webgpu-numerics-swiftshader.json" 600 "${NUMERICS[@]}" webgpu
  fi
  for c in webgpu-numerics tfjs-webgpu-bench engine-cpu-bench torch-cuda-real; do record "$c" skipped "no NVIDIA GPU"; done
else
  if [ ${#PACT[@]} -gt 0 ] && grep -q '"adapter":{' "$OUT/webgpu-adapter.json" 2>/dev/null; then
    # The reference fixtures first: the timings below are of the same model only if these pass.
    run_case webgpu-numerics "$OUT/webgpu-numerics.json" 300 "${NUMERICS[@]}" webgpu
    # The model-level cases (decode 8 × 1,024 + 576, train 8 × 1,536) and whole steps of
    # pact-nano-short and table1, on tfjs-webgpu (the CPU engine is not used on webgpu).
    run_case tfjs-webgpu-bench "$OUT/tfjs-webgpu-bench.txt" 900 "${PACT[@]}" bench --backends webgpu --presets qwen3-nano,qwen3-micro --no-torch --out "$OUT/tfjs-webgpu-bench.json"
    # The CPU engine on this machine's cores, for scale.
    run_case engine-cpu-bench "$OUT/engine-cpu-bench.txt" 600 "${PACT[@]}" bench --backends wasm --threads "$THREADS" --no-torch --out "$OUT/engine-cpu-bench.json"
  else
    for c in webgpu-numerics tfjs-webgpu-bench engine-cpu-bench; do record "$c" skipped "no WebGPU adapter from Dawn (see webgpu-adapter.json) or no pact CLI"; done
  fi
  if [ "$CUDA" = yes ] && [ -n "$CASES" ]; then
    mapfile -t CONFIG_ARGS < <(preset_args)
    run_case torch-cuda-real "$OUT/torch-cuda-real.json" 900 "$PY" "$BENCH_TORCH" --real --device cuda --threads "$THREADS" --iters 3 "${CONFIG_ARGS[@]}"
  else
    record torch-cuda-real skipped "PyTorch without CUDA, or no cases.json"
  fi
fi

# --- summary.json ------------------------------------------------------------------------
SUMMARY_PY='import json, sys
out, cases = json.loads(sys.argv[1]), {}
for line in sys.argv[2:]:
    name, status, detail = line.split("|", 2)
    cases[name] = {"status": status, ("file" if status == "ok" else "reason"): detail}
out["cases"] = cases
print(json.dumps(out, indent=1))'
ENV_JSON="$(printf '{"gpu": "%s", "node": "%s", "pact": "%s", "vulkan_icd": "%s", "python": "%s", "cuda": "%s", "threads": %s, "date": "%s"}' \
  "$GPU" "${NODE:-}" "$PACT_FROM" "${ICD:-}" "${PY:-}" "$CUDA" "$THREADS" "$(date -u +%FT%TZ)")"
if [ -n "$PY" ]; then "$PY" -c "$SUMMARY_PY" "$ENV_JSON" "${STATUS[@]}" > "$OUT/summary.json"
elif command -v python3 > /dev/null 2>&1; then python3 -c "$SUMMARY_PY" "$ENV_JSON" "${STATUS[@]}" > "$OUT/summary.json"
else printf '%s\n' "$ENV_JSON" "${STATUS[@]}" > "$OUT/summary.txt"; fi
log "wrote $OUT/summary.json"
