#!/usr/bin/env python3
"""Times MoE expert GEMMs on one GPU the ways the training frameworks run them (issue 12 item 3:
grouped-GEMM efficiency at small per-expert token counts).

The cost model prices a rank's routed experts as one batched GEMM of `local_experts` equal
groups of `rows` rows each (core/layer_geometry.h rank_gemm, planner/gemm_model.h). Real
frameworks differ from that in two ways measured here:
- the kernel: a grouped GEMM (PyTorch `torch._grouped_mm`, the CUTLASS kernel torchtitan calls;
  TransformerEngine's GroupedLinear and Megatron's --moe-grouped-gemm are of the same kind) or
  one GEMM per expert in a loop (Megatron's SequentialMLP);
- the rows: a router sends each expert a random number of tokens. `routed` draws them as a
  balanced router does (every row to one of the G local experts with equal probability, a
  multinomial; real routers are less balanced, so this is the least imbalance there is).

For each expert shape of the shipped MoE models (gate+up fused: hidden -> 2·ffn; down:
ffn -> hidden), each local expert count G and mean rows per expert m:
- dense_fwd: one GEMM of G·m rows (same FLOPs, one weight): the ceiling;
- bmm_fwd: torch.bmm of G equal groups (what the cost model prices);
- gmm_equal_fwd / gmm_equal_fwdbwd: torch._grouped_mm, equal groups; fwd+bwd through autograd
  (input and weight gradients);
- gmm_routed_fwd / gmm_routed_fwdbwd: the same with routed group sizes;
- seq_routed_fwd: one torch.mm per expert over the routed groups.
Each time is the median of --iters runs timed with CUDA events after --warmup runs, on random
normal inputs. Correctness: the routed grouped output against the per-expert loop's (whose
output starts as NaN, so an unwritten row fails), and the equal grouped output against bmm;
relative error ‖a−b‖/‖b‖ must be under 1e-2. A case that fails is a row with `error`.
Writes JSON to --out after each case (a run cut at its limit keeps what finished).
"""
import argparse
import datetime
import json
import subprocess
import sys

import torch

from cuda_timing import median_ms
from output import emit

# (name, hidden, expert ffn, experts, top_k, local expert counts G to try): the shipped MoE
# models (models/*.yaml); G = experts / ep for the ep the planner considers.
MODELS = [
    ("mixtral-8x7b", 4096, 14336, 8, 2, (2, 8)),
    ("deepseek-v3", 7168, 2048, 256, 8, (8, 32)),
    ("qwen3-235b-a22b", 4096, 1536, 128, 8, (8, 32)),
]
ROWS = (32, 128, 512, 2048, 8192)


def tflops(flop, ms):
    return flop / (ms * 1e-3) / 1e12


def rel_error(a, b):
    a = a.float()
    b = b.float()
    if not torch.isfinite(a).all() or not torch.isfinite(b).all():
        return float("inf")
    return (torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b)).item()


def routed_counts(groups, rows, generator):
    """Rows of G·rows tokens sent to G experts with equal probability (a balanced router)."""
    draws = torch.randint(0, groups, (groups * rows,), generator=generator)
    return torch.bincount(draws, minlength=groups).tolist()


def offsets(counts):
    return torch.tensor(counts, dtype=torch.int64).cumsum(0).to(torch.int32).cuda()


def measure(k, n, groups, rows, warmup, iters, generator):
    total = groups * rows
    flop = 2.0 * total * k * n
    bf16 = torch.bfloat16
    x = torch.randn(total, k, device="cuda", dtype=bf16)
    # Weights stored (G, N, K) as nn.Linear does; the grouped kernel takes the (G, K, N) view.
    w_nk = torch.randn(groups, n, k, device="cuda", dtype=bf16) / k ** 0.5
    w = w_nk.transpose(-2, -1)
    counts = routed_counts(groups, rows, generator)
    equal_offs = offsets([rows] * groups)
    routed_offs = offsets(counts)
    row = {"k": k, "n": n, "groups": groups, "rows": rows, "routed_min": min(counts),
           "routed_max": max(counts), "gflop": flop / 1e9}

    dense_w = w[0].contiguous()
    row["dense_fwd_ms"] = median_ms(lambda: x @ dense_w, warmup, iters)
    x3 = x.view(groups, rows, k)
    w_bmm = w.contiguous()
    row["bmm_fwd_ms"] = median_ms(lambda: torch.bmm(x3, w_bmm), warmup, iters)
    row["gmm_equal_fwd_ms"] = median_ms(lambda: torch._grouped_mm(x, w, offs=equal_offs),
                                        warmup, iters)
    row["gmm_routed_fwd_ms"] = median_ms(lambda: torch._grouped_mm(x, w, offs=routed_offs),
                                         warmup, iters)
    row["equal_rel_error"] = rel_error(torch._grouped_mm(x, w, offs=equal_offs),
                                       torch.bmm(x3, w_bmm).view(total, n))

    seq_out = torch.full((total, n), float("nan"), device="cuda", dtype=bf16)
    starts = [0]
    for c in counts:
        starts.append(starts[-1] + c)

    def sequential():
        for g in range(groups):
            if counts[g]:
                torch.mm(x[starts[g]:starts[g + 1]], w[g], out=seq_out[starts[g]:starts[g + 1]])

    row["seq_routed_fwd_ms"] = median_ms(sequential, warmup, iters)
    row["routed_rel_error"] = rel_error(torch._grouped_mm(x, w, offs=routed_offs), seq_out)

    xg = x.detach().clone().requires_grad_(True)
    wg = w_nk.detach().clone().requires_grad_(True)
    grad = torch.randn(total, n, device="cuda", dtype=bf16)

    def fwd_bwd(offs):
        def run():
            xg.grad = None
            wg.grad = None
            torch._grouped_mm(xg, wg.transpose(-2, -1), offs=offs).backward(grad)
        return run

    row["gmm_equal_fwdbwd_ms"] = median_ms(fwd_bwd(equal_offs), warmup, iters)
    row["gmm_routed_fwdbwd_ms"] = median_ms(fwd_bwd(routed_offs), warmup, iters)
    for key in [key for key in row if key.endswith("_ms")]:
        passes = 3.0 if "fwdbwd" in key else 1.0
        row[key.replace("_ms", "_tflops")] = tflops(passes * flop, row[key])
    if max(row["equal_rel_error"], row["routed_rel_error"]) > 1e-2:
        row["error"] = "grouped output differs from the reference"
    return row


def device_facts():
    props = torch.cuda.get_device_properties(0)
    facts = {"device": props.name, "sms": props.multi_processor_count, "torch": torch.__version__,
             "cuda": torch.version.cuda, "date": datetime.date.today().isoformat()}
    try:
        facts["driver"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        facts["driver"] = f"unknown ({e})"
    return facts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="-")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="one model, two row counts")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    generator = torch.Generator().manual_seed(20261126)
    result = {"what": "MoE expert GEMMs: dense, bmm, grouped (equal and routed), per-expert loop",
              "method": "median of %d CUDA-event timings after %d warm-ups, bf16, random normal "
                        "inputs; fwdbwd through autograd (3x the forward FLOPs)"
                        % (args.iters, args.warmup),
              **device_facts(), "rows": []}
    models = MODELS[:1] if args.quick else MODELS
    rows = ROWS[1:3] if args.quick else ROWS
    for name, hidden, ffn, _experts, _top_k, group_counts in models:
        for map_name, k, n in (("up", hidden, 2 * ffn), ("down", ffn, hidden)):
            for groups in group_counts:
                for r in rows:
                    try:
                        row = measure(k, n, groups, r, args.warmup, args.iters, generator)
                    except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
                        row = {"k": k, "n": n, "groups": groups, "rows": r,
                               "error": str(e).splitlines()[0][:300]}
                    torch.cuda.empty_cache()
                    row = {"model": name, "map": map_name, **row}
                    result["rows"].append(row)
                    emit(json.dumps(result, indent=1) + "\n", args.out)
                    if "error" in row:
                        print(f"{name} {map_name} G={groups} m={r}: {row['error']}")
                    else:
                        print(f"{name:16s} {map_name:4s} G={groups:3d} m={r:5d} "
                              f"dense {row['dense_fwd_tflops']:6.1f} bmm {row['bmm_fwd_tflops']:6.1f} "
                              f"gmm= {row['gmm_equal_fwd_tflops']:6.1f} gmm~ "
                              f"{row['gmm_routed_fwd_tflops']:6.1f} seq~ "
                              f"{row['seq_routed_fwd_tflops']:6.1f} fb= "
                              f"{row['gmm_equal_fwdbwd_tflops']:6.1f} fb~ "
                              f"{row['gmm_routed_fwdbwd_tflops']:6.1f} TFLOP/s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
