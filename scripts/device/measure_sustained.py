#!/usr/bin/env python3
"""Is the power-limited (sustained) GEMM throughput a fixed share of each shape's burst rate?

meshplan's measured profiles relate one sustained run (8192^3 bf16, back to back for 30 s) to
the sweep's sample of that shape and apply the same ratio to every shape. This runs several
shapes back to back for `--seconds` each, on random normal operands, in bf16 or (`--dtype fp8`)
e4m3 through torch._scaled_mm, and prints per shape the burst rate (first 0.2 s), the rate over
the last quarter, and their ratio. Windows of about 50 ms are timed with CUDA events.
"""
import argparse
import json
import statistics
import sys

import torch

from output import emit
from cuda_timing import elapsed_ms, event_pair


def product(m, n, k, dtype):
    """The GEMM to run back to back: bf16 `a @ b`, or fp8 (e4m3 operands, unit scales, bf16 out)
    through torch._scaled_mm as TensorRT-LLM's and TransformerEngine's FP8 linears run it."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    if dtype == "bf16":
        bt = b.t()
        return lambda: a @ bt
    a8 = a.to(torch.float8_e4m3fn)
    b8 = b.to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants its second operand
    one = torch.ones((), device="cuda", dtype=torch.float32)
    return lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def sustained(m, n, k, seconds, dtype):
    run = product(m, n, k, dtype)
    flops = 2.0 * m * n * k
    start, stop = event_pair()
    one = elapsed_ms(run, start, stop)
    one = min(one, elapsed_ms(run, start, stop))
    per_window = max(1, int(50.0 / one))

    def window():
        for _ in range(per_window):
            run()

    rates, spent = [], 0.0
    while spent < seconds * 1e3:
        ms = elapsed_ms(window, start, stop)
        spent += ms
        rates.append(flops * per_window / ms / 1e9)
    burst_n = max(1, int(len(rates) * 0.2 / seconds))
    burst = statistics.median(rates[:burst_n])
    last = statistics.median(rates[-max(1, len(rates) // 4):])
    return {"m": m, "n": n, "k": k, "dtype": dtype, "burst_tflops": burst, "last_quarter_tflops": last,
            "ratio": last / burst, "windows": [round(r) for r in rates]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--dtype", choices=["bf16", "fp8"], default="bf16")
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    shapes = [(8192, 8192, 8192), (2048, 18992, 4096), (16384, 18992, 4096)]
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}
    for m, n, k in shapes:
        r = sustained(m, n, k, a.seconds, a.dtype)
        result["rows"].append(r)
        print(f"{a.dtype} {m}x{n}x{k}: burst {r['burst_tflops']:.1f}, last quarter "
              f"{r['last_quarter_tflops']:.1f} TFLOP/s, ratio {r['ratio']:.3f}",
              file=sys.stderr, flush=True)
    emit(json.dumps(result, indent=1) + "\n", a.out)


if __name__ == "__main__":
    main()
