#!/usr/bin/env python3
"""Times one training micro-batch (forward + backward, no optimizer) of a Llama-shaped model on
one GPU and splits the GPU's time by kernel class, to check the cost model's compute term.

MoE models (a `moe:` section) run their MoE layers as the PyTorch-native stacks do (torchtitan's
GroupedExperts): a router GEMM over all experts, fp32 softmax and top-k, the routed copies
sorted by expert (a gather), the experts as two torch._grouped_mm calls (gate and up fused, then
down) over the counts the router gave, weighted and summed back into place (index_add), plus
shared experts as a dense MLP. All experts are local (one GPU, ep = 1).

The model is written out in plain PyTorch with the kernels the frameworks use: cuBLASLt GEMMs
(nn.Linear), fused attention through SDPA (cuDNN backend; GQA natively where the backend takes
it), RMSNorm (nn.RMSNorm), SwiGLU, rotary embedding as two multiplies and a rotation, residual
adds, bf16 weights and activations, fp32 cross entropy (as Megatron upcasts the logits). A
tensor-parallel rank is emulated by shrinking the sharded widths by `--tp` (heads, KV heads,
FFN, vocabulary): the rank's compute without its communication.

Reported per configuration: the median wall time of forward and of backward over `--iters`
runs (CUDA events, after warm-ups), and from torch.profiler over 3 more runs the GPU time by
kernel class (gemm, attention, other) and the time no kernel ran. `--compile` also times the
blocks under torch.compile (`--modes eager,compiled`; what torchtitan does per transformer block).
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.nn.attention import SDPBackend, sdpa_kernel

from output import emit
from cuda_timing import elapsed_ms, event_pair, median_ms


def norm(kind, hidden):
    return nn.LayerNorm(hidden, eps=1e-5) if kind == "layernorm" else nn.RMSNorm(hidden, eps=1e-5)


class Experts(nn.Module):
    """Routed experts (and shared ones) of an MoE layer, grouped-GEMM style (SwiGLU experts)."""

    def __init__(self, hidden, experts, top_k, ffn, shared):
        super().__init__()
        self.experts, self.top_k = experts, top_k
        self.router = nn.Linear(hidden, experts, bias=False)
        # Stored (experts, out, in) as nn.Linear stores each; the grouped kernel takes the
        # transposed (experts, in, out) view (torchtitan's layout).
        self.w_up = nn.Parameter(torch.randn(experts, 2 * ffn, hidden) * hidden ** -0.5)
        self.w_down = nn.Parameter(torch.randn(experts, hidden, ffn) * ffn ** -0.5)
        self.shared = None
        if shared:
            self.shared_up = nn.Linear(hidden, 2 * ffn * shared, bias=False)
            self.shared_down = nn.Linear(ffn * shared, hidden, bias=False)
            self.shared = True

    def forward(self, x):
        shape = x.shape
        xs = x.reshape(-1, shape[-1])
        probs = self.router(xs).float().softmax(dim=-1)
        weights, chosen = probs.topk(self.top_k, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        flat = chosen.reshape(-1)
        order = flat.argsort(stable=True)
        offs = torch.bincount(flat, minlength=self.experts).cumsum(0).to(torch.int32)
        token = order // self.top_k
        up = torch._grouped_mm(xs[token], self.w_up.transpose(-2, -1), offs=offs)
        a, g = up.chunk(2, dim=-1)
        out = torch._grouped_mm(F.silu(a) * g, self.w_down.transpose(-2, -1), offs=offs)
        out = out * weights.reshape(-1)[order].unsqueeze(-1)
        y = torch.zeros_like(xs).index_add_(0, token, out)
        if self.shared:
            a, g = self.shared_up(xs).chunk(2, dim=-1)
            y = y + self.shared_down(F.silu(a) * g)
        return y.view(shape)


class Block(nn.Module):
    def __init__(self, hidden, heads, kv_heads, head_dim, ffn, mlp="swiglu", norm_kind="rmsnorm",
                 moe=None):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.gated = heads, kv_heads, head_dim, mlp == "swiglu"
        self.norm1, self.norm2 = norm(norm_kind, hidden), norm(norm_kind, hidden)
        self.qkv = nn.Linear(hidden, (heads + 2 * kv_heads) * head_dim, bias=False)
        self.proj = nn.Linear(heads * head_dim, hidden, bias=False)
        self.moe = None
        if moe:
            self.moe = Experts(hidden, moe["experts"], moe["top_k"], moe["expert_ffn_hidden"],
                               moe.get("shared_experts", 0))
            return
        self.up = nn.Linear(hidden, (2 if self.gated else 1) * ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(
            [self.heads * self.head_dim, self.kv_heads * self.head_dim,
             self.kv_heads * self.head_dim], dim=-1)
        q = q.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        o = attention(q, k, v)
        x = x + self.proj(o.transpose(1, 2).reshape(b, t, -1))
        if self.moe is not None:
            return x + self.moe(self.norm2(x))
        y = self.up(self.norm2(x))
        if self.gated:
            a, g = y.chunk(2, dim=-1)
            return x + self.down(F.silu(a) * g)
        return x + self.down(F.gelu(y, approximate="tanh"))


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


GQA_NATIVE = True


def attention(q, k, v):
    global GQA_NATIVE
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        if GQA_NATIVE and k.shape[1] != q.shape[1]:
            try:
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            except RuntimeError:
                GQA_NATIVE = False
        if k.shape[1] != q.shape[1]:
            rep = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class Model(nn.Module):
    def __init__(self, cfg, layers, tp):
        super().__init__()
        h, hd = cfg["hidden"], cfg.get("head_dim", cfg["hidden"] // cfg["heads"])
        self.vocab = cfg["vocab"] // tp
        self.embed = nn.Embedding(self.vocab, h)
        kv = cfg.get("kv_heads", cfg["heads"])
        moe = cfg.get("moe")
        if moe and tp > 1:
            raise ValueError("MoE layers are measured at tp = 1 only")
        dense = moe.get("first_dense_layers", 0) if moe else layers
        self.blocks = nn.ModuleList(
            Block(h, cfg["heads"] // tp, max(1, kv // tp), hd, cfg["ffn_hidden"] // tp,
                  cfg.get("mlp", "swiglu"), cfg.get("norm", "rmsnorm"),
                  moe if i >= dense else None)
            for i in range(layers))
        self.norm = norm(cfg.get("norm", "rmsnorm"), h)
        self.head = nn.Linear(h, self.vocab, bias=False)
        self.head_dim, self.theta = hd, float(cfg.get("rope_theta", 10000))

    def forward(self, tokens, labels):
        t = tokens.shape[1]
        inv = 1.0 / self.theta ** (torch.arange(0, self.head_dim, 2, device=tokens.device) / self.head_dim)
        ang = torch.outer(torch.arange(t, device=tokens.device, dtype=torch.float32), inv)
        cos = torch.cat((ang.cos(), ang.cos()), -1).to(torch.bfloat16)
        sin = torch.cat((ang.sin(), ang.sin()), -1).to(torch.bfloat16)
        x = self.embed(tokens)
        for blk in self.blocks:
            x = blk(x, cos, sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, self.vocab), labels.view(-1))


def kernel_class(name):
    n = name.lower()
    if any(s in n for s in ("fmha", "flash", "cudnn", "sdpa", "attention")):
        return "attention"
    if any(s in n for s in ("gemm", "xmma", "cutlass", "nvjet", "sm90_", "matmul", "wgmma")):
        return "gemm"
    return "other"


def run(cfg, layers, tp, seq, mbs, compiled, warmup, iters):
    torch.manual_seed(0)
    with torch.device("cuda"):  # initialised on the GPU: MoE experts are billions of weights
        model = Model(cfg, layers, tp).to(torch.bfloat16)
    if compiled:
        for i, blk in enumerate(model.blocks):
            model.blocks[i] = torch.compile(blk)
    tokens = torch.randint(0, model.vocab, (mbs, seq), device="cuda")
    labels = torch.randint(0, model.vocab, (mbs, seq), device="cuda")
    state = {}

    def fwd():
        for p in model.parameters():
            p.grad = None
        state["loss"] = model(tokens, labels)

    def bwd():
        state["loss"].backward()

    def both():
        fwd()
        bwd()

    both_ms = median_ms(both, warmup, iters)
    s, e = event_pair()
    fwd_t, bwd_t = [], []
    for _ in range(iters):
        fwd_t.append(elapsed_ms(fwd, s, e))
        bwd_t.append(elapsed_ms(bwd, s, e))
    classes = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            both()
        torch.cuda.synchronize()
    top = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            us = ev.device_time if hasattr(ev, "device_time") else ev.cuda_time
            c = kernel_class(ev.name)
            classes[c] += us / 3 / 1000
            if c == "other":
                top[ev.name[:60]] = top.get(ev.name[:60], 0) + us / 3 / 1000
    busy = sum(classes.values())
    del model
    torch.cuda.empty_cache()
    return {"fwd_bwd_ms": both_ms, "fwd_ms": statistics.median(fwd_t),
            "bwd_ms": statistics.median(bwd_t), "kernel_ms": classes, "busy_ms": busy,
            "idle_ms": both_ms - busy, "gqa_native": GQA_NATIVE,
            "top_other_ms": dict(sorted(top.items(), key=lambda kv: -kv[1])[:12])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", action="append", required=True,
                    help="MODEL.yaml[#NAME]:LAYERS:TP:SEQ:MBS (repeatable; #NAME picks a model "
                         "from a runs file's models: map)")
    ap.add_argument("--modes", default="eager", help="eager, compiled or both: eager,compiled")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    results = []
    for spec in a.config:
        path, layers, tp, seq, mbs = spec.split(":")
        # FILE#NAME: a model of the `models:` map of a development-set file (tests/data/).
        path, _, name = path.partition("#")
        cfg = yaml.safe_load(open(path))
        cfg = cfg["models"][name] if name else cfg
        for mode in a.modes.split(","):
            compiled = mode == "compiled"
            try:
                r = run(cfg, int(layers), int(tp), int(seq), int(mbs), compiled, a.warmup, a.iters)
            except Exception as e:  # noqa: BLE001 - report the configuration and go on
                print(f"{spec} {mode}: failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                      file=sys.stderr, flush=True)
                torch.cuda.empty_cache()
                continue
            r.update(config=spec, compiled=compiled)
            results.append(r)
            k = r["kernel_ms"]
            print(f"{spec} {'compiled' if compiled else 'eager':8s} fwd+bwd {r['fwd_bwd_ms']:8.2f} ms "
                  f"(fwd {r['fwd_ms']:.2f}, bwd {r['bwd_ms']:.2f}); gemm {k['gemm']:.2f}, "
                  f"attention {k['attention']:.2f}, other {k['other']:.2f}, idle {r['idle_ms']:.2f}",
                  file=sys.stderr, flush=True)
            if a.out != "-":  # rewritten after each configuration: a run cut short keeps them
                emit(json.dumps(document(results), indent=1), a.out)
    if a.out == "-":
        emit(json.dumps(document(results), indent=1) + "\n", "-")


def document(results):
    return {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "results": results}

if __name__ == "__main__":
    main()
