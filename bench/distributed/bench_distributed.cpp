// bench_distributed: all_reduce (SUM, float32, cpu:0) through tessera's process
// group against Gloo called directly - the same TCP transport and algorithm
// the CPU plugin uses, with a reduction loop like the plugin's - in the same
// processes, one after the other, for each size. Rank 0 prints a table and,
// with --json FILE, the medians (bench/distributed/compare.py adds
// torch.distributed's gloo and prints the ratios).
//
//   tessera run -n 2 -- bench_distributed [--json FILE] [--max-mib 64]
//   tessera run -n 2 -- bench_distributed --ddp     (DDP's overlap, below)
//
// Per size: 3 warm-up calls, then 200 / 40 / 12 calls (below 1 MiB / below
// 16 MiB / above), each timed alone after a barrier of its own engine; the
// median is reported. Bus bandwidth is PyTorch's / nccl-tests' convention for
// all_reduce: bytes x 2(n-1)/n / time.
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tessera/distributed.hpp"
#include "tessera/nn.hpp"
#include "tessera/nn/parallel/distributed.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace dist = tessera::distributed;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// --ddp: how much of DDP's gradient all-reduce hides behind backward. Per
// step (median of 8, after 2 warm-up steps): `local` is forward + backward
// under no_sync() (no communication), `synced` a DDP step (backward returns
// once every bucket's all_reduce finished), `comm` one all_reduce of all the
// gradients' bytes. Overlap = (local + comm - synced) / comm, clipped to
// [0, 1]: 1 when communication costs the step nothing, 0 when it runs after
// backward.
void ddp_overlap(int rank, int size) {
  namespace nn = tessera::nn;
  auto model = std::make_shared<nn::Sequential>();
  for (int i = 0; i < 4; ++i) {
    model->push_back(std::make_shared<nn::Linear>(1024, 1024));
    model->push_back(std::make_shared<nn::ReLU>());
  }
  // 4 MB buckets: each layer's gradient (4 MB) is launched as soon as its
  // backward produced it (at the default 25 MB the whole model is one bucket,
  // launched after the last gradient, and nothing can overlap).
  nn::parallel::DDPOptions options;
  options.bucket_cap_mb = 4;
  nn::parallel::DistributedDataParallel ddp(model, options);
  const tessera::Tensor x = tessera::randn({64, 1024});
  const tessera::Tensor y = tessera::randn({64, 1024});
  auto step = [&] {
    model->zero_grad();
    tessera::mse_loss(ddp.forward(x), y).backward();
  };
  int64_t numel = 0;
  for (const tessera::Tensor& p : model->parameters()) numel += p.numel();
  tessera::Tensor flat = tessera::ones({numel});
  std::vector<double> local, synced, comm;
  for (int i = 0; i < 10; ++i) {
    dist::barrier();
    auto t0 = Clock::now();
    {
      auto guard = ddp.no_sync();
      step();
    }
    const double l = ms_since(t0);
    dist::barrier();
    t0 = Clock::now();
    step();
    const double s = ms_since(t0);
    dist::barrier();
    t0 = Clock::now();
    dist::all_reduce(flat);
    const double c = ms_since(t0);
    if (i < 2) continue;
    local.push_back(l);
    synced.push_back(s);
    comm.push_back(c);
  }
  if (rank != 0) return;
  const double l = median(local), s = median(synced), c = median(comm);
  const double overlap = std::clamp((l + c - s) / c, 0.0, 1.0);
  std::printf(
      "DDP, %d ranks, 4 x Linear(1024, 1024) + ReLU (%.1f MB of float32 gradients, 4 MB buckets), "
      "batch "
      "64 per rank:\n  step without communication %.1f ms, DDP step %.1f ms, all_reduce "
      "of the gradients alone %.1f ms: overlap %.0f %%\n",
      size, static_cast<double>(numel) * 4 / 1e6, l, s, c, overlap * 100);
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_file;
  int64_t max_mib = 64;
  bool ddp = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      json_file = argv[++i];
    } else if (a == "--max-mib" && i + 1 < argc) {
      max_mib = std::atoll(argv[++i]);
    } else if (a == "--ddp") {
      ddp = true;
    } else {
      std::fprintf(
          stderr,
          "usage: tessera run -n N -- bench_distributed [--json FILE] [--max-mib M] | --ddp\n");
      return 2;
    }
  }
  dist::init_process_group("gloo");
  const int rank = dist::get_rank(), size = dist::get_world_size();
  if (ddp) {
    ddp_overlap(rank, size);
    dist::barrier();
    return 0;
  }

  // Gloo directly: its own rendezvous in a file store named by this job's
  // MASTER_PORT (tessera run picks a free one per job).
  const char* port = std::getenv("MASTER_PORT");
  const std::string dir = std::string("/tmp/tessera-bench-gloo-") + (port ? port : "0");
  std::filesystem::create_directories(dir);
  gloo::rendezvous::FileStore file_store(dir);
  gloo::rendezvous::PrefixStore store("bench", file_store);
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->connectFullMesh(store, device);
  uint32_t tag = 0;

  struct Row {
    int64_t bytes;
    double tessera_us, gloo_us;
  };
  std::vector<Row> rows;
  std::vector<int64_t> sizes = {4, 4 << 10, 256 << 10, 4 << 20};
  for (int64_t m = 16; m <= max_mib; m *= 4) sizes.push_back(m << 20);
  for (const int64_t bytes : sizes) {
    const int64_t n = bytes / 4;
    // Every rank makes the same number of calls, fixed by size (a time
    // budget would differ between ranks).
    tessera::Tensor t = tessera::ones({n});
    std::vector<float> buf(static_cast<size_t>(n), 1.0f);
    auto t_sync = [] { dist::barrier(); };
    auto g_sync = [&] {
      gloo::BarrierOptions b(context);
      b.setTag(tag++);
      gloo::barrier(b);
    };
    const int calls = bytes >= (16 << 20) ? 12 : bytes >= (1 << 20) ? 40 : 200;
    auto run = [&](auto&& sync, auto&& call) {
      for (int i = 0; i < 3; ++i) call();
      std::vector<double> us;
      for (int i = 0; i < calls; ++i) {
        sync();
        const auto t0 = Clock::now();
        call();
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
      return median(us);
    };
    const double tu = run(t_sync, [&] { dist::all_reduce(t, dist::ReduceOp::SUM); });
    const double gu = run(g_sync, [&] {
      gloo::AllreduceOptions o(context);
      o.setInput(buf.data(), static_cast<size_t>(n));
      o.setOutput(buf.data(), static_cast<size_t>(n));
      o.setReduceFunction([](void* out, const void* a, const void* b, size_t k) {
        auto* r = static_cast<float*>(out);
        const auto* x = static_cast<const float*>(a);
        const auto* y = static_cast<const float*>(b);
        for (size_t i = 0; i < k; ++i) r[i] = x[i] + y[i];
      });
      o.setTag(tag++);
      gloo::allreduce(o);
    });
    rows.push_back({bytes, tu, gu});
  }

  if (rank == 0) {
    const double factor = 2.0 * (size - 1) / size;
    std::printf("all_reduce SUM float32 on cpu:0, %d ranks (OMP_NUM_THREADS=%s)\n", size,
                std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "unset");
    std::printf("%12s %12s %12s %8s %14s %14s\n", "bytes", "tessera_us", "gloo_us", "ratio",
                "tessera_GB/s", "gloo_GB/s");
    for (const Row& r : rows)
      std::printf("%12lld %12.1f %12.1f %8.2f %14.3f %14.3f\n", static_cast<long long>(r.bytes),
                  r.tessera_us, r.gloo_us, r.tessera_us / r.gloo_us,
                  static_cast<double>(r.bytes) * factor / r.tessera_us / 1e3,
                  static_cast<double>(r.bytes) * factor / r.gloo_us / 1e3);
    if (!json_file.empty()) {
      std::ofstream out(json_file + ".tmp");
      out << "{\"ranks\": " << size << ", \"rows\": [";
      for (size_t i = 0; i < rows.size(); ++i)
        out << (i ? ", " : "") << "{\"bytes\": " << rows[i].bytes
            << ", \"tessera_us\": " << rows[i].tessera_us << ", \"gloo_us\": " << rows[i].gloo_us
            << "}";
      out << "]}\n";
      out.close();
      std::filesystem::rename(json_file + ".tmp", json_file);
    }
  }
  dist::barrier();
  if (rank == 0) std::filesystem::remove_all(dir);
  return 0;
}
