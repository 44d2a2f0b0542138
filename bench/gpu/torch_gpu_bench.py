#!/usr/bin/env python3
"""torch_gpu_bench.py - bench_gpu's measurements through PyTorch.

The same cases as bench/gpu/bench_gpu.cpp, with the same sizes and traffic
conventions (inputs uniform in [-1, 1), as bench_gpu's), on a CUDA device
(default cuda:0) and on the CPU:
  matmul f32    4096^3 float32, torch.mm(a, b, out=c); GFLOP/s (2 n^3)
  matmul bf16   the same in bfloat16 (where the device supports it)
  add           64M float32, torch.add(a, b, out=c); GB/s of traffic
                (3 x 4 bytes x n: two reads and a write)
  copy          64M float32, dst.copy_(src) on the same device; GB/s of
                traffic (2 x 4 bytes x n)
  queued        10,000 one-element adds (out=, preallocated) issued back to
                back, then one synchronize; microseconds per op
  round trip    one one-element add followed by synchronize; microseconds
Numerics as bench_gpu's: float32 matmul without TF32 (unless --allow-tf32),
bfloat16 without reduced-precision reductions.

Timing: every case runs warm-up calls first (allocator caches, cuBLAS
heuristics, lazy module loading). matmul, add and copy on CUDA are timed with
CUDA events around a run of back-to-back calls (elapsed_time / calls): the
device's time, without the host's launch latency. queued and round trip are
wall-clock (time.perf_counter) with torch.cuda.synchronize, as their point is
what the host sees. On the CPU everything is wall-clock. Each figure is the
median of --repeats runs, each run sized to about --min-time seconds.

Usage: torch_gpu_bench.py [--device cuda:0] [--small] [--no-cpu]
                          [--allow-tf32] [--json PATH] [--min-time S]
Exits 1 when CUDA is not available (unless --device cpu).
"""

import argparse
import json
import statistics
import sys
import time

torch = None  # imported in main(), after the arguments (so --help works without it)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda:0", help="device under test (default cuda:0)")
    p.add_argument("--small", action="store_true",
                   help="tiny sizes (matmul 64, 64K elements, 100 queued ops): a smoke test")
    p.add_argument("--no-cpu", action="store_true", help="measure the device only")
    p.add_argument("--allow-tf32", action="store_true",
                   help="float32 matmul may use TF32 tensor cores")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (CPU side)")
    p.add_argument("--min-time", type=float, default=0.2,
                   help="seconds per timed run (default 0.2)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per case (median)")
    p.add_argument("--json", help="also write the results here")
    return p.parse_args()


def host_values(numel, seed):
    """Deterministic float32 values uniform in [-1, 1).

    bench_gpu's xorshift sequence is serial (a Python loop over 64M values is
    too slow), so torch's generator with a fixed seed stands in: the values
    differ, their distribution (what the timings depend on) does not.
    """
    g = torch.Generator().manual_seed(seed)
    return torch.rand(numel, generator=g, dtype=torch.float32) * 2 - 1


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def calls_for(fn, device, min_time):
    """How many back-to-back calls last about min_time (one warm-up call first)."""
    fn()
    sync(device)
    t0 = time.perf_counter()
    fn()
    sync(device)
    once = max(time.perf_counter() - t0, 1e-7)
    return max(1, int(min_time / once))


def seconds_per_call(fn, device, min_time, repeats, wall=False):
    """Median over `repeats` runs of (run time / calls). CUDA: events unless `wall`."""
    calls = calls_for(fn, device, min_time)
    results = []
    for _ in range(repeats):
        if device.type == "cuda" and not wall:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            sync(device)
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            results.append(start.elapsed_time(end) * 1e-3 / calls)
        else:
            sync(device)
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            sync(device)
            results.append((time.perf_counter() - t0) / calls)
    return statistics.median(results)


def bf16_supported(device):
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return True


def measure(device, sizes, args):
    """{case: (value, unit)} for one device; a failing case is recorded as its error."""
    out = {}
    n, numel, queued = sizes["matmul_n"], sizes["numel"], sizes["queued"]
    mt, reps = args.min_time, args.repeats

    def run(case, unit, body):
        try:
            out[case] = (body(), unit)
        except Exception as e:  # report, keep measuring the other cases
            out[case] = (None, f"{type(e).__name__}: {e}")
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()

    def matmul(dtype):
        a = host_values(n * n, 3).reshape(n, n).to(dtype).to(device)
        b = host_values(n * n, 4).reshape(n, n).to(dtype).to(device)
        c = torch.empty(n, n, dtype=dtype, device=device)
        t = seconds_per_call(lambda: torch.mm(a, b, out=c), device, mt, reps)
        return 2.0 * n * n * n / t * 1e-9

    def add():
        a = host_values(numel, 1).to(device)
        b = host_values(numel, 2).to(device)
        c = torch.empty(numel, device=device)
        t = seconds_per_call(lambda: torch.add(a, b, out=c), device, mt, reps)
        return 3.0 * 4 * numel / t * 1e-9

    def copy():
        src = host_values(numel, 5).to(device)
        dst = torch.empty(numel, device=device)
        t = seconds_per_call(lambda: dst.copy_(src), device, mt, reps)
        return 2.0 * 4 * numel / t * 1e-9

    def one_element():
        a = host_values(1, 1).to(device)
        b = host_values(1, 2).to(device)
        return a, b, torch.empty(1, device=device)

    def queued_ops():
        a, b, c = one_element()

        def body():
            for _ in range(queued):
                torch.add(a, b, out=c)

        t = seconds_per_call(body, device, mt, reps, wall=True)
        return t / queued * 1e6

    def round_trip():
        a, b, c = one_element()

        def body():
            torch.add(a, b, out=c)
            sync(device)

        return seconds_per_call(body, device, mt, reps, wall=True) * 1e6

    run("matmul_f32", "GFLOP/s", lambda: matmul(torch.float32))
    if bf16_supported(device):
        run("matmul_bf16", "GFLOP/s", lambda: matmul(torch.bfloat16))
    run("add", "GB/s", add)
    run("copy", "GB/s", copy)
    run("queued", "us/op", queued_ops)
    run("round_trip", "us/op", round_trip)
    return out


def fmt(entry):
    if entry is None:
        return "-"
    value, unit = entry
    return f"{value:.2f} {unit}" if value is not None else "failed"


def main():
    args = parse_args()
    global torch
    try:
        import torch as torch_module
    except ImportError as e:
        print(f"torch_gpu_bench: cannot import torch: {e}", file=sys.stderr)
        return 1
    torch = torch_module
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("torch_gpu_bench: torch.cuda is not available "
              f"(torch {torch.__version__}, built for CUDA {torch.version.cuda})", file=sys.stderr)
        return 1
    if device.type == "cuda":
        torch.cuda.set_device(device)  # events record on the current device's stream
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    # Numerics as bench_gpu's and the CUDA plugin's (see the module comment).
    mm = torch.backends.cuda.matmul
    if hasattr(mm, "fp32_precision"):  # PyTorch >= 2.9
        mm.fp32_precision = "tf32" if args.allow_tf32 else "ieee"
    else:
        mm.allow_tf32 = args.allow_tf32
    mm.allow_bf16_reduced_precision_reduction = False

    sizes = dict(matmul_n=4096, numel=64 << 20, queued=10000)
    if args.small:
        sizes = dict(matmul_n=64, numel=64 << 10, queued=100)

    torch.set_grad_enabled(False)
    results = {str(device): measure(device, sizes, args)}
    cpu = torch.device("cpu")
    if not args.no_cpu and device.type != "cpu":
        results["cpu"] = measure(cpu, sizes, args)

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"\nPyTorch {torch.__version__} (CUDA {torch.version.cuda}), {device}: {name}; "
          f"cpu threads: {torch.get_num_threads()}; TF32 matmul: {args.allow_tf32}")
    n, numel, queued = sizes["matmul_n"], sizes["numel"], sizes["queued"]
    count = f"{numel >> 20}M" if numel % (1 << 20) == 0 else f"{numel >> 10}K"
    labels = {
        "matmul_f32": f"matmul {n} f32",
        "matmul_bf16": f"matmul {n} bf16",
        "add": f"add {count}",
        "copy": f"copy_ {count}",
        "queued": f"queued x{queued}",
        "round_trip": "round trip",
    }
    dev = results[str(device)]
    host = results.get("cpu", {})
    print(f"  {'case':<17} {str(device):<22} {'cpu':<22} ratio")
    for key, label in labels.items():
        d, c = dev.get(key), host.get(key)
        line = f"  {label:<17} {fmt(d):<22} {fmt(c):<22}"
        if d and c and d[0] and c[0]:
            lower_better = key in ("queued", "round_trip")
            line += f" device/cpu {(c[0] / d[0]) if lower_better else (d[0] / c[0]):.3f}"
        print(line.rstrip())
    add, copy = dev.get("add"), dev.get("copy")
    if add and copy and add[0] and copy[0]:
        print(f"  add / copy bandwidth on {device}: {add[0] / copy[0]:.3f}")
    for side, entries in results.items():
        for key, (value, unit) in entries.items():
            if value is None:
                print(f"  failed {key} on {side}: {unit}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({
                "torch": torch.__version__,
                "cuda": torch.version.cuda,
                "device_name": name,
                "sizes": sizes,
                "allow_tf32": args.allow_tf32,
                "results": {side: {k: {"value": v, "unit": u} for k, (v, u) in e.items()}
                            for side, e in results.items()},
            }, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
