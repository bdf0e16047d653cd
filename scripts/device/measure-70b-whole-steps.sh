#!/usr/bin/env bash
# Whole Llama 3 70B decode steps on one GPU, FP8 weights (70 GB, which one H200 holds), with
# measure_serve_step.py (CUDA-graph replays; eager kernels, then torch.compile): the layout of
# TensorRT-LLM's perf-overview rows of Llama 3.1 70B on one H200 (tpo-022..tpo-033), at the
# batches its cache leaves room for. The 8-layer cuts of tests/data/one_gpu_steps/llama3-70b-8l.yaml
# carry the LM head at a tenth of the layers; this says whether the step model prices all 80
# layers as it prices the cut. K/V caches BF16 and dense (the script's). Writes
# $OUT/whole-70b-{graph,compiled}.{json,log}.
set -uo pipefail
OUT=${OUT:-.}
TIME_S=${TIME_S:-200}
here=$(dirname "$0")
m70=models/llama3-70b.yaml
configs=()
for bc in 1:2048 16:2048 64:2048 128:1024 32:4096; do configs+=("$m70:80:1:decode:$bc"); done
. "$here/graph_then_compiled.sh"
graph_then_compiled "whole-70b" --weights fp8
