// tessera/serialize/atomic_file.hpp - writing a file all-or-nothing (POSIX).
//
// `AtomicFile` writes a new version of `path` so that a reader, or the same
// path after a crash, sees either the old file or the complete new one, never
// a mix: the bytes go to a fresh temporary file in the same directory (same
// filesystem, so the rename is atomic), which commit() fsyncs, renames over
// `path` and makes durable by fsyncing the directory. Until commit() succeeds
// `path` is untouched; any failure (a write error such as ENOSPC or EFBIG, a
// failed fsync or rename) throws tessera::Error and the destructor removes the
// temporary file. Checkpoints use it so that a crash or a full disk in the
// middle of a save never destroys the previous checkpoint.
//
// The new file gets mode 0666 minus the umask, as a plain open() would; a
// symlink at `path` is replaced by the file, not followed.
//
// A writer killed mid-write (SIGKILL, power loss) cannot remove its temporary
// file, `<path>.tmp-<pid>-<n>`; the next AtomicFile for the same path removes
// such leftovers. A temporary is stale when its writer's process is gone
// (kill(pid, 0) reports ESRCH) and nobody holds the flock every writer keeps
// on its temporary while writing - so a live writer's file, in this process or
// another, is never touched, even if its pid was reused.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "tessera/error.hpp"

namespace tessera::serialize {

class AtomicFile {
 public:
  // Creates the temporary file next to `path`. Throws tessera::Error
  // (NOT_FOUND when the directory does not exist, PERMISSION_DENIED, ...).
  explicit AtomicFile(std::string path) : path_(std::move(path)) {
    if (path_.empty()) [[unlikely]] {
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "save: the path is empty; name a file to write");
    }
    remove_stale_temporaries(path_);
    static std::atomic<uint64_t> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
      temp_path_ =
          path_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
      fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) {
        // Held until the file is closed: marks it as being written (see above).
        // Best effort: where flock is unsupported, the pid check still applies.
        (void)::flock(fd_, LOCK_EX | LOCK_NB);
        return;
      }
      if (errno != EEXIST) break;
    }
    const int error = errno;
    temp_path_.clear();
    fail("cannot create a temporary file next to it", error);
  }

  // Not committed: closes and removes the temporary file; `path` is unchanged.
  ~AtomicFile() { discard(); }

  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // The file being replaced, and the temporary file holding the new bytes
  // (empty once committed or discarded). Valid while *this lives.
  const std::string& path() const noexcept { return path_; }
  const std::string& temp_path() const noexcept { return temp_path_; }

  // Appends `size` bytes. Throws tessera::Error on a write error (the file is
  // then unusable: the caller lets *this go out of scope).
  void write(const void* data, size_t size) {
    require_open("write");
    const auto* bytes = static_cast<const unsigned char*>(data);
    while (size > 0) {
      const ssize_t written = ::write(fd_, bytes, size);
      if (written < 0) {
        if (errno == EINTR) continue;
        fail("writing the temporary file '" + temp_path_ + "' failed", errno);
      }
      bytes += written;
      size -= static_cast<size_t>(written);
    }
  }

  // Makes the new contents durable and visible at `path`: fsync, close,
  // rename over `path`, fsync the directory. Throws tessera::Error on any
  // failure, leaving `path` as it was unless the rename itself happened (then
  // only the directory fsync failed, and the new file is in place).
  void commit() {
    require_open("commit");
    if (::fsync(fd_) != 0) fail("fsync of the temporary file '" + temp_path_ + "' failed", errno);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail("closing the temporary file '" + temp_path_ + "' failed", errno);
    if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
      fail("renaming '" + temp_path_ + "' over it failed", errno);
    }
    temp_path_.clear();
    const std::string directory = directory_of(path_);
    const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) fail("opening its directory '" + directory + "' to fsync it failed", errno);
    const int sync_result = ::fsync(dir_fd);
    const int sync_errno = errno;
    ::close(dir_fd);
    // Some filesystems cannot fsync a directory (EINVAL); the rename is done.
    if (sync_result != 0 && sync_errno != EINVAL) {
      fail("fsync of its directory '" + directory + "' failed", sync_errno, true);
    }
  }

 private:
  // Removes `<path>.tmp-<pid>-<n>` files left by writers that died (see the
  // file comment). Never throws; a file it cannot inspect is left alone.
  static void remove_stale_temporaries(const std::string& path) noexcept {
    const std::string directory = directory_of(path);
    const size_t slash = path.find_last_of('/');
    const std::string prefix =
        (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp-";
    DIR* dir = ::opendir(directory.c_str());
    if (dir == nullptr) return;
    while (const dirent* entry = ::readdir(dir)) {
      const char* name = entry->d_name;
      if (std::strncmp(name, prefix.c_str(), prefix.size()) != 0) continue;
      // "<pid>-<n>" after the prefix, digits only.
      const char* p = name + prefix.size();
      long long pid = 0;
      const char* digits = p;
      while (*p >= '0' && *p <= '9' && pid < (1LL << 40)) pid = pid * 10 + (*p++ - '0');
      if (p == digits || *p != '-' || pid <= 0 || pid == ::getpid()) continue;
      const char* counter = ++p;
      while (*p >= '0' && *p <= '9') ++p;
      if (p == counter || *p != '\0') continue;
      if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive
      const std::string stale = directory + "/" + name;
      const int fd = ::open(stale.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0) continue;
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0) ::unlink(stale.c_str());
      ::close(fd);
    }
    ::closedir(dir);
  }

  static std::string directory_of(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
  }

  void require_open(const char* what) const {
    if (fd_ < 0) [[unlikely]] {
      tessera::detail::throw_error(TSR_FAILED_PRECONDITION,
                                   std::string("AtomicFile::") + what + " on '" + path_ +
                                       "' after commit() or a failure; make a "
                                       "new AtomicFile to write again");
    }
  }

  // Removes the temporary file; never throws.
  void discard() noexcept {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
    if (!temp_path_.empty()) {
      ::unlink(temp_path_.c_str());
      temp_path_.clear();
    }
  }

  // `replaced`: the rename already happened, so `path` holds the new file.
  [[noreturn]] void fail(const std::string& what, int error, bool replaced = false) {
    discard();
    tsr_status_code code = TSR_INTERNAL;
    switch (error) {
      case ENOENT:
      case ENOTDIR:
        code = TSR_NOT_FOUND;
        break;
      case EACCES:
      case EPERM:
      case EROFS:
        code = TSR_PERMISSION_DENIED;
        break;
      case ENOSPC:
      case EDQUOT:
      case EFBIG:
        code = TSR_RESOURCE_EXHAUSTED;
        break;
      default:
        code = TSR_UNKNOWN;
        break;
    }
    tessera::detail::throw_error(
        code, "save '" + path_ + "': " + what + ": " + std::strerror(error) +
                  (replaced ? "; the new file is in place but may not survive a crash"
                            : "; the previous file (if any) is unchanged"));
  }

  std::string path_;
  std::string temp_path_;  // empty when there is no temporary file to remove
  int fd_ = -1;            // owned; -1 once closed
};

}  // namespace tessera::serialize
