#!/usr/bin/env bash
# The H100 calibration run of issue 18, in one command on a one-GPU machine (about 7 minutes):
# GEMMs of every shipped model at TP 1/2/4/8 and 2K-64K tokens plus the square/K/M grid, bf16 and
# fp8; 30 s sustained; HBM; then fused attention (cuDNN and FA2 through PyTorch SDPA) and a
# PyTorch GEMM cross-check. MESHPLAN: the meshplan binary, with libmeshplan_cuda.so beside it (the
# CUDA backend module it loads); OUT: where results go.
set -uo pipefail
MESHPLAN=${MESHPLAN:-build/meshplan}
OUT=${OUT:-calibration-out}
mkdir -p "$OUT"
python_env=(env "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}")  # PyTorch brings its own cuDNN
. "$(dirname "$0")/env-probe.sh" > "$OUT/env.txt" 2>&1
models=()
for m in models/*.yaml; do models+=(--model "$m"); done
timeout "${GEMM_TIMEOUT:-400}" "$MESHPLAN" calibrate --backend cuda "${models[@]}" \
  --tp 1,2,4,8 --tokens 2048,4096,8192,16384,32768,65536 --dtypes bf16,fp8 \
  --out "$OUT/h100-measured.yaml" 2>&1 | tail -3
echo "calibrate rc=$?"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >> "$OUT/env.txt"
timeout 100 "${python_env[@]}" python3 "$(dirname "$0")/measure_attention.py" --out "$OUT/attention.yaml" 2>&1 | tail -4
timeout 40 "${python_env[@]}" python3 "$(dirname "$0")/torch_gemm_check.py" 2>&1 | tee "$OUT/torch_gemm.txt"
