#!/usr/bin/env bash
# One-GPU decode steps of a tensor-parallel rank at TP 1/2/4/8 (scripts/device/measure_serve_step.py:
# the rank's shard widths, no all-reduce), for the serving model's TP trend: Llama 3.1 8B whole,
# Llama 3 70B and Qwen3-32B cut to 8 layers, decode batches 1-64 at 2,048 cached tokens, and
# Qwen3-32B prefills of 2,048 tokens. What the rank computes is measured here; what the serving
# model prices beyond it at TP > 1 is the all-reduce. The graph build of every step first, then
# the compiled build until TIME_S runs out. Writes $OUT/tp-rank-steps-{graph,compiled}.json and
# the logs beside them.
set -uo pipefail
OUT=${OUT:-.}
TIME_S=${TIME_S:-400}
here=$(dirname "$0")
m8=models/llama3-8b.yaml
m70=tests/data/one_gpu_steps/llama3-70b-8l.yaml
q32=tests/data/one_gpu_steps/qwen3-32b-8l.yaml
configs=()
for tp in 1 2 4 8; do
  for b in 1 8 32 64; do
    configs+=("$q32:8:$tp:decode:$b:2048" "$m70:8:$tp:decode:$b:2048" "$m8:32:$tp:decode:$b:2048")
  done
  configs+=("$q32:8:$tp:prefill:2048")
done
. "$here/graph_then_compiled.sh"
graph_then_compiled tp-rank-steps
