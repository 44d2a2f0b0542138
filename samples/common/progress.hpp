// samples/common/progress.hpp - the progress bar, stopwatch and summary the
// sample programs share, so that every sample reports the same way:
//
//   [#####.....] 12/50 loss 0.4213 acc 93.1%
//
// The bar goes to stderr. When stderr is a terminal it is rewritten in place
// ('\r') on every update; otherwise (logs, ctest) it prints one line per
// `every` updates and always the last one, so a log stays short. With quiet
// nothing is printed. print_line() puts a log line (stdout) above the bar.
// The summary goes to stdout as aligned "key: value"
// lines under a title, which is what the samples' ctest entries match.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace samples {

// Formats like printf into a std::string (values for bars and summaries).
template <class... Args>
std::string format(const char* fmt, Args... args) {
  const int needed = std::snprintf(nullptr, 0, fmt, args...);
  std::string text(static_cast<size_t>(std::max(needed, 0)), '\0');
  std::snprintf(text.data(), text.size() + 1, fmt, args...);
  return text;
}

// Wall-clock seconds since construction (or the last restart()).
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  void restart() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// A progress bar over `total` units (steps, batches). Not thread-safe: call
// it from the training loop's thread.
class Progress {
 public:
  // `label` prefixes each line ("epoch 3/10"); `every` is the line interval
  // when stderr is not a terminal (at least 1).
  Progress(std::string label, int64_t total, bool quiet, int64_t every = 10)
      : label_(std::move(label)),
        total_(std::max<int64_t>(total, 1)),
        every_(std::max<int64_t>(every, 1)),
        quiet_(quiet),
        terminal_(isatty(STDERR_FILENO) == 1) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // Ends a bar left open on the terminal.
  ~Progress() { finish(); }

  // Reports `done` of `total` units, followed by `fields` ("loss 0.4213").
  void update(int64_t done, const std::string& fields = {}) {
    if (quiet_) return;
    const bool last = done >= total_;
    ++updates_;
    if (!terminal_ && !last && updates_ % every_ != 0) return;
    const std::string line = render(done, fields);
    if (terminal_) {
      // Pad over the previous line's tail when this one is shorter.
      const size_t pad = width_ > line.size() ? width_ - line.size() : 0;
      std::fprintf(stderr, "\r%s%s", line.c_str(), std::string(pad, ' ').c_str());
      width_ = line.size();
      last_ = line;
      open_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

  // Prints `line` (and a newline) to stdout above the bar: on a terminal the
  // bar is erased and drawn again below the line. Nothing with quiet.
  void print_line(const std::string& line) {
    if (quiet_) return;
    if (open_) std::fprintf(stderr, "\r%s\r", std::string(width_, ' ').c_str());
    std::fflush(stderr);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (open_) {
      std::fprintf(stderr, "%s", last_.c_str());
      std::fflush(stderr);
    }
  }

  // Closes the terminal line so that later output starts on its own line.
  void finish() {
    if (open_) std::fputc('\n', stderr);
    open_ = false;
    width_ = 0;
  }

 private:
  static constexpr int64_t kBarWidth = 20;

  std::string render(int64_t done, const std::string& fields) const {
    const int64_t clamped = std::clamp<int64_t>(done, 0, total_);
    const int64_t filled = clamped * kBarWidth / total_;
    std::string line = label_.empty() ? std::string() : label_ + " ";
    line += '[';
    line.append(static_cast<size_t>(filled), '#');
    line.append(static_cast<size_t>(kBarWidth - filled), '.');
    line += "] " + std::to_string(clamped) + "/" + std::to_string(total_);
    if (!fields.empty()) line += " " + fields;
    return line;
  }

  std::string label_;
  int64_t total_;
  int64_t every_;
  bool quiet_;
  bool terminal_;
  int64_t updates_ = 0;
  size_t width_ = 0;
  std::string last_;
  bool open_ = false;
};

// The final report: a title and aligned "key: value" lines on stdout,
// printed even with --quiet (it is what tests and users read).
class Summary {
 public:
  explicit Summary(std::string title) : title_(std::move(title)) {}

  Summary& add(std::string key, std::string value) {
    rows_.emplace_back(std::move(key), std::move(value));
    return *this;
  }

  void print() const {
    size_t width = 0;
    for (const auto& row : rows_) width = std::max(width, row.first.size());
    std::printf("== %s ==\n", title_.c_str());
    for (const auto& [key, value] : rows_) {
      std::printf("  %s:%s %s\n", key.c_str(), std::string(width - key.size(), ' ').c_str(),
                  value.c_str());
    }
    std::fflush(stdout);
  }

 private:
  std::string title_;
  std::vector<std::pair<std::string, std::string>> rows_;
};

}  // namespace samples
