#!/usr/bin/env python3
"""Checks the SDPA backend a run's numerics environment records against the kernel that runs.

The provider calls scaled_dot_product_attention on (1, heads, S, head_dim) views of (S, heads,
head_dim) projections; LibTorch picks its backend from the strides as well as the shape. This
script profiles one such call in torch (the same build h3parity links, on the same GPU), names the
backend from the kernels that ran, and compares it with `environment.numerics.attention.selected`
of each manifest given. It also prints what torch's chooser answers for the permuted view and for
a contiguous tensor of the same shape, to show whether the layout matters on this GPU.
usage: sdpa_probe_check.py --heads H --head-dim D --sequence S [--dtype bf16] [MANIFEST...]
Exit 0 when every manifest names the backend that ran, 1 otherwise.
"""
import argparse
import json
import sys

import torch
import torch.nn.functional as F

NAMES = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn"}
# Substrings of the CUDA kernel names each backend launches (torch 2.x).
KERNEL_MARKS = [("cudnn", ("cudnn", "sm90_flash", "fort_native_sdpa")),
                ("flash", ("flash_fwd", "flash::", "pytorch_flash")),
                ("efficient", ("fmha", "cutlassf", "mem_eff", "attention_kernel"))]


def backend_of(kernel_names):
    lowered = [k.lower() for k in kernel_names]
    for backend, marks in KERNEL_MARKS:
        if any(m in k for k in lowered for m in marks):
            return backend
    return "math"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--head-dim", type=int, required=True)
    ap.add_argument("--sequence", type=int, required=True)
    ap.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    ap.add_argument("manifests", nargs="*")
    args = ap.parse_args()
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    dev = torch.device("cuda")
    shape = (args.sequence, args.heads, args.head_dim)
    q, k, v = (torch.randn(shape, dtype=dtype, device=dev) for _ in range(3))
    views = [t.unsqueeze(0).transpose(1, 2) for t in (q, k, v)]  # the provider's layout
    contiguous = [t.contiguous() for t in views]
    chooser = {
        "provider layout": NAMES.get(torch._fused_sdp_choice(*views), "?"),
        "contiguous": NAMES.get(torch._fused_sdp_choice(*contiguous), "?"),
    }
    F.scaled_dot_product_attention(*views)  # warm-up
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        F.scaled_dot_product_attention(*views)
        torch.cuda.synchronize()
    kernels = sorted({e.key for e in prof.key_averages()})
    ran = backend_of(kernels)
    print(json.dumps({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "shape (S, heads, head_dim)": shape, "chooser": chooser,
                      "ran": ran, "kernels": kernels}, indent=1))
    status = 0
    for path in args.manifests:
        try:
            with open(path) as f:
                recorded = json.load(f)["environment"]["numerics"]["attention"]["selected"]
        except (OSError, KeyError, ValueError) as e:
            print(f"{path}: no environment.numerics.attention.selected ({e})", file=sys.stderr)
            return 2
        verdict = "agrees" if recorded == ran else "DIFFERS"
        print(f"{path}: recorded '{recorded}', ran '{ran}': {verdict}")
        status |= recorded != ran
    return status


if __name__ == "__main__":
    sys.exit(main())
