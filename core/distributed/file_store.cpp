// The file store and the prefix store (store.h).
//
// The file is a log of records, each "<u32 key size><key><u64 value
// size><value>", appended under an exclusive flock; the last record of a key
// is its value. Readers take the lock, read what was appended since their last
// read and keep the map in memory, so a wait polls only the new bytes (every
// 5 ms). A record cut short (a writer killed mid-append) ends the readable
// log; the next writer truncates that torn tail before appending.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "distributed/store.h"
#include "util/error.h"

namespace tsr::dist {
namespace {

std::string joined(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) {
    if (!out.empty()) out += "', '";
    out += k;
  }
  return "'" + out + "'";
}

class FileStore final : public Store {
 public:
  FileStore(std::string path, milliseconds timeout) : Store(timeout), path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      fail(TSR_UNAVAILABLE, "file store '{}': cannot open it: {}; give a writable path", path_,
           std::strerror(errno));
    }
  }
  ~FileStore() override { ::close(fd_); }

  void set(const std::string& key, const std::string& value) override {
    std::lock_guard<std::mutex> lock(mu_);
    locked_file guard(fd_, path_);
    refresh();
    append(key, value);
  }

  std::string get(const std::string& key, milliseconds timeout) override {
    wait({key}, timeout);
    std::lock_guard<std::mutex> lock(mu_);
    return values_.at(key);
  }

  void wait(const std::vector<std::string>& keys, milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (check(keys)) return;
      if (std::chrono::steady_clock::now() >= deadline) {
        fail(TSR_DEADLINE_EXCEEDED,
             "file store '{}': timed out after {} ms waiting for key(s) {}; did every rank "
             "start, with the same store?",
             path_, timeout.count(), joined(missing(keys)));
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
  }

  int64_t add(const std::string& key, int64_t delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    locked_file guard(fd_, path_);
    refresh();
    int64_t value = 0;
    if (auto it = values_.find(key); it != values_.end()) value = parse_counter(key, it->second);
    value += delta;
    append(key, std::to_string(value));
    return value;
  }

  bool check(const std::vector<std::string>& keys) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& k : keys)
      if (values_.count(k) == 0) {
        locked_file guard(fd_, path_, LOCK_SH);
        refresh();
        break;
      }
    for (const std::string& k : keys)
      if (values_.count(k) == 0) return false;
    return true;
  }

 private:
  struct locked_file {
    locked_file(int fd, const std::string& path, int how = LOCK_EX) : fd(fd) {
      while (::flock(fd, how) != 0) {
        if (errno != EINTR)
          fail(TSR_UNAVAILABLE, "file store '{}': flock failed: {}", path, std::strerror(errno));
      }
    }
    ~locked_file() { ::flock(fd, LOCK_UN); }
    int fd;
  };

  std::vector<std::string> missing(const std::vector<std::string>& keys) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const std::string& k : keys)
      if (values_.count(k) == 0) out.push_back(k);
    return out;
  }

  int64_t parse_counter(const std::string& key, const std::string& text) {
    try {
      size_t used = 0;
      const long long v = std::stoll(text, &used);
      if (used == text.size()) return v;
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): reported below
    }
    fail(TSR_FAILED_PRECONDITION, "file store '{}': key '{}' holds '{}', not a counter for add",
         path_, key, text.substr(0, 64));
  }

  // Reads the records appended since the last read (the lock is held).
  void refresh() {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail(TSR_UNAVAILABLE, "file store '{}': fstat failed", path_);
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size <= read_) return;
    std::string bytes(size - read_, '\0');
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n =
          ::pread(fd_, bytes.data() + got, bytes.size() - got, static_cast<off_t>(read_ + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(TSR_UNAVAILABLE, "file store '{}': read failed", path_);
      got += static_cast<size_t>(n);
    }
    size_t at = 0;
    while (at + 4 <= bytes.size()) {
      uint32_t key_size = 0;
      std::memcpy(&key_size, bytes.data() + at, 4);
      if (at + 4 + key_size + 8 > bytes.size()) break;
      uint64_t value_size = 0;
      std::memcpy(&value_size, bytes.data() + at + 4 + key_size, 8);
      const size_t body = at + 12 + key_size;
      if (value_size > bytes.size() - body) break;
      values_[bytes.substr(at + 4, key_size)] = bytes.substr(body, value_size);
      at = body + value_size;
    }
    read_ += at;
    torn_ = read_ < size;
  }

  // Appends one record (the exclusive lock is held and refresh() ran).
  void append(const std::string& key, const std::string& value) {
    if (torn_ && ::ftruncate(fd_, static_cast<off_t>(read_)) != 0) {
      fail(TSR_UNAVAILABLE, "file store '{}': cannot repair a torn record: {}", path_,
           std::strerror(errno));
    }
    torn_ = false;
    std::string record(4 + key.size() + 8 + value.size(), '\0');
    const auto key_size = static_cast<uint32_t>(key.size());
    const auto value_size = static_cast<uint64_t>(value.size());
    std::memcpy(record.data(), &key_size, 4);
    std::memcpy(record.data() + 4, key.data(), key.size());
    std::memcpy(record.data() + 4 + key.size(), &value_size, 8);
    std::memcpy(record.data() + 12 + key.size(), value.data(), value.size());
    size_t put = 0;
    while (put < record.size()) {
      const ssize_t n =
          ::pwrite(fd_, record.data() + put, record.size() - put, static_cast<off_t>(read_ + put));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fail(TSR_UNAVAILABLE, "file store '{}': write failed: {}", path_, std::strerror(errno));
      }
      put += static_cast<size_t>(n);
    }
    read_ += record.size();
    values_[key] = value;
  }

  std::string path_;
  int fd_ = -1;
  std::mutex mu_;
  std::map<std::string, std::string> values_;
  uint64_t read_ = 0;  // bytes of the log parsed
  bool torn_ = false;
};

class PrefixStore final : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> base, std::string prefix)
      : Store(base->default_timeout()), base_(std::move(base)), prefix_(std::move(prefix) + "/") {}
  void set(const std::string& key, const std::string& value) override {
    base_->set(prefix_ + key, value);
  }
  std::string get(const std::string& key, milliseconds timeout) override {
    return base_->get(prefix_ + key, timeout);
  }
  void wait(const std::vector<std::string>& keys, milliseconds timeout) override {
    base_->wait(prefixed(keys), timeout);
  }
  int64_t add(const std::string& key, int64_t delta) override {
    return base_->add(prefix_ + key, delta);
  }
  bool check(const std::vector<std::string>& keys) override { return base_->check(prefixed(keys)); }
  const Store& base() const { return *base_; }

 private:
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    out.reserve(keys.size());
    for (const std::string& k : keys) out.push_back(prefix_ + k);
    return out;
  }
  std::shared_ptr<Store> base_;
  std::string prefix_;
};

}  // namespace

std::shared_ptr<Store> file_store(const std::string& path, milliseconds timeout) {
  if (path.empty()) fail(TSR_INVALID_ARGUMENT, "file store: the path is empty; give a file path");
  return std::make_shared<FileStore>(path, timeout);
}

std::shared_ptr<Store> prefix_store(std::shared_ptr<Store> base, const std::string& prefix) {
  return std::make_shared<PrefixStore>(std::move(base), prefix);
}

}  // namespace tsr::dist
