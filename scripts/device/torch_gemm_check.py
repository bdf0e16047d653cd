#!/usr/bin/env python3
"""Cross-checks meshplan's cuBLASLt GEMM figures with PyTorch (the MAMF method: random normal
operands, median of timed runs after warm-ups) at a few shapes, bf16 and fp8 (torch._scaled_mm,
per-tensor scales 1.0, bf16 out). Prints one line per shape: m n k dtype TFLOP/s."""
import sys

import torch

from cuda_timing import median_ms

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (16384, 8192, 1024), (2048, 4096, 4096)]


for m, n, k in SHAPES:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()  # TN, as cuBLASLt runs it
    flops = 2.0 * m * n * k
    ms = median_ms(lambda: a @ b, 10, 50)
    print(f"{m} {n} {k} bf16 {flops / ms / 1e9:.1f}", flush=True)
    try:
        a8, b8 = a.to(torch.float8_e4m3fn), b.t().contiguous().to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda")
        ms = median_ms(lambda: torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16), 10, 50)
        print(f"{m} {n} {k} fp8 {flops / ms / 1e9:.1f}", flush=True)
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"{m} {n} {k} fp8 failed: {e}".splitlines()[0], file=sys.stderr)
