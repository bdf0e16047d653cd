#!/usr/bin/env bash
# One-GPU MoE decode and prefill steps with the layers compiled (scripts/device/measure_serve_step.py
# --compile-moe: Inductor fuses the routing's element-wise kernels, the experts run as grouped
# GEMMs), beside the eager graph build: Mixtral 8x7B and Qwen3-235B-A22B cut to 2 layers, as one
# rank of TP 1-8 with every expert split TP ways (vLLM without expert parallelism), decode batches
# 1-256 at 1,024 cached tokens and 2,048-token prefills. Writes $OUT/moe-steps.json and its log.
set -uo pipefail
OUT=${OUT:-.}
TIME_S=${TIME_S:-240}
here=$(dirname "$0")
mx=tests/data/one_gpu_steps/mixtral-8x7b-2l.yaml
q235=tests/data/one_gpu_steps/qwen3-235b-a22b-2l.yaml
configs=()
for b in 1 16 64 256; do configs+=("$mx:2:1:decode:$b:1024"); done
configs+=("$mx:2:1:prefill:2048")
for tp in 2 4; do
  for b in 16 64; do configs+=("$mx:2:$tp:decode:$b:1024"); done
done
for tp in 2 4 8; do
  for b in 1 8 32 128; do configs+=("$q235:2:$tp:decode:$b:1024"); done
done
configs+=("$q235:2:4:prefill:2048")
args=()
for c in "${configs[@]}"; do args+=(--config "$c"); done
timeout "$TIME_S" python3 "$here/measure_serve_step.py" --modes graph,compiled --compile-moe \
  "${args[@]}" --out "$OUT/moe-steps.json" 2>&1 | tee "$OUT/moe-steps.log"
