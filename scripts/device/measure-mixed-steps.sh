#!/usr/bin/env bash
# One-GPU engine steps that continuous batching with chunked prefill forms, for the serving
# model's mixed steps (serving/step_time.h prices a step's decodes and prompt chunk as one token
# batch through the GEMMs): Llama 3.1 8B whole (TP 1) and Llama 3 70B cut to 8 layers as one
# rank of TP 4 (scripts/device/measure_serve_step.py: shard widths, no all-reduce), decode
# batches 8 and 64 at 2,048 cached tokens with one prompt chunk of 512 or 2,048 tokens, first
# (nothing cached) or second (2,048 of its prompt cached); the same models' pure prefills for
# reference; then Qwen3-235B-A22B's MoE layers (2 of them, experts split TP ways as vLLM runs
# them without expert parallelism) as one rank of TP 2, 4 and 8, decode batches 1-128 at 1,024
# cached tokens (graph build only: grouped experts). Graph builds first, then the compiled build
# until TIME_S runs out. Writes $OUT/mixed-steps-{graph,compiled}.json and the logs beside them.
set -uo pipefail
OUT=${OUT:-.}
TIME_S=${TIME_S:-300}
here=$(dirname "$0")
m8=models/llama3-8b.yaml
m70=tests/data/one_gpu_steps/llama3-70b-8l.yaml
q235=tests/data/one_gpu_steps/qwen3-235b-a22b-2l.yaml
configs=()
for spec in "$m8:32:1" "$m70:8:4"; do
  for b in 8 64; do
    for chunk in 512 2048; do
      configs+=("$spec:mixed:$b:2048:$chunk:0" "$spec:mixed:$b:2048:$chunk:2048")
    done
  done
  configs+=("$spec:prefill:512" "$spec:prefill:2048")
done
for tp in 2 4 8; do
  for b in 1 8 32 128; do configs+=("$q235:2:$tp:decode:$b:1024"); done
done
. "$here/graph_then_compiled.sh"
graph_then_compiled mixed-steps
