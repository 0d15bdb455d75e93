"""Compares `h3parity schedule --json` with a safetensors file of golden grids, bit for bit.

Reads the safetensors file with the standard library only (8-byte header length, JSON header,
little-endian F32 data), so the check needs no third-party package.
"""
import json
import struct
import subprocess
import sys


def read_f32_tensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", name
        begin, end = info["data_offsets"]
        raw = data[base + begin : base + end]
        out[name] = list(struct.unpack("<%df" % (len(raw) // 4), raw))
    return out


def f32_bits(values):
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in values]


def main():
    cli, grids_path = sys.argv[1], sys.argv[2]
    grids = read_f32_tensors(grids_path)
    checked = 0
    for name in sorted(grids):
        if not name.startswith("sigmas_"):
            continue
        key = name[len("sigmas_"):]  # N<n>_s<shift>
        steps, shift = key[1:].split("_s")
        got = json.loads(subprocess.check_output(
            [cli, "schedule", "--steps", steps, "--shift", shift, "--json"]))
        for field in ("sigmas", "timesteps"):
            want = grids["%s_%s" % (field, key)]
            if f32_bits(got[field]) != f32_bits(want):
                print("FAIL: %s %s differs:\n got  %s\n want %s" % (field, key, got[field], want))
                return 1
        checked += 1
    if checked == 0:
        print("FAIL: no grids found in", grids_path)
        return 1
    print("ok: %d schedules equal the diffusers grids bit for bit" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
