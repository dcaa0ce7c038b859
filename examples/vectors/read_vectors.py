#!/usr/bin/env python3
"""Reads qconform golden vectors (docs/vectors.md) and prints a summary: the few lines a test in
another language needs. Usage: read_vectors.py DIR"""
import json
import struct
import sys


def f32(text):
    """A hex float of the vectors as the exact f32 it names."""
    value = float(text) if text in ("inf", "-inf", "nan") else float.fromhex(text)
    return struct.unpack("<f", struct.pack("<f", value))[0]


def main(directory):
    counts = {}
    for name in ("quantize.jsonl", "dequantize.jsonl", "calibrate.jsonl"):
        with open(f"{directory}/{name}") as lines:
            for line in lines:
                vector = json.loads(line)
                expect = vector["expect"]
                outcome = expect["error"] if "error" in expect else "ok"
                counts[(vector["op"], outcome)] = counts.get((vector["op"], outcome), 0) + 1
                if vector["op"] == "quantize":
                    [f32(x) for x in vector["input"]]  # every input is an exact f32
                    if "bytes" in expect:
                        bytes.fromhex(expect["bytes"])
    for (op, outcome), n in sorted(counts.items()):
        print(f"{op:11} {outcome:28} {n}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
