#!/usr/bin/env python3
"""Times the routed-expert GEMMs of one MoE layer at decode-sized batches on one GPU: what
serving/step_time.h prices as `touched` expert GEMMs streaming their weights.

A rank holds G of a model's E experts, each of width w (the expert FFN width divided by the
experts' tensor-parallel split: vLLM without expert parallelism splits every expert tp ways,
G = E; with expert parallelism a rank holds G = E / ep whole experts). T tokens each pick top_k
distinct experts uniformly (a balanced router); the rows landing on the rank's G experts run as
one grouped GEMM (torch._grouped_mm, the CUTLASS grouped kernel) for gate+up (hidden -> 2w) and
one for down (w -> hidden), BF16. Reference: one dense GEMM of the T tokens against a weight of
the same bytes as the rank's touched experts (the streaming ceiling of a GEMM this skinny).
Reported per case: the medians of --iters runs timed with CUDA events after --warmup runs,
the touched experts and the weight bytes they stream. Writes JSON to --out after each case.
"""
import argparse
import sys

import torch

from cuda_timing import median_ms
from output import emit_results

# (name, hidden, expert ffn, experts E, top_k, [(split, local experts G)]): the shipped MoE
# models; split = the ways each expert's width is cut (tp / ep), G = E / ep.
MODELS = [
    ("qwen3-235b-a22b", 4096, 1536, 128, 8, [(1, 128), (2, 128), (4, 128), (8, 128), (1, 32), (1, 16)]),
    ("mixtral-8x7b", 4096, 14336, 8, 2, [(1, 8), (2, 8), (4, 8), (8, 8)]),
    ("deepseek-v3", 7168, 2048, 256, 8, [(1, 256), (8, 256), (1, 32)]),
]
TOKENS = (1, 8, 32, 128, 512)


def routed_counts(tokens, experts, top_k, local, generator):
    """Rows each of the first `local` experts receives when `tokens` tokens each pick top_k
    distinct experts of `experts` uniformly."""
    picks = torch.rand(tokens, experts, generator=generator).argsort(dim=-1)[:, :top_k]
    counts = torch.bincount(picks.reshape(-1), minlength=experts)[:local]
    return counts.tolist()


def measure(hidden, width, experts, top_k, local, tokens, warmup, iters, generator):
    counts = routed_counts(tokens, experts, top_k, local, generator)
    rows = max(1, sum(counts))
    touched = sum(1 for c in counts if c)
    bf16 = torch.bfloat16
    offs = torch.tensor(counts, dtype=torch.int64).cumsum(0).to(torch.int32).cuda()
    x = torch.randn(rows, hidden, device="cuda", dtype=bf16)
    up = torch.randn(local, 2 * width, hidden, device="cuda", dtype=bf16) * hidden ** -0.5
    down = torch.randn(local, hidden, width, device="cuda", dtype=bf16) * width ** -0.5
    h = torch.randn(rows, width, device="cuda", dtype=bf16)
    row = {"hidden": hidden, "width": width, "experts": experts, "top_k": top_k, "local": local,
           "tokens": tokens, "rows": sum(counts), "touched": touched,
           "weight_bytes": 2 * touched * 3 * width * hidden}
    if sum(counts) == 0:
        return row
    row["up_ms"] = median_ms(lambda: torch._grouped_mm(x, up.transpose(-2, -1), offs=offs),
                             warmup, iters)
    row["down_ms"] = median_ms(lambda: torch._grouped_mm(h, down.transpose(-2, -1), offs=offs),
                               warmup, iters)
    # Streaming ceiling: one GEMM of the tokens against the touched experts' bytes.
    ref_w = torch.randn(touched * 3 * width, hidden, device="cuda", dtype=bf16) * hidden ** -0.5
    xt = torch.randn(tokens, hidden, device="cuda", dtype=bf16)
    row["dense_same_bytes_ms"] = median_ms(lambda: xt @ ref_w.t(), warmup, iters)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="-")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    generator = torch.Generator().manual_seed(0)
    results = []
    for name, hidden, ffn, experts, top_k, layouts in MODELS:
        for split, local in layouts:
            for tokens in TOKENS:
                try:
                    r = measure(hidden, ffn // split, experts, top_k, local, tokens, a.warmup,
                                a.iters, generator)
                except Exception as e:  # noqa: BLE001 - report the case and go on
                    print(f"{name} split {split} G {local} T {tokens}: failed: "
                          f"{type(e).__name__}: {str(e).splitlines()[0][:200]}", file=sys.stderr,
                          flush=True)
                    continue
                r.update(model=name, split=split)
                results.append(r)
                print(f"{name} w {r['width']} G {local} T {tokens}: touched {r['touched']} "
                      f"up {r.get('up_ms', 0):.4f} down {r.get('down_ms', 0):.4f} "
                      f"dense {r.get('dense_same_bytes_ms', 0):.4f} ms", file=sys.stderr, flush=True)
                torch.cuda.empty_cache()
                emit_results(results, a.out)
    emit_results(results, a.out, final=True)


if __name__ == "__main__":
    main()
