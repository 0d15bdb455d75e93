#!/usr/bin/env python3
"""Edits one tensor of a safetensors call file in place, for the import refusal tests, with
the standard library only: `FILE NAME` adds 1.0 to the first element of tensor NAME (F32 or
F64), `FILE --drop NAME` rewrites the file without NAME."""
import json
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + n]), data[8 + n :]


def write(path, header, blobs):
    offset, body = 0, b""
    for name in [k for k in header if k != "__metadata__"]:
        blob = blobs[name]
        header[name]["data_offsets"] = [offset, offset + len(blob)]
        body += blob
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + body)


def main():
    path, args = sys.argv[1], sys.argv[2:]
    header, data = read(path)
    blobs = {k: data[v["data_offsets"][0] : v["data_offsets"][1]] for k, v in header.items() if k != "__metadata__"}
    if args[0] == "--drop":
        del header[args[1]]
    else:
        name = args[0]
        fmt = {"F32": "<f", "F64": "<d"}[header[name]["dtype"]]
        size = struct.calcsize(fmt)
        (value,) = struct.unpack(fmt, blobs[name][:size])
        blobs[name] = struct.pack(fmt, value + 1.0) + blobs[name][size:]
    write(path, header, blobs)


if __name__ == "__main__":
    main()
