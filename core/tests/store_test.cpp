// store_test.cpp - tessera.h's key/value stores (TCP, file, prefix) through
// the C ABI: threads and processes meeting through them, timeouts, a server
// that is gone, hostile bytes on the server's port, torn file records.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tessera/tessera.h"

namespace {

using namespace std::chrono_literals;

struct status_result {
  tsr_status_code code = TSR_OK;
  std::string message;
};
status_result take(tsr_status* s) {
  status_result r;
  if (s != nullptr) {
    r.code = tsr_status_code_of(s);
    r.message = tsr_status_message(s);
    tsr_status_free(s);
  }
  return r;
}

std::string get_string(tsr_store* s, const char* key, int64_t timeout_ms = -1) {
  char buf[256];
  size_t size = 0;
  status_result r = take(tsr_store_get(s, key, timeout_ms, buf, sizeof buf, &size));
  EXPECT_EQ(r.code, TSR_OK) << r.message;
  return r.code == TSR_OK ? std::string(buf, size) : std::string("<error>");
}

void set_string(tsr_store* s, const char* key, const std::string& v) {
  status_result r = take(tsr_store_set(s, key, v.data(), v.size()));
  ASSERT_EQ(r.code, TSR_OK) << r.message;
}

tsr_store* server(uint16_t* port, int64_t timeout_ms = 10000) {
  tsr_store* s = nullptr;
  status_result r = take(tsr_store_create_tcp(nullptr, 0, true, timeout_ms, &s));
  EXPECT_EQ(r.code, TSR_OK) << r.message;
  EXPECT_EQ(take(tsr_store_port(s, port)).code, TSR_OK);
  EXPECT_NE(*port, 0);
  return s;
}

tsr_store* client(uint16_t port, int64_t timeout_ms = 10000) {
  tsr_store* s = nullptr;
  status_result r = take(tsr_store_create_tcp("127.0.0.1", port, false, timeout_ms, &s));
  EXPECT_EQ(r.code, TSR_OK) << r.message;
  return s;
}

TEST(TcpStore, ThreadsSetGetWaitAddAndCheck) {
  uint16_t port = 0;
  tsr_store* master = server(&port);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([port, t] {
      tsr_store* c = client(port);
      for (int i = 0; i < 50; ++i) {
        int64_t v = 0;
        ASSERT_EQ(take(tsr_store_add(c, "counter", 2, &v)).code, TSR_OK);
        EXPECT_GE(v, 2);
      }
      const std::string key = "rank" + std::to_string(t);
      set_string(c, key.c_str(), "hello from " + std::to_string(t));
      // Everyone waits for everyone, then reads the next one's value.
      const char* keys[] = {"rank0", "rank1", "rank2", "rank3"};
      EXPECT_EQ(take(tsr_store_wait(c, keys, kThreads, 10000)).code, TSR_OK);
      const std::string next = "rank" + std::to_string((t + 1) % kThreads);
      EXPECT_EQ(get_string(c, next.c_str()), "hello from " + std::to_string((t + 1) % kThreads));
      tsr_store_destroy(c);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(get_string(master, "counter"), std::to_string(kThreads * 50 * 2));
  bool all = false;
  const char* present[] = {"rank0", "counter"};
  ASSERT_EQ(take(tsr_store_check(master, present, 2, &all)).code, TSR_OK);
  EXPECT_TRUE(all);
  const char* absent[] = {"rank0", "nobody"};
  ASSERT_EQ(take(tsr_store_check(master, absent, 2, &all)).code, TSR_OK);
  EXPECT_FALSE(all);
  // Empty and binary values travel as they are.
  set_string(master, "empty", "");
  EXPECT_EQ(get_string(master, "empty"), "");
  const std::string binary("a\0b\xff", 4);
  set_string(master, "binary", binary);
  EXPECT_EQ(get_string(master, "binary"), binary);
  tsr_store_destroy(master);
}

TEST(TcpStore, GetBlocksUntilAnotherProcessSets) {
  uint16_t port = 0;
  tsr_store* master = server(&port);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    tsr_store* c = nullptr;
    if (tsr_store_create_tcp("localhost", port, false, 10000, &c) != nullptr) _exit(3);
    std::this_thread::sleep_for(100ms);
    if (tsr_store_set(c, "from_child", "42", 2) != nullptr) _exit(4);
    char buf[8];
    size_t n = 0;
    if (tsr_store_get(c, "from_parent", 10000, buf, sizeof buf, &n) != nullptr) _exit(5);
    _exit(std::string(buf, n) == "ok" ? 0 : 6);
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(get_string(master, "from_child", 10000), "42");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);  // it waited
  set_string(master, "from_parent", "ok");
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  tsr_store_destroy(master);
}

TEST(TcpStore, ATimeoutNamesTheKeysAndTheStoreStillWorks) {
  uint16_t port = 0;
  tsr_store* master = server(&port);
  tsr_store* c = client(port);
  const auto start = std::chrono::steady_clock::now();
  char buf[4];
  status_result r = take(tsr_store_get(c, "never", 200, buf, sizeof buf, nullptr));
  EXPECT_EQ(r.code, TSR_DEADLINE_EXCEEDED);
  EXPECT_NE(r.message.find("timed out after 200 ms waiting for key(s) 'never'"), std::string::npos)
      << r.message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  const char* keys[] = {"a", "b"};
  set_string(c, "a", "1");
  r = take(tsr_store_wait(c, keys, 2, 100));
  EXPECT_EQ(r.code, TSR_DEADLINE_EXCEEDED);
  // The abandoned reply does not confuse the next call.
  set_string(c, "b", "2");
  EXPECT_EQ(get_string(c, "b"), "2");
  EXPECT_EQ(take(tsr_store_wait(c, keys, 2, 1000)).code, TSR_OK);
  tsr_store_destroy(c);
  tsr_store_destroy(master);
}

TEST(TcpStore, AServerThatIsGoneIsUnavailableNamingTheAddress) {
  uint16_t port = 0;
  tsr_store* master = server(&port);
  tsr_store* c = client(port);
  tsr_store_destroy(master);  // the server stops
  status_result r = take(tsr_store_set(c, "k", "v", 1));
  // The first call may still be sent before the close is seen; the next fails.
  if (r.code == TSR_OK) r = take(tsr_store_set(c, "k", "v", 1));
  EXPECT_EQ(r.code, TSR_UNAVAILABLE) << r.message;
  tsr_store_destroy(c);
  tsr_store* none = nullptr;
  const auto start = std::chrono::steady_clock::now();
  r = take(tsr_store_create_tcp("127.0.0.1", port, false, 300, &none));
  EXPECT_EQ(r.code, TSR_UNAVAILABLE);
  EXPECT_NE(r.message.find("cannot reach 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("MASTER_ADDR"), std::string::npos) << r.message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(none, nullptr);
}

TEST(TcpStore, HostileBytesCloseOnlyThatConnection) {
  uint16_t port = 0;
  tsr_store* master = server(&port);
  for (const std::string& junk : {std::string("\x63garbage"), std::string("\x01\xff\xff\xff\xff"),
                                  std::string("\x03\xff\xff\xff\x7f"), std::string(1, '\x02')}) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(junk.size()));
    ::close(fd);
  }
  set_string(master, "still", "here");
  tsr_store* c = client(port);
  EXPECT_EQ(get_string(c, "still"), "here");
  tsr_store_destroy(c);
  tsr_store_destroy(master);
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string(name) + "-" + std::to_string(getpid())))
      .string();
}

TEST(FileStore, ProcessesShareCountersAndValues) {
  const std::string path = temp_path("tessera-file-store");
  std::filesystem::remove(path);
  constexpr int kChildren = 3;
  std::vector<pid_t> children;
  for (int k = 0; k < kChildren; ++k) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      tsr_store* s = nullptr;
      if (tsr_store_create_file(path.c_str(), 10000, &s) != nullptr) _exit(3);
      for (int i = 0; i < 100; ++i)
        if (tsr_store_add(s, "counter", 1, nullptr) != nullptr) _exit(4);
      const std::string key = "child" + std::to_string(k);
      if (tsr_store_set(s, key.c_str(), "done", 4) != nullptr) _exit(5);
      _exit(0);
    }
    children.push_back(pid);
  }
  tsr_store* s = nullptr;
  ASSERT_EQ(take(tsr_store_create_file(path.c_str(), 10000, &s)).code, TSR_OK);
  const char* keys[] = {"child0", "child1", "child2"};
  EXPECT_EQ(take(tsr_store_wait(s, keys, kChildren, 20000)).code, TSR_OK);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(get_string(s, "counter"), "300");
  status_result r = take(tsr_store_get(s, "absent", 100, nullptr, 0, nullptr));
  EXPECT_EQ(r.code, TSR_DEADLINE_EXCEEDED);
  EXPECT_NE(r.message.find("'absent'"), std::string::npos) << r.message;
  tsr_store_destroy(s);
  std::filesystem::remove(path);
}

TEST(FileStore, ATornRecordIsRepairedByTheNextWriter) {
  const std::string path = temp_path("tessera-file-store-torn");
  std::filesystem::remove(path);
  tsr_store* s = nullptr;
  ASSERT_EQ(take(tsr_store_create_file(path.c_str(), 5000, &s)).code, TSR_OK);
  set_string(s, "a", "1");
  {  // a writer killed mid-record: a key size with nothing after it
    FILE* f = std::fopen(path.c_str(), "ab");
    ASSERT_NE(f, nullptr);
    const uint32_t key_size = 9;
    std::fwrite(&key_size, 4, 1, f);
    std::fwrite("ab", 2, 1, f);
    std::fclose(f);
  }
  tsr_store* t = nullptr;
  ASSERT_EQ(take(tsr_store_create_file(path.c_str(), 5000, &t)).code, TSR_OK);
  EXPECT_EQ(get_string(t, "a"), "1");
  set_string(t, "b", "2");
  EXPECT_EQ(get_string(s, "b"), "2");
  EXPECT_EQ(get_string(s, "a"), "1");
  tsr_store_destroy(t);
  tsr_store_destroy(s);
  std::filesystem::remove(path);
}

TEST(PrefixStore, KeysLiveUnderTheirPrefix) {
  uint16_t port = 0;
  tsr_store* master = server(&port);
  tsr_store* g1 = nullptr;
  tsr_store* g2 = nullptr;
  ASSERT_EQ(take(tsr_store_create_prefix(master, "group1", &g1)).code, TSR_OK);
  ASSERT_EQ(take(tsr_store_create_prefix(master, "group2", &g2)).code, TSR_OK);
  set_string(g1, "k", "one");
  set_string(g2, "k", "two");
  EXPECT_EQ(get_string(g1, "k"), "one");
  EXPECT_EQ(get_string(g2, "k"), "two");
  EXPECT_EQ(get_string(master, "group1/k"), "one");
  tsr_store_destroy(master);  // the prefixes keep the server alive
  EXPECT_EQ(get_string(g2, "k"), "two");
  tsr_store_destroy(g1);
  tsr_store_destroy(g2);
}

TEST(StoreApi, BadArgumentsNameTheArgument) {
  status_result r = take(tsr_store_set(nullptr, "k", "v", 1));
  EXPECT_EQ(r.code, TSR_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("'store' is NULL"), std::string::npos) << r.message;
  uint16_t port = 0;
  tsr_store* s = server(&port);
  r = take(tsr_store_set(s, nullptr, "v", 1));
  EXPECT_NE(r.message.find("'key' is NULL"), std::string::npos) << r.message;
  r = take(tsr_store_set(s, "k", nullptr, 3));
  EXPECT_NE(r.message.find("'value' is NULL with size 3"), std::string::npos) << r.message;
  set_string(s, "long", "0123456789");
  char small[4];
  size_t size = 0;
  r = take(tsr_store_get(s, "long", -1, small, sizeof small, &size));
  EXPECT_EQ(r.code, TSR_OUT_OF_RANGE);
  EXPECT_EQ(size, 10u);
  EXPECT_EQ(take(tsr_store_get(s, "long", -1, nullptr, 0, &size)).code, TSR_OK);
  EXPECT_EQ(size, 10u);
  set_string(s, "text", "not a number");
  r = take(tsr_store_add(s, "text", 1, nullptr));
  EXPECT_EQ(r.code, TSR_FAILED_PRECONDITION);
  EXPECT_NE(r.message.find("key 'text' holds a value that is not a counter"), std::string::npos)
      << r.message;
  EXPECT_EQ(get_string(s, "text"), "not a number");
  const char* bad_keys[] = {"a", nullptr};
  r = take(tsr_store_wait(s, bad_keys, 2, 10));
  EXPECT_NE(r.message.find("'keys[1]' is NULL"), std::string::npos) << r.message;
  tsr_store* none = nullptr;
  r = take(tsr_store_create_tcp(nullptr, 1234, false, 100, &none));
  EXPECT_NE(r.message.find("'host' is NULL"), std::string::npos) << r.message;
  r = take(tsr_store_create_file(nullptr, 100, &none));
  EXPECT_NE(r.message.find("'path' is NULL"), std::string::npos) << r.message;
  r = take(tsr_store_create_file("/nonexistent-dir/x/y", 100, &none));
  EXPECT_EQ(r.code, TSR_UNAVAILABLE);
  EXPECT_NE(r.message.find("/nonexistent-dir/x/y"), std::string::npos) << r.message;
  tsr_store_destroy(s);
  tsr_store_destroy(nullptr);
}

}  // namespace
