#!/usr/bin/env python3
"""Times fused attention forward and backward on one GPU and prints profile `attention:` rows.

The kernels the cost model prices (planner/attention_model.h): cuDNN's fused flash attention
(what TransformerEngine runs for Megatron-Core and NeMo) and FlashAttention-2 (what PyTorch's
SDPA flash backend runs for FSDP2, torchtitan and Composer). Both are reached through
torch.nn.functional.scaled_dot_product_attention with one backend forced, so the numbers are
those kernels plus PyTorch's thin dispatch.

Setup as in FlashAttention's benchmarks (benchmarks/benchmark_flash_attention.py, and the FA3
paper's H100 figures, which profiles/h100-published.yaml holds): 16384 tokens per run
(batch = 16384 / seq_len), hidden 2048 (heads = 2048 / head_dim), bf16, random normal inputs.
FLOPs in FlashAttention's convention: forward 4·batch·seq²·heads·head_dim, halved when causal;
backward 2.5× the forward. Each figure is the median of `--iters` runs timed with CUDA events
after `--warmup` runs. Writes YAML to stdout (or --out); failures are rows with `status`.
"""
import argparse
import datetime
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from output import emit
from cuda_timing import median_ms

BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "fa2": SDPBackend.FLASH_ATTENTION}


def measure(kernel, head_dim, seq_len, causal, tokens, hidden, warmup, iters):
    batch = max(1, tokens // seq_len)
    heads = hidden // head_dim
    shape = (batch, heads, seq_len, head_dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    grad = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
    with sdpa_kernel([BACKENDS[kernel]]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        fwd = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                        warmup, iters)
        bwd = median_ms(lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True),
                        warmup, iters)
    flops = 4.0 * batch * seq_len * seq_len * heads * head_dim * (0.5 if causal else 1.0)
    return flops / (fwd * 1e-3) / 1e12, 2.5 * flops / (bwd * 1e-3) / 1e12, fwd, bwd, batch, heads


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default="cudnn,fa2")
    ap.add_argument("--head-dims", default="64,128,256")
    ap.add_argument("--seq-lens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    dev = torch.cuda.get_device_name()
    versions = (f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
                f"cuDNN {torch.backends.cudnn.version()}")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = [f"# fused attention on {dev} ({versions}); scripts/device/measure_attention.py",
            f"# {a.tokens} tokens per run, hidden {a.hidden}, bf16, median of {a.iters} "
            f"after {a.warmup} warm-ups; fwd/bwd ms are the raw medians",
            "name: attention-measured",
            "provenance:",
            "  how: measured",
            f"  gpu: {dev}",
            "  gpu_count: 1",
            "  nodes: 1",
            f"  cuda: \"{torch.version.cuda}\"",
            f"  date: \"{date}\"",
            f"  command: \"python3 {' '.join(sys.argv)}\"",
            f"  sources: [\"{versions}; cuDNN and FA2 through torch SDPA with one backend forced\"]",
            "attention:"]
    for kernel in a.kernels.split(","):
        for d in map(int, a.head_dims.split(",")):
            for causal in (False, True):
                for s in map(int, a.seq_lens.split(",")):
                    head = (f"kernel: {kernel}, head_dim: {d}, seq_len: {s}, "
                            f"causal: {'true' if causal else 'false'}")
                    try:
                        f_t, b_t, f_ms, b_ms, batch, heads = measure(
                            kernel, d, s, causal, a.tokens, a.hidden, a.warmup, a.iters)
                        src = (f"measured {dev}, torch SDPA {kernel} backend ({versions}), "
                               f"batch {batch} x heads {heads}; fwd {f_ms:.4f} ms, bwd {b_ms:.4f} ms")
                        rows.append(f"  - {{{head}, fwd_tflops: {f_t:.1f}, bwd_tflops: {b_t:.1f}, "
                                    f"source: \"{src}\"}}")
                    except Exception as e:  # a backend that cannot run this shape says why
                        msg = str(e).splitlines()[0].replace('"', "'")[:160]
                        rows.append(f"  # {head}: failed: {type(e).__name__}: {msg}")
                    torch.cuda.empty_cache()
                    print(rows[-1], file=sys.stderr, flush=True)
    emit("\n".join(rows) + "\n", a.out)


if __name__ == "__main__":
    main()
