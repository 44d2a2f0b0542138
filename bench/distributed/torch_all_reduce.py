"""torch.distributed's gloo all_reduce (SUM, float32, CPU), timed as
bench_distributed times Tessera's: 3 warm-up calls, then 200 / 40 / 12 calls
by size, each after a barrier, median in microseconds. Run under
`tessera run -n N -- torchpy torch_all_reduce.py --json FILE` (env://)."""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json", required=True)
    p.add_argument("--max-mib", type=int, default=64)
    a = p.parse_args()
    dist.init_process_group("gloo")
    sizes = [4, 4 << 10, 256 << 10, 4 << 20]
    m = 16
    while m <= a.max_mib:
        sizes.append(m << 20)
        m *= 4
    rows = []
    for nbytes in sizes:
        t = torch.ones(nbytes // 4, dtype=torch.float32)
        calls = 12 if nbytes >= 16 << 20 else 40 if nbytes >= 1 << 20 else 200
        for _ in range(3):
            dist.all_reduce(t)
        us = []
        for _ in range(calls):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(t)
            us.append((time.perf_counter() - t0) * 1e6)
        rows.append({"bytes": nbytes, "torch_us": statistics.median_high(us)})
    if dist.get_rank() == 0:
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"ranks": dist.get_world_size(), "torch": torch.__version__, "rows": rows}, f)
        os.replace(tmp, a.json)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
