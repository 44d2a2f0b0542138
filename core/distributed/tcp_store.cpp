// The TCP store (store.h): one process serves the keys from a thread, every
// process (the server's included) is a client over one connection.
//
// Note [TCP store protocol]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Requests: a byte of op, then its fields; strings are "<u32 size><bytes>",
// values "<u64 size><bytes>", integers little-endian:
//   SET key value   -> u8 1
//   GET key         -> value          (answered once the key exists)
//   WAIT n key...   -> u8 1           (answered once every key exists)
//   ADD key i64     -> u8 1 and i64 the sum (u8 0: the key is no counter)
//   CHECK n key...  -> u8 0 or 1
// One request at a time per connection. The server answers a waiting GET or
// WAIT when a SET or ADD completes it; the client gives up at its timeout and
// closes the connection (the server drops the waiter), reconnecting on its
// next call. A request breaking the protocol or the limits (keys of 1 MiB,
// values of 1 GiB, 65,536 keys) closes that client's connection; the server
// and the other clients go on.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "distributed/store.h"
#include "util/error.h"

namespace tsr::dist {
namespace {

enum Op : uint8_t { kSet = 1, kGet = 2, kWait = 3, kAdd = 4, kCheck = 5 };
constexpr uint32_t kMaxKey = 1u << 20;
constexpr uint64_t kMaxValue = uint64_t{1} << 30;
constexpr uint32_t kMaxKeys = 65536;

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void put_str(std::string& out, const std::string& s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out += s;
}

// Reads fields from a buffer; `ok` turns false when it ends too soon.
struct reader {
  const std::string& in;
  size_t at = 0;
  bool ok = true;
  bool bad = false;  // broke the limits
  bool take(void* out, size_t n) {
    if (!ok || in.size() - at < n) return ok = false;
    std::memcpy(out, in.data() + at, n);
    at += n;
    return true;
  }
  uint32_t u32() {
    uint32_t v = 0;
    take(&v, 4);
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    take(&v, 8);
    return v;
  }
  std::string bytes(uint64_t n, uint64_t limit) {
    if (!ok) return {};
    if (n > limit) {
      bad = true;
      return ok = false, std::string();
    }
    if (in.size() - at < n) return ok = false, std::string();
    std::string s = in.substr(at, n);
    at += n;
    return s;
  }
  std::string str() { return bytes(u32(), kMaxKey); }
};

bool send_all(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// ---- the server ----

class Server {
 public:
  explicit Server(uint16_t port) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) fail(TSR_UNAVAILABLE, "TCP store: socket failed: {}", std::strerror(errno));
    const int one = 1, zero = 0;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc = -1;
    if (v6) {
      ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(port);
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(port);
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc != 0 || ::listen(listen_fd_, 1024) != 0) {
      const int e = errno;
      ::close(listen_fd_);
      fail(TSR_UNAVAILABLE,
           "TCP store: cannot serve on port {}: {}; is another job using it? Pick another "
           "MASTER_PORT",
           port, std::strerror(e));
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
      ::close(listen_fd_);
      fail(TSR_UNAVAILABLE, "TCP store: pipe failed: {}", std::strerror(errno));
    }
    thread_ = std::thread([this] { loop(); });
  }

  ~Server() {
    stop_ = true;
    const char b = 1;
    (void)!::write(wake_[1], &b, 1);
    thread_.join();
    for (auto& [fd, c] : clients_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  uint16_t port() const { return port_; }

 private:
  struct client {
    std::string in;
    uint8_t waiting = 0;  // kGet or kWait when blocked
    std::vector<std::string> keys;
  };

  void loop() {
    while (!stop_) {
      std::vector<pollfd> fds;
      fds.push_back({listen_fd_, POLLIN, 0});
      fds.push_back({wake_[0], POLLIN, 0});
      for (auto& [fd, c] : clients_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 1000) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents & POLLIN) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          const int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          clients_[fd];
        }
      }
      std::vector<int> closed;
      for (size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        const int fd = fds[i].fd;
        char buf[65536];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
          if (n < 0 && errno == EINTR) continue;
          closed.push_back(fd);
          continue;
        }
        client& c = clients_[fd];
        c.in.append(buf, static_cast<size_t>(n));
        if (!serve(fd, c)) closed.push_back(fd);
      }
      for (int fd : closed) {
        ::close(fd);
        clients_.erase(fd);
      }
    }
  }

  bool has_all(const std::vector<std::string>& keys) const {
    for (const std::string& k : keys)
      if (values_.count(k) == 0) return false;
    return true;
  }

  // Answers what it can of the client's buffered requests; false closes it.
  bool serve(int fd, client& c) {
    while (c.waiting == 0 && !c.in.empty()) {
      reader r{c.in};
      uint8_t op = 0;
      r.take(&op, 1);
      std::string reply;
      bool changed = false;
      switch (op) {
        case kSet: {
          std::string key = r.str();
          std::string value = r.bytes(r.u64(), kMaxValue);
          if (!r.ok) return !r.bad;
          values_[std::move(key)] = std::move(value);
          reply.push_back(1);
          changed = true;
          break;
        }
        case kAdd: {
          std::string key = r.str();
          int64_t delta = 0;
          r.take(&delta, 8);
          if (!r.ok) return !r.bad;
          int64_t v = 0;
          bool counter = true;
          if (auto it = values_.find(key); it != values_.end()) {
            size_t used = 0;
            try {
              v = std::stoll(it->second, &used);
            } catch (const std::exception&) {
              counter = false;
            }
            counter = counter && used == it->second.size();
          }
          reply.push_back(counter ? 1 : 0);
          if (counter) {
            v += delta;
            values_[key] = std::to_string(v);
            changed = true;
          }
          reply.append(reinterpret_cast<const char*>(&v), 8);
          break;
        }
        case kGet:
        case kWait:
        case kCheck: {
          std::vector<std::string> keys;
          if (op == kGet) {
            keys.push_back(r.str());
          } else {
            const uint32_t n = r.u32();
            if (n > kMaxKeys) return false;
            for (uint32_t i = 0; i < n && r.ok; ++i) keys.push_back(r.str());
          }
          if (!r.ok) return !r.bad;
          if (op == kCheck) {
            reply.push_back(has_all(keys) ? 1 : 0);
          } else {
            c.waiting = op;
            c.keys = std::move(keys);
          }
          break;
        }
        default:
          return false;
      }
      c.in.erase(0, r.at);
      if (!reply.empty() && !send_all(fd, reply)) return false;
      if (c.waiting != 0 && !answer_waiter(fd, c)) return false;
      if (changed) wake_waiters(fd);
    }
    return true;
  }

  // Answers client c's blocked GET/WAIT when its keys exist.
  bool answer_waiter(int fd, client& c) {
    if (!has_all(c.keys)) return true;
    std::string reply;
    if (c.waiting == kGet) {
      const std::string& v = values_[c.keys[0]];
      put_u64(reply, v.size());
      reply += v;
    } else {
      reply.push_back(1);
    }
    c.waiting = 0;
    c.keys.clear();
    return send_all(fd, reply);
  }

  // Answers the blocked clients a SET or ADD completed. A blocked client
  // has nothing buffered behind its request (one request at a time).
  void wake_waiters(int except) {
    std::vector<int> closed;
    for (auto& [fd, c] : clients_) {
      if (fd == except || c.waiting == 0) continue;
      if (!answer_waiter(fd, c)) closed.push_back(fd);
    }
    for (int fd : closed) {
      ::close(fd);
      clients_.erase(fd);
    }
  }

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::map<int, client> clients_;  // the server thread's only
  std::map<std::string, std::string> values_;
  std::thread thread_;
};

// ---- the client ----

class TcpStore final : public Store {
 public:
  TcpStore(std::string host, uint16_t port, bool is_server, milliseconds timeout)
      : Store(timeout), host_(std::move(host)), port_(port) {
    if (is_server) {
      server_ = std::make_unique<Server>(port);
      port_ = server_->port();
    }
    idle_.push_back(connect_new(std::chrono::steady_clock::now() + timeout));
  }
  ~TcpStore() override {
    for (int fd : idle_) ::close(fd);
  }

  uint16_t port() const { return port_; }

  void set(const std::string& key, const std::string& value) override {
    std::string req(1, static_cast<char>(kSet));
    put_str(req, key);
    put_u64(req, value.size());
    req += value;
    call(req, 1, default_timeout(), {key});
  }

  std::string get(const std::string& key, milliseconds timeout) override {
    std::string req(1, static_cast<char>(kGet));
    put_str(req, key);
    return call(req, 0, timeout, {key});
  }

  void wait(const std::vector<std::string>& keys, milliseconds timeout) override {
    std::string req(1, static_cast<char>(kWait));
    put_u32(req, static_cast<uint32_t>(keys.size()));
    for (const std::string& k : keys) put_str(req, k);
    call(req, 1, timeout, keys);
  }

  int64_t add(const std::string& key, int64_t delta) override {
    std::string req(1, static_cast<char>(kAdd));
    put_str(req, key);
    req.append(reinterpret_cast<const char*>(&delta), 8);
    const std::string r = call(req, 9, default_timeout(), {key});
    if (r[0] == 0)
      fail(TSR_FAILED_PRECONDITION,
           "TCP store {}: key '{}' holds a value that is not a counter; add needs a key that "
           "only add wrote",
           address(), key);
    int64_t v = 0;
    std::memcpy(&v, r.data() + 1, 8);
    return v;
  }

  bool check(const std::vector<std::string>& keys) override {
    std::string req(1, static_cast<char>(kCheck));
    put_u32(req, static_cast<uint32_t>(keys.size()));
    for (const std::string& k : keys) put_str(req, k);
    return call(req, 1, default_timeout(), keys)[0] != 0;
  }

 private:
  std::string address() const { return fmt::format("{}:{}", host_, port_); }

  void check_key(const std::string& key) const {
    if (key.size() > kMaxKey)
      fail(TSR_INVALID_ARGUMENT, "TCP store: a key of {} bytes; keys are at most {} bytes",
           key.size(), kMaxKey);
  }

  // A new connection, retrying until `deadline` while the server starts.
  int connect_new(std::chrono::steady_clock::time_point deadline) {
    const std::string service = std::to_string(port_);
    std::string last = "no address";
    for (;;) {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* list = nullptr;
      const int gai = ::getaddrinfo(host_.c_str(), service.c_str(), &hints, &list);
      if (gai != 0) {
        last = ::gai_strerror(gai);
      } else {
        for (addrinfo* a = list; a != nullptr; a = a->ai_next) {
          const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
          if (fd < 0) continue;
          if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            ::freeaddrinfo(list);
            return fd;
          }
          last = std::strerror(errno);
          ::close(fd);
        }
        ::freeaddrinfo(list);
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        fail(TSR_UNAVAILABLE,
             "TCP store: cannot reach {} ({}); is rank 0 running, and are MASTER_ADDR and "
             "MASTER_PORT right?",
             address(), last);
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
  }

  // Note [Store connections]
  // ~~~~~~~~~~~~~~~~~~~~~~~~~
  // A call holds a connection of its own for its
  // whole round trip (a get may wait minutes), taken from the idle ones or
  // made afresh, and returned when the reply came; so one thread's waiting
  // get never holds up another thread's set - two process groups of one
  // process rendezvous concurrently. A connection that failed or timed out
  // (the server may still owe a reply) is closed, not returned.
  struct Lease {
    TcpStore* store;
    int fd;
    bool ok = false;
    ~Lease() {
      if (ok) {
        std::lock_guard<std::mutex> lock(store->mu_);
        store->idle_.push_back(fd);
      } else {
        ::close(fd);
      }
    }
  };
  int take_connection(std::chrono::steady_clock::time_point deadline) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        const int fd = idle_.back();
        idle_.pop_back();
        return fd;
      }
    }
    return connect_new(deadline);
  }

  // Sends `req` and reads the reply: `fixed` bytes, or (0) a u64-sized value.
  std::string call(const std::string& req, size_t fixed, milliseconds timeout,
                   const std::vector<std::string>& keys) {
    for (const std::string& k : keys) check_key(k);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    Lease lease{this, take_connection(deadline)};
    const int fd = lease.fd;  // closed by the lease unless the call succeeds
    if (!send_all(fd, req)) {
      fail(TSR_UNAVAILABLE, "TCP store {}: the server closed the connection (did rank 0 exit?)",
           address());
    }
    std::string reply;
    size_t want = fixed == 0 ? 8 : fixed;
    bool sized = fixed != 0;
    while (reply.size() < want) {
      const auto left =
          std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLIN, 0};
      const int rc = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) {
        std::string names;
        for (const std::string& k : keys) names += (names.empty() ? "'" : ", '") + k + "'";
        fail(TSR_DEADLINE_EXCEEDED,
             "TCP store {}: timed out after {} ms waiting for key(s) {}; did every rank start "
             "and reach this point?",
             address(), timeout.count(), names);
      }
      char buf[65536];
      const ssize_t n = ::recv(fd, buf, std::min(sizeof buf, want - reply.size()), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fail(TSR_UNAVAILABLE, "TCP store {}: the server closed the connection (did rank 0 exit?)",
             address());
      }
      reply.append(buf, static_cast<size_t>(n));
      if (!sized && reply.size() == 8) {
        uint64_t size = 0;
        std::memcpy(&size, reply.data(), 8);
        reply.clear();
        want = size;
        sized = true;
        if (want == 0) break;
      }
    }
    lease.ok = true;
    return reply;
  }

  std::string host_;
  uint16_t port_;
  std::unique_ptr<Server> server_;
  std::mutex mu_;          // guards idle_
  std::vector<int> idle_;  // connections between calls
};

}  // namespace

std::shared_ptr<Store> tcp_store(const std::string& host, uint16_t port, bool is_server,
                                 milliseconds timeout) {
  if (host.empty() && !is_server)
    fail(TSR_INVALID_ARGUMENT, "TCP store: the host is empty; give the server's address");
  return std::make_shared<TcpStore>(host.empty() ? "127.0.0.1" : host, port, is_server, timeout);
}

uint16_t tcp_store_port(const Store& store) {
  if (const auto* t = dynamic_cast<const TcpStore*>(&store)) return t->port();
  return 0;
}

}  // namespace tsr::dist
