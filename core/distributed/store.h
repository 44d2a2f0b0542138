// Key/value stores for the rendezvous of a process group (PyTorch's
// c10d::Store model): a TCP store served by one process for several hosts,
// a file store for the processes of one machine, and a prefix view.
//
// Note [Store semantics]
// ~~~~~~~~~~~~~~~~~~~~~~
// Keys are strings, values bytes. set overwrites; get waits until the key
// exists; wait waits for every key; add adds to the integer a key holds,
// written as decimal text as PyTorch's stores do (get of a counter returns
// "3"), starting from 0, and returns the sum; check says whether every key
// exists without waiting. Every waiting call gives up after its timeout with
// DEADLINE_EXCEEDED naming the keys it still lacked; a store that cannot be
// reached is UNAVAILABLE naming the address. Stores are thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tsr::dist {

using std::chrono::milliseconds;

class Store {
 public:
  virtual ~Store() = default;
  virtual void set(const std::string& key, const std::string& value) = 0;
  virtual std::string get(const std::string& key, milliseconds timeout) = 0;
  virtual void wait(const std::vector<std::string>& keys, milliseconds timeout) = 0;
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // The timeout the store was made with, for callers that have none.
  milliseconds default_timeout() const { return timeout_; }

 protected:
  explicit Store(milliseconds timeout) : timeout_(timeout) {}

 private:
  milliseconds timeout_;
};

// Keys of `base` under "<prefix>/": one group's or communicator's view.
std::shared_ptr<Store> prefix_store(std::shared_ptr<Store> base, const std::string& prefix);

// A store in one file, shared by processes of one machine through advisory
// locks (flock); made empty when `path` does not exist.
std::shared_ptr<Store> file_store(const std::string& path, milliseconds timeout);

// A TCP store: `is_server` serves it on `port` of every interface (0: a
// free port, see tcp_store_port) from a thread of this process and connects
// to it; the others connect to host:port, retrying until `timeout` while the
// server starts.
std::shared_ptr<Store> tcp_store(const std::string& host, uint16_t port, bool is_server,
                                 milliseconds timeout);
// The port a TCP store serves or reaches; 0 for other stores.
uint16_t tcp_store_port(const Store& store);

}  // namespace tsr::dist
