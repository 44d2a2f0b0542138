#!/usr/bin/env python3
"""Runs bench_distributed and torch_all_reduce.py on N ranks (tessera run),
one after the other on an otherwise idle machine, and prints Tessera's
all_reduce time against Gloo called directly and torch.distributed's gloo.

usage: compare.py TESSERA_CLI BENCH_DISTRIBUTED [--ranks 2] [--torchpy PATH] [--max-mib 64]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cli")
    p.add_argument("bench")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--max-mib", type=int, default=64)
    p.add_argument("--torchpy", default=os.path.expanduser("~/.cache/tessera/torch-venv/bin/torchpy"))
    a = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = os.path.join(tmp, "tessera.json"), os.path.join(tmp, "torch.json")
        env = dict(os.environ, TESSERA_PLUGINS="cpu")
        subprocess.run([a.cli, "run", "-n", str(a.ranks), "--no-prefix", "--", a.bench, "--json", ours,
                        "--max-mib", str(a.max_mib)], check=True, env=env, stdout=sys.stderr)
        torch_rows = {}
        version = None
        if os.path.exists(a.torchpy):
            subprocess.run([a.cli, "run", "-n", str(a.ranks), "--no-prefix", "--", a.torchpy,
                            os.path.join(here, "torch_all_reduce.py"), "--json", theirs,
                            "--max-mib", str(a.max_mib)], check=True, stdout=sys.stderr)
            t = json.load(open(theirs))
            version = t["torch"]
            torch_rows = {r["bytes"]: r["torch_us"] for r in t["rows"]}
        else:
            print(f"no {a.torchpy}: scripts/install-deps --with-bench installs it; torch column empty")
        rows = json.load(open(ours))["rows"]
    n = a.ranks
    factor = 2.0 * (n - 1) / n
    flags = open("/proc/cpuinfo").read()
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    print(f"all_reduce SUM float32 on cpu:0, {n} ranks on one host over loopback TCP, {isa}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
          + (f", torch {version}" if version else ""))
    print(f"{'bytes':>10} {'tessera_us':>11} {'gloo_us':>9} {'torch_us':>9} {'t/gloo':>7} "
          f"{'t/torch':>8} {'busbw_GB/s':>11}")
    for r in rows:
        b, tu, gu = r["bytes"], r["tessera_us"], r["gloo_us"]
        th = torch_rows.get(b)
        print(f"{b:>10} {tu:>11.1f} {gu:>9.1f} {th if th is not None else float('nan'):>9.1f} "
              f"{tu / gu:>7.2f} {(tu / th) if th else float('nan'):>8.2f} {b * factor / tu / 1e3:>11.3f}")


if __name__ == "__main__":
    main()
