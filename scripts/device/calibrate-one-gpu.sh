#!/usr/bin/env bash
# The one-GPU calibration run of issue 18, in one command (about 9½ minutes, the GEMM sweep 6½ of
# them; the device tool's calls stop at 10): HBM, 30 s sustained per dtype,
# GEMMs of every shipped model at TP 1/2/4/8 and 2K-64K tokens plus the square/K/M grid, bf16 and
# fp8; then decode-sized GEMMs (16-1024 tokens, the serving planner's shapes); fused attention
# (cuDNN and FA2 through PyTorch SDPA); decode-step fixed costs and streams
# (measure_decode.py); a PyTorch GEMM cross-check. STEP_TIMEOUT=S (seconds) adds the one-GPU
# training micro-batches (measure_step.py, the configurations of tests/data/one_gpu_steps/,
# about 25 s each: 300 for all eleven, best in a call of their own, the other steps' limits
# GEMM_TIMEOUT, DECODE_GEMM_TIMEOUT, ATTENTION_TIMEOUT, DECODE_TIMEOUT, TORCH_GEMM_TIMEOUT at 0).
# Each step has its own time limit and writes its own file, so a run cut short keeps what
# finished; a limit of 0 skips the step.
# MESHPLAN: the meshplan binary, with libmeshplan_cuda.so beside it (the CUDA backend module it
# loads); OUT: where results go; NAME: the profile's file name (h100-measured, h200-measured);
# MODELS: the model files whose GEMMs are measured (space-separated; default every models/*.yaml;
# a repeat of an earlier profile names that profile's own list, as its provenance command gives it).
set -uo pipefail
here=$(dirname "$0")
MESHPLAN=${MESHPLAN:-build/meshplan}
OUT=${OUT:-calibration-out}
NAME=${NAME:-measured}
mkdir -p "$OUT"
. "$here/env-probe.sh" > "$OUT/env.txt" 2>&1
# run_for SECONDS COMMAND...: COMMAND under that limit; 0 skips it (timeout itself reads 0 as none).
run_for() {
  local limit=$1
  shift
  if [ "$limit" -gt 0 ]; then timeout "$limit" "$@"; else echo "skipped (limit 0)"; fi
}
models=()
for m in ${MODELS:-models/*.yaml}; do models+=(--model "$m"); done
stamp "training GEMMs, HBM, sustained"
run_for "${GEMM_TIMEOUT:-430}" "$MESHPLAN" calibrate --backend cuda "${models[@]}" \
  --tp 1,2,4,8 --tokens 2048,4096,8192,16384,32768,65536 --dtypes bf16,fp8 \
  --out "$OUT/$NAME.yaml" 2>&1 | tail -3
echo "calibrate rc=${PIPESTATUS[0]}"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >> "$OUT/env.txt"
stamp "decode GEMMs"
run_for "${DECODE_GEMM_TIMEOUT:-45}" "$MESHPLAN" calibrate --backend cuda --gemm \
  --model models/llama3-8b.yaml --model models/llama3-70b.yaml --model models/mixtral-8x7b.yaml \
  --tp 1,2,4,8 --tokens 16,64,256,1024 --dtypes bf16,fp8 --budget-ms 20 --sustained-seconds 0 \
  --out "$OUT/decode-gemm.yaml" 2>&1 | tail -2
echo "decode calibrate rc=${PIPESTATUS[0]}"
stamp "attention"
run_for "${ATTENTION_TIMEOUT:-60}" "${python_env[@]}" python3 "$here/measure_attention.py" --out "$OUT/attention.yaml" 2>&1 | tail -2
stamp "decode costs"
run_for "${DECODE_TIMEOUT:-40}" "${python_env[@]}" python3 "$here/measure_decode.py" --out "$OUT/decode.json" 2>&1 | tail -2
stamp "torch GEMM check"
run_for "${TORCH_GEMM_TIMEOUT:-20}" "${python_env[@]}" python3 "$here/torch_gemm_check.py" 2>&1 | tee "$OUT/torch_gemm.txt"
stamp "training micro-batches"
steps=()
for c in models/llama3-8b.yaml:4:1:4096:1 models/llama3-8b.yaml:8:1:4096:1 \
  models/llama3-70b.yaml:8:8:4096:1 models/llama3-8b.yaml:4:1:8192:1 \
  models/llama3-70b.yaml:4:1:4096:1 tests/data/published_runs_modern.yaml#mlm-1.7b:24:1:4096:4 \
  tests/data/published_runs_modern.yaml#mlm-1.7b:24:1:4096:1 \
  tests/data/published_runs_modern.yaml#mlm-7.1b:30:2:4096:2 \
  tests/data/published_runs_modern.yaml#mlm-16b:32:4:4096:2 \
  tests/data/published_runs_modern.yaml#mpt-7b:32:1:2048:3 \
  tests/data/published_runs_modern.yaml#mpt-3b:32:1:2048:8; do steps+=(--config "$c"); done
run_for "${STEP_TIMEOUT:-0}" "${python_env[@]}" python3 "$here/measure_step.py" "${steps[@]}" \
  --out "$OUT/steps.json" 2>&1 | tail -12
stamp "done"
