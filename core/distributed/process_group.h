// Process groups: collectives over the processes of a job, on the tensors of
// any device (PyTorch's c10d::ProcessGroup model), over the communicators
// that device plugins make (Note [Plugin collectives] in plugin.h).
//
// Note [Process groups]
// ~~~~~~~~~~~~~~~~~~~~~
// A group is (rank, size, store, options) plus, per device a collective has
// touched, one communicator of that device's plugin, made by comm_init on
// first use through the group's store under "comm/<type>/<n>" (rank 0 makes
// the unique id of an engine that needs one and publishes it there). Every
// rank of a group must issue the same collectives in the same order - as in
// PyTorch - so communicators are made in the same order everywhere.
//
// Every collective is a Work queued on the group's one worker thread, in
// the order issued: a synchronous call waits for its Work, an asynchronous
// one returns it (wait / is_completed / the error). A send or recv is
// queued there too (so its communicator is made in issue order) and then
// handed to a lane of its own - one thread per (peer, direction) - which runs
// the blocking transfer: sends to one peer keep their order, as MPI's and
// Gloo's do, and neither waits for the other direction or for collectives
// issued later. Without the lanes, isend(next) + irecv(prev) around a ring
// deadlocked: every rank's send waited for a recv queued behind it (the
// collectives conformance family found it). The Work runs after the
// caller's stream has finished what it had enqueued (captured at issue) and
// completes once the engine's stream work has (an event on that stream), so
// tensors may be reused after wait(). A Work waited on longer than the
// group's timeout fails DEADLINE_EXCEEDED and aborts the group's
// communicators, so a blocked engine call ends too.
//
// Paths: a tensor whose plugin runs the collective for its dtype and reduce
// op goes to that plugin directly (contiguous scratch when it is not); any
// other tensor - Vulkan's, HIP's, a vendor plugin's without collectives, or
// a dtype its engine lacks - is staged: copied to host memory, run on the
// host communicator (the first host-addressable device whose plugin has
// collectives on host memory: cpu:0's Gloo) and copied back.
//
// Checks: shapes, dtypes, roots and peers are validated on the issuing rank
// (INVALID_ARGUMENT naming the argument). Across ranks, with the header
// exchange on (options.check_headers; TESSERA_DISTRIBUTED_DEBUG=DETAIL, as
// PyTorch's TORCH_DISTRIBUTED_DEBUG), every collective first all-gathers a
// 104-byte header (collective, dtype, shape, root, op) on the host
// communicator and fails on every rank, naming the first rank that differs
// and both shapes, before any byte moves.
//
// Failure: an engine error (a peer gone, a timeout) fails its Work and makes
// the group failed: later collectives fail at once with FAILED_PRECONDITION
// carrying the first error - as an NCCL communicator is unusable after an
// error. Argument and header errors do not fail the group.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/store.h"
#include "tensor/tensor_impl.h"
#include "tessera/plugin.h"
#include "util/error.h"

namespace tsr {
class Runtime;
struct DeviceRecord;
struct PluginRecord;
struct Stream;
}  // namespace tsr

namespace tsr::dist {

struct GroupOptions {
  // PyTorch's default process-group timeout.
  milliseconds timeout{std::chrono::minutes(30)};
  // "auto" (each device's own engine), or an engine name every plugin that
  // has several is asked for ("gloo", "mpi", "nccl").
  std::string backend = "auto";
  // The header exchange of Note [Process groups]; < 0: from
  // TESSERA_DISTRIBUTED_DEBUG (DETAIL: on).
  int check_headers = -1;
};

// An asynchronous collective (Note [Process groups]). Thread-safe.
class Work {
 public:
  // Blocks until the collective completed; throws its error. A timeout < 0
  // means the group's; on expiry the group is aborted (DEADLINE_EXCEEDED).
  void wait(milliseconds timeout);
  bool is_completed();
  // The error, if it failed (code TSR_OK otherwise); does not wait.
  tsr_status_code error(std::string* message);
  const std::string& name() const { return name_; }

 private:
  friend class ProcessGroup;
  Work(std::string name, std::function<void(const std::string&)> abort_group, milliseconds timeout)
      : name_(std::move(name)), abort_group_(std::move(abort_group)), timeout_(timeout) {}
  void finish(tsr_status_code code, std::string message);

  std::string name_;
  std::function<void(const std::string&)> abort_group_;
  milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  tsr_status_code code_ = TSR_OK;
  std::string message_;
};

// A communicator of one device's plugin (made on first use).
struct Communicator;

class ProcessGroup : public std::enable_shared_from_this<ProcessGroup> {
 public:
  // A group of `size` processes through `store` (every rank gives the same
  // store, e.g. a TCP store at MASTER_ADDR:MASTER_PORT). Validates its
  // arguments; connects nothing yet (communicators come on first use).
  static std::shared_ptr<ProcessGroup> create(Runtime* runtime, std::shared_ptr<Store> store,
                                              int rank, int size, GroupOptions options);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const GroupOptions& options() const { return options_; }
  Runtime* runtime() const { return runtime_; }

  // A group of `ranks` (ranks of this group, distinct, any order: member i is
  // rank i of the new group). Every rank of this group calls it with the same
  // list (PyTorch's new_group); non-members get null.
  std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks, GroupOptions options);
  // Every rank calls it; the ranks with one colour form a group ordered by
  // (key, rank); colour < 0 takes part and gets null.
  std::shared_ptr<ProcessGroup> split(int color, int key, GroupOptions options);

  // Every pending and later collective of the group fails promptly.
  void abort(const std::string& reason);

  // Collectives (PyTorch's torch.distributed, tensor forms). `op`: a
  // tsr_collective_op. Each returns its Work, already queued.
  std::shared_ptr<Work> all_reduce(TensorImpl* tensor, int op);
  std::shared_ptr<Work> broadcast(TensorImpl* tensor, int root);
  std::shared_ptr<Work> reduce(TensorImpl* tensor, int op, int root);
  // out: [size * in.sizes[0], ...] (or [size] for a 0-d in).
  std::shared_ptr<Work> all_gather(TensorImpl* out, TensorImpl* in);
  // in: [size * out.sizes[0], ...].
  std::shared_ptr<Work> reduce_scatter(TensorImpl* out, TensorImpl* in, int op);
  // out: all_gather's layout on the root; null elsewhere.
  std::shared_ptr<Work> gather(TensorImpl* out, TensorImpl* in, int root);
  // in: reduce_scatter's layout on the root; null elsewhere.
  std::shared_ptr<Work> scatter(TensorImpl* out, TensorImpl* in, int root);
  // Equal splits of dim 0 (all_to_all_single without split sizes).
  std::shared_ptr<Work> all_to_all(TensorImpl* out, TensorImpl* in);
  std::shared_ptr<Work> send(TensorImpl* tensor, int dst);
  std::shared_ptr<Work> recv(TensorImpl* tensor, int src);
  std::shared_ptr<Work> barrier();

  // What runs a device's collectives: "gloo 0.5.0 (tcp)", or "staged
  // through cpu:0: gloo ..." (no communicator is made).
  std::string engine_for(DeviceRecord* device);

  struct Task;

 private:
  ProcessGroup(Runtime* runtime, std::shared_ptr<Store> store, int rank, int size,
               GroupOptions options);
  std::shared_ptr<Work> submit(std::unique_ptr<Task> task);
  struct Lane;
  void worker_loop();
  void lane_loop(Lane& lane);
  void execute(std::unique_ptr<Task> task);
  bool finish_if_failed(Task& task);
  void hand_to_lane(std::unique_ptr<Task> task);
  Communicator* communicator_for(const Task& task);
  void run(Task& task);
  Communicator& comm_for(DeviceRecord* device);
  DeviceRecord* host_device();
  void exchange_headers(const Task& task);
  std::shared_ptr<ProcessGroup> make_subgroup(const std::string& name,
                                              const std::vector<int>& members,
                                              GroupOptions options);

  Runtime* runtime_;
  std::shared_ptr<Store> store_;
  int rank_, size_;
  GroupOptions options_;
  bool check_headers_;
  int64_t subgroups_ = 0;  // new_group / split calls, the same count on every rank
  int64_t sequence_ = 0;   // collectives issued (worker thread only)

  std::mutex mu_;  // guards the queue, failure state and communicators map
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Task>> queue_;
  bool stopping_ = false;
  bool failed_ = false;
  std::string failure_;
  std::map<DeviceRecord*, std::unique_ptr<Communicator>> comms_;
  std::map<std::string, int> comms_per_type_;
  std::thread worker_;
  // Point-to-point lanes by (peer, direction), made on first use (guarded by
  // mu_); they stop after the worker, which may still hand them tasks.
  std::map<int, std::unique_ptr<Lane>> lanes_;
  bool lanes_stopping_ = false;
};

// env:// and friends (torch.distributed.init_process_group): the world group
// of this process from `init_method` - "env://" (or empty: MASTER_ADDR,
// MASTER_PORT, RANK, WORLD_SIZE; under mpirun OMPI_COMM_WORLD_RANK / _SIZE,
// and without MASTER_ADDR a file store for the job), "tcp://host:port" or
// "file:///path". `rank` / `world_size` < 0: from the environment.
std::shared_ptr<ProcessGroup> init_process_group(Runtime* runtime, const std::string& init_method,
                                                 int rank, int world_size, GroupOptions options);

}  // namespace tsr::dist
