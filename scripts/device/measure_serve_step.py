#!/usr/bin/env python3
"""Times serving engine steps of a Llama-shaped model on one GPU: what serving/step_time.h prices.

A step is one forward pass of the batch an engine formed, as the engines run it:
- decode: `batch` sequences, each with `context` tokens already cached, generate one token: per
  layer RMSNorm, the fused QKV GEMM, rotary embedding at the sequence's position, the new K/V
  written into the cache, attention of the one query against context + 1 cached tokens (GQA,
  through SDPA), the output projection and residual, RMSNorm, the gate+up GEMM, SiLU·up, the down
  GEMM and residual; then the final norm, the LM head in bf16, FP32 logits and a greedy sample
  (argmax) per sequence;
- prefill: one prompt of `tokens` tokens, causal attention over itself (SDPA, cuDNN or flash),
  its K/V written into the cache, and the LM head for its last token only;
- mixed: what continuous batching with chunked prefill runs: `batch` decodes (each `context`
  tokens cached) and one prompt chunk of `tokens` tokens after `chunk_context` of its prompt
  already cached, as one flattened token batch through the GEMMs, norms and activation (as vLLM
  and TensorRT-LLM flatten a step's tokens); attention per part (the decodes' one query each, the
  chunk's queries causal from the bottom right over its cached prefix and itself); the LM head for
  the decodes and the chunk's last token.
The whole step is captured in one CUDA graph and replayed (vLLM and TensorRT-LLM replay decode
steps from CUDA graphs). Two builds of the same step: `graph` (eager PyTorch kernels, one per
op) and `compiled` (each layer through torch.compile, Inductor fusing the element-wise ops into
Triton kernels and calling cuBLAS for the GEMMs, as vLLM's V1 engine compiles its models), then
captured. MoE models (`moe:`) run routed experts as grouped GEMMs (torch._grouped_mm) over the
router's counts, graph build only unless --compile-moe (Inductor then fuses the routing's
element-wise kernels as an engine's fused top-k and permute kernels do).

`--weights fp8` stores the layers' linear weights in FP8 (e4m3) and runs them as W8A8 GEMMs
(torch._scaled_mm, per-tensor scales, activations cast to FP8 with a static scale as TensorRT-LLM's
FP8 checkpoints carry, BF16 out); the LM head stays BF16, the KV cache BF16; dense models only.

A tensor-parallel rank is emulated by shrinking the sharded widths by `tp` (its compute without
its all-reduces), as measure_step.py does. Random normal weights and inputs, bf16.
Reported per step: the median of `--iters` graph replays timed with CUDA events after
`--warmup` replays. JSON is rewritten after each step (a run cut short keeps what it measured).
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F
import yaml

from output import emit_results
from cuda_timing import median_ms


class Dims:
    def __init__(self, cfg, tp):
        self.hidden = cfg["hidden"]
        self.head_dim = cfg.get("head_dim", self.hidden // cfg["heads"])
        self.heads = cfg["heads"] // tp
        self.kv_heads = max(1, cfg.get("kv_heads", cfg["heads"]) // tp)
        self.ffn = cfg["ffn_hidden"] // tp
        self.vocab = cfg["vocab"] // tp
        self.theta = float(cfg.get("rope_theta", 10000))
        self.qk_norm = bool(cfg.get("qk_norm", False))  # Qwen3: RMSNorm over each q and k head
        moe = cfg.get("moe")
        self.experts = moe["experts"] if moe else 0
        self.top_k = moe["top_k"] if moe else 0
        self.expert_ffn = moe["expert_ffn_hidden"] // tp if moe else 0


def weights(d, layers, fp8=False):
    """One dict of weights per layer, initialised on the GPU (scaled normal: no overflow)."""
    def w(rows, cols):
        m = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16) * cols ** -0.5
        return m.to(torch.float8_e4m3fn) if fp8 else m

    out = []
    qkv = (d.heads + 2 * d.kv_heads) * d.head_dim
    for _ in range(layers):
        layer = {"n1": torch.ones(d.hidden, device="cuda", dtype=torch.bfloat16),
                 "n2": torch.ones(d.hidden, device="cuda", dtype=torch.bfloat16),
                 "qkv": w(qkv, d.hidden), "o": w(d.hidden, d.heads * d.head_dim)}
        if d.qk_norm:
            layer["qn"] = torch.ones(d.head_dim, device="cuda", dtype=torch.bfloat16)
            layer["kn"] = torch.ones(d.head_dim, device="cuda", dtype=torch.bfloat16)
        if d.experts:
            layer["router"] = w(d.experts, d.hidden)
            # Stored (experts, out, in) as nn.Linear stores each; the grouped kernel takes the
            # transposed view (torchtitan's layout, as measure_step.py runs it).
            layer["e_up"] = torch.randn(d.experts, 2 * d.expert_ffn, d.hidden, device="cuda",
                                        dtype=torch.bfloat16) * d.hidden ** -0.5
            layer["e_down"] = torch.randn(d.experts, d.hidden, d.expert_ffn, device="cuda",
                                          dtype=torch.bfloat16) * d.expert_ffn ** -0.5
        else:
            layer["up"] = w(2 * d.ffn, d.hidden)
            layer["down"] = w(d.hidden, d.ffn)
        out.append(layer)
    return out


def rope_tables(d, positions):
    inv = 1.0 / d.theta ** (torch.arange(0, d.head_dim, 2, device="cuda") / d.head_dim)
    ang = torch.outer(positions.float(), inv)
    return (torch.cat((ang.cos(), ang.cos()), -1).to(torch.bfloat16),
            torch.cat((ang.sin(), ang.sin()), -1).to(torch.bfloat16))


def rope(x, cos, sin):  # x: (batch, heads, tokens, head_dim); cos/sin: (tokens, head_dim)
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


def experts(x, layer, top_k):
    """Routed experts, grouped-GEMM style; counts by scatter_add (no host sync: graph-safe)."""
    n_exp = layer["router"].shape[0]
    probs = (x @ layer["router"].t()).float().softmax(dim=-1)
    wts, chosen = probs.topk(top_k, dim=-1)
    wts = (wts / wts.sum(dim=-1, keepdim=True)).to(x.dtype)
    flat = chosen.reshape(-1)
    order = flat.argsort(stable=True)
    counts = torch.zeros(n_exp, device=x.device, dtype=torch.int32).scatter_add_(
        0, flat.to(torch.int64), torch.ones_like(flat, dtype=torch.int32))
    offs = counts.cumsum(0).to(torch.int32)
    token = order // top_k
    up = torch._grouped_mm(x[token], layer["e_up"].transpose(-2, -1), offs=offs)
    a, g = up.chunk(2, dim=-1)
    out = torch._grouped_mm(F.silu(a) * g, layer["e_down"].transpose(-2, -1), offs=offs)
    out = out * wts.reshape(-1)[order].unsqueeze(-1)
    return torch.zeros_like(x).index_add_(0, token, out)


def make_linear(fp8):
    """y = x · wᵀ for w stored (out, in): BF16 matmul, or FP8 W8A8 through torch._scaled_mm."""
    if not fp8:
        return lambda x, w: x @ w.t()
    one = torch.ones((), device="cuda")

    def linear(x, w):
        x2 = x.reshape(-1, x.shape[-1]).to(torch.float8_e4m3fn)  # static scale 1
        y = torch._scaled_mm(x2, w.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        return y.view(*x.shape[:-1], w.shape[0])
    return linear


def qkv(d, linear, x, layer):
    """RMSNorm, then the fused QKV projection of x (any leading shape), split into q, k, v."""
    h = F.rms_norm(x, (d.hidden,), layer["n1"], 1e-5)
    return linear(h, layer["qkv"]).split(
        [d.heads * d.head_dim, d.kv_heads * d.head_dim, d.kv_heads * d.head_dim], dim=-1)


def heads(d, y, rows, n, cos, sin, norm):
    """y's `rows` = (batch, tokens) tokens as n heads, (batch, n, tokens, head_dim), after Qwen3's
    per-head RMSNorm (`norm`: its weight, or None) and rotary embedding."""
    y = y.view(rows[0], rows[1], n, d.head_dim)
    if norm is not None:
        y = F.rms_norm(y, (d.head_dim,), norm, 1e-6)
    return rope(y.transpose(1, 2), cos, sin)


def mlp(d, linear, x, layer):
    """The residual MLP block of x (any leading shape): RMSNorm, SwiGLU or routed experts."""
    h = F.rms_norm(x, (d.hidden,), layer["n2"], 1e-5)
    if d.experts:
        return x + experts(h.reshape(-1, d.hidden), layer, d.top_k).view(x.shape)
    a, g = linear(h, layer["up"]).chunk(2, dim=-1)
    return x + linear(F.silu(a) * g, layer["down"])


def make_layer(d, fp8=False):
    linear = make_linear(fp8)

    def layer_fn(x, layer, k_cache, v_cache, cos, sin, start, causal):
        """x: (batch, tokens, hidden); the cache (batch, kv_heads, max_tokens, head_dim) gets the
        new K/V at [start, start + tokens) and attention reads [0, start + tokens)."""
        b, t, _ = x.shape
        q, k, v = qkv(d, linear, x, layer)
        q = heads(d, q, (b, t), d.heads, cos, sin, layer.get("qn"))
        k = heads(d, k, (b, t), d.kv_heads, cos, sin, layer.get("kn"))
        k_cache[:, :, start:start + t] = k
        v_cache[:, :, start:start + t] = v.view(b, t, d.kv_heads, d.head_dim).transpose(1, 2)
        keys, values = k_cache[:, :, :start + t], v_cache[:, :, :start + t]
        o = F.scaled_dot_product_attention(q, keys, values, is_causal=causal, enable_gqa=True)
        x = x + linear(o.transpose(1, 2).reshape(b, t, -1), layer["o"])
        return mlp(d, linear, x, layer)

    return layer_fn


def make_mixed_layer(d, fp8=False):
    """A step of `b` decodes and one prompt chunk of `t` tokens, flattened to (b + t, hidden)."""
    linear = make_linear(fp8)
    from torch.nn.attention.bias import causal_lower_right

    def layer_fn(x, layer, dec, pre):
        """dec / pre: (k_cache, v_cache, cos, sin, start) of the decodes and of the chunk."""
        (kd, vd, cos_d, sin_d, start_d), (kp, vp, cos_p, sin_p, start_p) = dec, pre
        b, t = kd.shape[0], cos_p.shape[0]
        q, k, v = qkv(d, linear, x, layer)
        qn, kn = layer.get("qn"), layer.get("kn")
        qd = heads(d, q[:b], (b, 1), d.heads, cos_d, sin_d, qn)
        qp = heads(d, q[b:], (1, t), d.heads, cos_p, sin_p, qn)
        kd[:, :, start_d:start_d + 1] = heads(d, k[:b], (b, 1), d.kv_heads, cos_d, sin_d, kn)
        kp[:, :, start_p:start_p + t] = heads(d, k[b:], (1, t), d.kv_heads, cos_p, sin_p, kn)
        vd[:, :, start_d:start_d + 1] = v[:b].view(b, 1, d.kv_heads, d.head_dim).transpose(1, 2)
        vp[:, :, start_p:start_p + t] = v[b:].view(1, t, d.kv_heads, d.head_dim).transpose(1, 2)
        od = F.scaled_dot_product_attention(qd, kd[:, :, :start_d + 1], vd[:, :, :start_d + 1],
                                            enable_gqa=True)
        span = start_p + t
        mask = causal_lower_right(t, span) if start_p > 0 else None
        op = F.scaled_dot_product_attention(qp, kp[:, :, :span], vp[:, :, :span],
                                            attn_mask=mask, is_causal=start_p == 0,
                                            enable_gqa=True)
        o = torch.cat((od.transpose(1, 2).reshape(b, -1), op.transpose(1, 2).reshape(t, -1)))
        x = x + linear(o, layer["o"])
        return mlp(d, linear, x, layer)

    return layer_fn


def sample(d, head, rows):
    """The final norm, the LM head in bf16, FP32 logits and a greedy sample of each row."""
    last = F.rms_norm(rows, (d.hidden,), head["norm"], 1e-5)
    logits = (last @ head["w"].t()).float()
    head["sampled"].copy_(logits.argmax(dim=-1))


def mixed_step_fn(d, layers, caches, head, layer_fn, x, dec, pre):
    def step():
        y = x
        for layer, (kd, vd, kp, vp) in zip(layers, caches):
            y = layer_fn(y, layer, (kd, vd) + dec, (kp, vp) + pre)
        b = caches[0][0].shape[0]
        sample(d, head, torch.cat((y[:b], y[-1:])))  # the decodes and the chunk's last token
    return step


def step_fn(d, layers, caches, head, layer_fn, x, cos, sin, start, causal):
    def step():
        y = x
        for layer, (kc, vc) in zip(layers, caches):
            y = layer_fn(y, layer, kc, vc, cos, sin, start, causal)
        sample(d, head, y[:, -1])
    return step


def kv_cache(d, rows, length):
    """One layer's K or V cache: `rows` sequences of `length` tokens (random: attention reads it)."""
    return torch.randn(rows, d.kv_heads, length, d.head_dim, device="cuda", dtype=torch.bfloat16)


def compiled_layer(layer_fn, compiled):
    """layer_fn, or it through torch.compile (one compiled shape per run: no recompile limit
    across runs)."""
    if not compiled:
        return layer_fn
    torch._dynamo.reset()
    return torch.compile(layer_fn, dynamic=False)


def mixed_step(d, layers, head, batch, tokens, context, chunk_context, compiled, fp8):
    """The step function of `batch` decodes at `context` cached tokens and one chunk of `tokens`
    after `chunk_context` cached (mixed); it holds its caches."""
    caches = [(kv_cache(d, batch, context + 1), kv_cache(d, batch, context + 1),
               kv_cache(d, 1, chunk_context + tokens), kv_cache(d, 1, chunk_context + tokens))
              for _ in layers]
    x = torch.randn(batch + tokens, d.hidden, device="cuda", dtype=torch.bfloat16)
    dec = rope_tables(d, torch.arange(context, context + 1, device="cuda")) + (context,)
    pre = rope_tables(d, torch.arange(chunk_context, chunk_context + tokens, device="cuda")) + (
        chunk_context,)
    layer_fn = compiled_layer(make_mixed_layer(d, fp8), compiled)
    return mixed_step_fn(d, layers, caches, head, layer_fn, x, dec, pre)


def run(cfg, n_layers, tp, kind, batch, tokens, context, compiled, warmup, iters, fp8=False,
        chunk_context=0):
    """kind: decode (batch sequences, 1 token each, `context` cached), prefill (1 sequence of
    `tokens` tokens, nothing cached) or mixed (the decodes and one chunk of `tokens` after
    `chunk_context` cached)."""
    torch.manual_seed(0)
    d = Dims(cfg, tp)
    layers = weights(d, n_layers, fp8)
    head = {"norm": torch.ones(d.hidden, device="cuda", dtype=torch.bfloat16),
            "w": torch.randn(d.vocab, d.hidden, device="cuda", dtype=torch.bfloat16) * d.hidden ** -0.5,
            "sampled": torch.zeros(batch + (kind == "mixed"), device="cuda", dtype=torch.int64)}
    if kind == "mixed":
        return timed_graph(mixed_step(d, layers, head, batch, tokens, context, chunk_context,
                                      compiled, fp8), warmup, iters)
    t = 1 if kind == "decode" else tokens
    start = context if kind == "decode" else 0
    caches = [(kv_cache(d, batch, start + t), kv_cache(d, batch, start + t))
              for _ in range(n_layers)]
    x = torch.randn(batch, t, d.hidden, device="cuda", dtype=torch.bfloat16)
    cos, sin = rope_tables(d, torch.arange(start, start + t, device="cuda"))
    layer_fn = compiled_layer(make_layer(d, fp8), compiled)
    step = step_fn(d, layers, caches, head, layer_fn, x, cos, sin, start, kind == "prefill")
    return timed_graph(step, warmup, iters)


def timed_graph(step, warmup, iters):
    """Warm `step` (and compile it) on a side stream, capture it in one CUDA graph, time replays.
    The step's tensors are freed when the caller drops it (main empties the cache after each)."""
    t0 = time.time()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm (and compile) on a side stream before capture
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    build_s = time.time() - t0
    ms = median_ms(graph.replay, warmup, iters)
    return {"step_ms": ms, "build_s": round(build_s, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", action="append", required=True,
                    help="MODEL.yaml:LAYERS:TP:decode:BATCH:CONTEXT, MODEL.yaml:LAYERS:TP:prefill:TOKENS "
                         "or MODEL.yaml:LAYERS:TP:mixed:BATCH:CONTEXT:TOKENS:CHUNK_CONTEXT "
                         "(repeatable)")
    ap.add_argument("--modes", default="graph,compiled", help="graph, compiled or both")
    ap.add_argument("--weights", default="bf16", choices=["bf16", "fp8"])
    ap.add_argument("--compile-moe", action="store_true",
                    help="also compile MoE models' layers (routing and grouped experts)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    results = []
    for spec in a.config:
        parts = spec.split(":")
        path, layers, tp, kind = parts[0], int(parts[1]), int(parts[2]), parts[3]
        cfg = yaml.safe_load(open(path))
        chunk_context = 0
        if kind == "decode":
            batch, tokens, context = int(parts[4]), 1, int(parts[5])
        elif kind == "mixed":
            batch, context, tokens, chunk_context = (int(p) for p in parts[4:8])
        else:
            batch, tokens, context = 1, int(parts[4]), 0
        for mode in a.modes.split(","):
            compiled = mode == "compiled"
            if cfg.get("moe") and (a.weights == "fp8" or kind == "mixed" or
                                   (compiled and not a.compile_moe)):
                continue  # grouped experts: BF16, graph build unless --compile-moe (docstring)
            try:
                r = run(cfg, layers, tp, kind, batch, tokens, context, compiled, a.warmup, a.iters,
                        a.weights == "fp8", chunk_context)
            except Exception as e:  # noqa: BLE001 - report the configuration and go on
                print(f"{spec} {mode}: failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                      file=sys.stderr, flush=True)
                continue
            finally:
                torch.cuda.empty_cache()  # the run's tensors went with it
            r.update(model=cfg["name"], layers=layers, tp=tp, kind=kind, batch=batch,
                     tokens=tokens, context=context, mode=mode, weights=a.weights)
            if kind == "mixed":
                r["chunk_context"] = chunk_context
            results.append(r)
            print(f"{spec} {mode:8s} {r['step_ms']:9.3f} ms (built in {r['build_s']} s)",
                  file=sys.stderr, flush=True)
            emit_results(results, a.out)
    emit_results(results, a.out, final=True)


if __name__ == "__main__":
    main()
