#!/usr/bin/env bash
# One-GPU decode steps at the batches TensorRT-LLM's offline benchmark runs (hundreds of
# sequences), FP8 weights: Llama 3.1 8B whole (32 layers) and Llama 3 70B cut to 8 layers, with
# measure_serve_step.py (CUDA-graph replays; eager kernels, then torch.compile). The FP8 steps of
# tests/data/one_gpu_serve_steps/steps-*-fp8.json stop at batch 256, where the perf-overview file's
# Llama 3.1 8B rows (meshplan 13-19% under on H100/H200) run 700-900 sequences per step: this
# says whether the step model's GPU time at those batches is what the GPU takes. Batch 128 at 1,024
# repeats a step of steps-h200-fp8.json (the lease-to-lease spread). K/V caches are BF16 and dense
# (the script's), sized to fit one 141 GB card. Writes $OUT/large-batch-{graph,compiled}.{json,log}.
set -uo pipefail
OUT=${OUT:-.}
TIME_S=${TIME_S:-240}
here=$(dirname "$0")
m8=models/llama3-8b.yaml
m70=tests/data/one_gpu_steps/llama3-70b-8l.yaml
configs=()
for bc in 128:1024 384:1024 512:1024 640:1024 1024:512 2048:128 256:2048; do
  configs+=("$m8:32:1:decode:$bc")
done
for bc in 512:2048 1024:1024; do configs+=("$m70:8:1:decode:$bc"); done
. "$here/graph_then_compiled.sh"
graph_then_compiled "large-batch" --weights fp8
