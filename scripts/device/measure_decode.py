#!/usr/bin/env python3
"""Times the fixed costs and memory streams that bound a serving engine's decode step on one GPU.

What serving/step_time.h prices and takes from published figures, measured here:
- kernel floor: one tiny kernel (an in-place add on one element) replayed N times from a CUDA
  graph, and the same N launched eagerly; the graph figure is what serving engines pay per
  small kernel (vLLM and TensorRT-LLM replay decode steps as CUDA graphs);
- weight streaming: bf16 `x @ w` at decode batch sizes (m = 1..512 rows) against weights far
  larger than L2, reported as the bytes a step must read (weights + activations) over time;
- decode attention: one query token per sequence against a cache of `ctx` tokens with grouped
  K/V heads, through torch SDPA (flash, cuDNN and efficient backends where they run), reported
  as K+V bytes read over time.
Each figure is the median of `--iters` runs timed with CUDA events after `--warmup` runs, on
random normal inputs (never zeros). Writes JSON to --out; a case that fails is a row with
`error`.
"""
import argparse
import datetime
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from output import emit
from cuda_timing import median_ms

SDPA_BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                 "efficient": SDPBackend.EFFICIENT_ATTENTION}


def kernel_floor(n, warmup, iters):
    x = torch.randn(1, device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm the op on a side stream before capture
        for _ in range(3):
            x.add_(1.0)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(n):
            x.add_(1.0)
    graph_ms = median_ms(graph.replay, warmup, iters)

    def eager():
        for _ in range(n):
            x.add_(1.0)

    eager_ms = median_ms(eager, warmup, iters)
    return {"kernels": n, "graph_us_per_kernel": graph_ms * 1e3 / n,
            "eager_us_per_kernel": eager_ms * 1e3 / n}


def weight_stream(m, n, k, warmup, iters):
    copies = 4  # rotate among weight sets so no run finds its weights in L2
    ws = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    turn = [0]

    def run():
        turn[0] = (turn[0] + 1) % copies
        return x @ ws[turn[0]]

    ms = median_ms(run, warmup, iters)
    read = 2.0 * (k * n + m * k + m * n)
    return {"m": m, "n": n, "k": k, "ms": ms, "GBps": read / (ms * 1e-3) / 1e9,
            "tflops": 2.0 * m * n * k / (ms * 1e-3) / 1e12}


def decode_attention(backend, batch, q_heads, kv_heads, head_dim, ctx, warmup, iters):
    q = torch.randn(batch, q_heads, 1, head_dim, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(batch, kv_heads, ctx, head_dim, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(batch, kv_heads, ctx, head_dim, device="cuda", dtype=torch.bfloat16)
    with sdpa_kernel([SDPA_BACKENDS[backend]]):
        ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                       warmup, iters)
    kv_bytes = 2.0 * batch * kv_heads * ctx * head_dim * 2
    return {"backend": backend, "batch": batch, "q_heads": q_heads, "kv_heads": kv_heads,
            "head_dim": head_dim, "ctx": ctx, "ms": ms, "GBps": kv_bytes / (ms * 1e-3) / 1e9}


def guarded(rows, label, fn):
    try:
        rows.append(fn())
    except Exception as e:  # a backend that cannot run this case says why
        rows.append({"case": label, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"})
    torch.cuda.empty_cache()
    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    result = {
        "device": torch.cuda.get_device_name(),
        "versions": f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
                    f"cuDNN {torch.backends.cudnn.version()}",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python3 " + " ".join(sys.argv),
        "kernel_floor": [], "weight_stream": [], "decode_attention": []}
    for n in (1000, 4000):
        guarded(result["kernel_floor"], f"floor {n}", lambda: kernel_floor(n, 3, a.iters))
    # Llama 3 70B at TP 1 and 8: the fused QKV (8192 -> 10240) and down projection
    # (28672 -> 8192), and Llama 3 8B's gate+up (4096 -> 28672).
    for (k, n) in ((8192, 10240), (28672, 8192), (3584, 8192), (4096, 28672)):
        for m in (1, 8, 32, 64, 128, 256, 512):
            guarded(result["weight_stream"], f"gemm {m}x{n}x{k}",
                    lambda: weight_stream(m, n, k, a.warmup, a.iters))
    for backend in ("flash", "cudnn", "efficient"):
        for (batch, ctx) in ((8, 2048), (8, 16384), (64, 2048), (64, 8192), (256, 1024)):
            guarded(result["decode_attention"], f"attention {backend} {batch}x{ctx}",
                    lambda: decode_attention(backend, batch, 64, 8, 128, ctx, a.warmup, a.iters))
    emit(json.dumps(result, indent=1) + "\n", a.out)


if __name__ == "__main__":
    main()
