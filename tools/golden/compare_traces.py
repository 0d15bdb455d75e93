#!/usr/bin/env python3
"""Compare two stage traces (h3parity `call --trace` and tools/golden/trace_diffusers.py).

Prints, in call order, each stage's bitwise equality, relative L2 and max abs difference, and
names the first stage that is not bitwise equal. Exit 0 when every stage is bitwise equal.

Usage: python3 tools/golden/compare_traces.py A.safetensors B.safetensors [--label TEXT]
"""

import argparse
import sys

import torch
from safetensors import safe_open


def stage_order(name):
    parts = name.split(".")
    head = ["video_embeds", "audio_embeds", "text_embeds", "refiner", "temb", "blocks",
            "norm_out", "sample", "audio_sample"]
    key = head.index(parts[0]) if parts[0] in head else len(head)
    if parts[0] == "refiner" and parts[1] == "final":
        return (key, 1 << 20, 0)
    if len(parts) == 3:
        return (key, int(parts[1]), ["attn", "ff", "out"].index(parts[2]))
    return (key, 0, 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    with safe_open(args.a, "pt") as fa, safe_open(args.b, "pt") as fb:
        names = sorted(set(fa.keys()) & set(fb.keys()), key=stage_order)
        missing = sorted(set(fa.keys()) ^ set(fb.keys()))
        first = None
        print("== %s" % (args.label or "%s vs %s" % (args.a, args.b)))
        print("%-18s %8s %12s %12s" % ("stage", "bitwise", "rel_l2", "max_abs"))
        for name in names:
            a, b = fa.get_tensor(name), fb.get_tensor(name)
            if a.shape != b.shape:
                print("%-18s shape %s vs %s" % (name, tuple(a.shape), tuple(b.shape)))
                first = first or name
                continue
            same = a.dtype == b.dtype and torch.equal(a, b)
            d = (a.double() - b.double())
            rel = (d.norm() / b.double().norm().clamp_min(1e-300)).item()
            print("%-18s %8s %12.3e %12.3e" % (name, "yes" if same else "no", rel, d.abs().max().item()))
            if not same and first is None:
                first = name
        if missing:
            print("stages in only one trace:", ", ".join(missing))
        print("first stage that differs: %s" % (first or "none (all bitwise equal)"))
    return 0 if first is None else 1


if __name__ == "__main__":
    sys.exit(main())
