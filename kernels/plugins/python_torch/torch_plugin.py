"""torch-reference: every MiniMax-H3 primitive in plain torch ops, as an h3parity Python plugin.

Impl spec `python:kernels/plugins/python_torch/torch_plugin.py` (the bridge in
kernels/plugins/python_bridge loads it). Each function calls the ATen ops of the provider's
OpSet (core/ops/provider_ops.cpp, default backends) in the same order with the same scalars, so
on the torch build h3parity links it is bitwise equal to the provider: a qualification of this
plugin measures the bridge, not arithmetic. Start a Python port from here.

Contract (kernels/plugins/python_bridge/README.md): torch tensors in, `out` last and written
with out.copy_(); nothing kept after a call returns.
"""
import math
import re

import torch
import torch.nn.functional as F

NAME = "torch-reference"
VERSION = "1.0"
GROUPS = ["gemm", "attention", "swiglu", "adaln", "qk_norm", "rope", "norm", "residual",
          "embed", "head"]

_TORCH = tuple(int(p) for p in re.match(r"(\d+)\.(\d+)", torch.__version__).groups())


def _math_attention(q, k, v):
    """softmax(q·kᵀ·scale)·v as PyTorch's math SDPA computes it: q and k each scaled by
    sqrt(scale) before the product. Inputs (1, H, S, D)."""
    scale = 1.0 / math.sqrt(q.size(-1))
    root = math.sqrt(scale)
    qs = torch.mul(q, root)
    ks = torch.mul(k.transpose(-2, -1), root)
    weights = torch.softmax(torch.matmul(qs, ks), -1)
    return torch.matmul(weights, v)


def _rms_norm(x, weight, eps):
    if _TORCH >= (2, 4):
        return torch.rms_norm(x, [x.size(-1)], weight, eps)
    # The composite nn.RMSNorm: fp32 statistics, normalise, cast back, then weight.
    up = x.to(torch.float32)
    inv = torch.rsqrt(torch.add(torch.pow(up, 2).mean([-1], keepdim=True), eps))
    normed = torch.mul(up, inv).to(x.dtype)
    return torch.mul(normed, weight)


def linear(x, w, b, out):
    out.copy_(F.linear(x, w, b))


def attention(q, k, v, out):
    # (S, H, D) -> (1, H, S, D) as diffusers' native dispatch permutes them.
    qh = q.permute(1, 0, 2).unsqueeze(0)
    kh = k.permute(1, 0, 2).unsqueeze(0)
    vh = v.permute(1, 0, 2).unsqueeze(0)
    if _TORCH >= (2, 0):
        o = F.scaled_dot_product_attention(qh, kh, vh)
    else:
        o = _math_attention(qh, kh, vh)
    out.copy_(o.squeeze(0).permute(1, 0, 2))


def swiglu(h, out):
    value, gate = h.chunk(2, -1)
    out.copy_(torch.mul(value, F.silu(gate)))


def silu(x, out):
    out.copy_(F.silu(x))


def rms_norm(x, weight, eps, out):
    out.copy_(_rms_norm(x, weight, eps))


def norm_modulate(x, weight, eps, scale, shift, out):
    n = _rms_norm(x, weight, eps)
    out.copy_(torch.add(torch.mul(n, torch.add(scale, 1.0)), shift))


def gather_rows(table, rows, out):
    out.copy_(table.index_select(0, rows))


def rope(x, cos, sin, out):
    rotary = cos.size(-1)
    head_dim = x.size(-1)
    c = cos.to(x.dtype).unsqueeze(1)  # (S, 1, R)
    s = sin.to(x.dtype).unsqueeze(1)
    xr = x.narrow(-1, 0, rotary)
    xp = x.narrow(-1, rotary, head_dim - rotary)
    first, second = xr.chunk(2, -1)
    rotated = torch.cat([torch.neg(second), first], -1)
    o = torch.add(torch.mul(xr, c), torch.mul(rotated, s))
    out.copy_(torch.cat([o, xp], -1))


def gated_residual(x, gate, y, out):
    out.copy_(torch.add(x, torch.mul(gate, y)))


def add(x, y, out):
    out.copy_(torch.add(x, y))


def timestep_sinusoid(t, out):
    dim = out.size(1)
    half = dim // 2
    exponent = torch.mul(torch.arange(0, half, dtype=torch.float32, device=t.device),
                         -math.log(10000.0))
    exponent = torch.div(exponent, half)
    freqs = torch.exp(exponent)
    angles = torch.mul(t.unsqueeze(1).to(torch.float32), freqs.unsqueeze(0))
    angles = torch.mul(angles, 1)
    emb = torch.cat([torch.sin(angles), torch.cos(angles)], -1)
    emb = torch.cat([emb.narrow(1, half, half), emb.narrow(1, 0, half)], -1)
    if dim % 2 == 1:
        emb = torch.constant_pad_nd(emb, [0, 1, 0, 0])
    out.copy_(emb)
