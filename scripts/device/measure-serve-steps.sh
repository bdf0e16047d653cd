#!/usr/bin/env bash
# One-GPU serving steps (scripts/device/measure_serve_step.py) for the configurations of
# tests/data/one_gpu_serve_steps/: Llama 3.1 8B whole, Llama 3 70B cut to 8 layers at TP 1 and
# as a TP-4 rank, Mixtral 8x7B cut to 2 layers. The graph build of every step first (a few
# seconds each), then the compiled build (torch.compile per step shape) until TIME_S runs out.
# Writes $OUT/serve-steps-graph.json, $OUT/serve-steps-compiled.json and the logs beside them;
# WEIGHTS=fp8 runs the dense configurations with FP8 weights into serve-steps-fp8-*.json.
set -uo pipefail
OUT=${OUT:-.}
TIME_S=${TIME_S:-420}
WEIGHTS=${WEIGHTS:-bf16}
tag=$([ "$WEIGHTS" = fp8 ] && echo "-fp8" || echo "")
here=$(dirname "$0")
m8=models/llama3-8b.yaml
m70=tests/data/one_gpu_steps/llama3-70b-8l.yaml
mx=tests/data/one_gpu_steps/mixtral-8x7b-2l.yaml
configs=()
for b in 1 8 32 64 128 256; do configs+=("$m8:32:1:decode:$b:1024"); done
configs+=("$m8:32:1:decode:64:4096" "$m8:32:1:decode:16:8192")
for s in 512 2048 8192; do configs+=("$m8:32:1:prefill:$s"); done
for b in 1 16 64 256; do configs+=("$m70:8:1:decode:$b:2048"); done
for s in 2048 8192; do configs+=("$m70:8:1:prefill:$s"); done
for b in 1 32 128; do configs+=("$m70:8:4:decode:$b:2048"); done
configs+=("$m70:8:4:prefill:4096")
for b in 1 16 64 256; do configs+=("$mx:2:1:decode:$b:1024"); done
configs+=("$mx:2:1:prefill:2048")
. "$here/graph_then_compiled.sh"
graph_then_compiled "serve-steps$tag" --weights "$WEIGHTS"
