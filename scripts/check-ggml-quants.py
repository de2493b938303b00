#!/usr/bin/env python3
"""Checks scripts/ggml-quants.mjs byte for byte against ggml itself.

Quantizes the same rows with ggml_quantize_chunk of the libggml-base.so that
node-llama-cpp ships (loaded with ctypes; no build) and with the JavaScript
quantizers (run by node), for Q8_0, Q4_0, TQ2_0 and Q2_K, and prints one line
per type: blocks compared and blocks that differ. Exits 1 if any differ.

    python3 scripts/check-ggml-quants.py --lib .../libggml-base.so
"""
import argparse
import ctypes
import os
import random
import struct
import subprocess
import sys
import tempfile

TYPES = {  # name: (ggml_type id, elements per block, bytes per block)
    "q8_0": (8, 32, 34),
    "q4_0": (2, 32, 18),
    "tq2_0": (35, 256, 66),
    "q2_k": (10, 256, 84),
}


def make_rows(n_per_row, nrows, seed):
    """Rows with the shapes weights take: Gaussian of several scales, a row
    of zeros, a constant row, a one-hot row, heavy outliers, all positive,
    all negative, exact ties for the roundings."""
    rng = random.Random(seed)
    rows = []
    for r in range(nrows):
        kind = r % 9
        if kind == 0:
            row = [0.0] * n_per_row
        elif kind == 1:
            row = [0.25] * n_per_row
        elif kind == 2:
            row = [0.0] * n_per_row
            row[rng.randrange(n_per_row)] = -3.0
        elif kind == 3:
            row = [rng.gauss(0, 0.02) * (50 if rng.random() < 0.01 else 1)
                   for _ in range(n_per_row)]
        elif kind == 4:
            row = [abs(rng.gauss(0, 1)) for _ in range(n_per_row)]
        elif kind == 5:
            row = [-abs(rng.gauss(0, 1e-3)) for _ in range(n_per_row)]
        elif kind == 6:
            row = [rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]) for _ in range(n_per_row)]
        else:
            scale = 10 ** rng.uniform(-4, 1)
            row = [rng.gauss(0, scale) for _ in range(n_per_row)]
        rows.extend(row)
    # Round to f32 once, so both sides see the same values.
    return struct.unpack(f"<{len(rows)}f", struct.pack(f"<{len(rows)}f", *rows))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True, help="libggml-base.so")
    parser.add_argument("--node", default="node")
    parser.add_argument("--rows", type=int, default=72)
    parser.add_argument("--n-per-row", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    lib = ctypes.CDLL(args.lib)
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [
        ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
        ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]

    values = make_rows(args.n_per_row, args.rows, args.seed)
    src = (ctypes.c_float * len(values))(*values)
    quants = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ggml-quants.mjs")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "rows.f32")
        with open(data_path, "wb") as f:
            f.write(struct.pack(f"<{len(values)}f", *values))
        for name, (type_id, block, block_bytes) in TYPES.items():
            size = len(values) // block * block_bytes
            dst = (ctypes.c_uint8 * size)()
            lib.ggml_quantize_init(type_id)
            written = lib.ggml_quantize_chunk(type_id, src, dst, 0, args.rows,
                                              args.n_per_row, None)
            if written != size:
                print(f"{name}: ggml wrote {written} bytes, expected {size}")
                failed = True
                continue
            out_path = os.path.join(tmp, f"{name}.bin")
            script = (
                "import fs from 'fs';"
                f"import {{QUANTIZERS}} from {quants!r};"
                f"const b = fs.readFileSync({data_path!r});"
                "const x = new Float32Array(b.buffer, b.byteOffset, b.length / 4);"
                f"const out = new Uint8Array({size});"
                f"QUANTIZERS[{name!r}](x, out);"
                f"fs.writeFileSync({out_path!r}, out);")
            subprocess.run([args.node, "--input-type=module", "-e", script], check=True)
            with open(out_path, "rb") as f:
                mine = f.read()
            ref = bytes(dst)
            nblocks = size // block_bytes
            bad = [i for i in range(nblocks)
                   if mine[i * block_bytes:(i + 1) * block_bytes]
                   != ref[i * block_bytes:(i + 1) * block_bytes]]
            print(f"{name}: {nblocks} blocks, {len(bad)} differ")
            if bad:
                failed = True
                i = bad[0]
                print(f"  first: block {i}\n  ggml {ref[i*block_bytes:(i+1)*block_bytes].hex()}"
                      f"\n  mine {mine[i*block_bytes:(i+1)*block_bytes].hex()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
