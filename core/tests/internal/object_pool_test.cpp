// ObjectPool (core/util/object_pool.h): storage recycled on one thread is
// served again on another, and a thread that only recycles (the process
// group's worker, releasing the tensors of the collectives it ran) hands its
// cache back when it ends instead of losing it. LeakSanitizer found the loss
// as leaked tensors in frontend.distributed_faults.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "util/object_pool.h"

namespace tsr {
namespace {

struct OnlyHere {  // a type of this test's own, so no other code shares its pool
  char bytes[48];
};
using Pool = ObjectPool<OnlyHere>;

TEST(ObjectPool, AThreadThatOnlyRecyclesHandsItsCacheBackWhenItEnds) {
  std::vector<void*> made;
  for (int i = 0; i < 10; ++i) made.push_back(Pool::acquire());
  // Another thread recycles them, never acquiring, and ends.
  std::thread([&] {
    for (void* p : made) Pool::recycle(p);
  }).join();
  // This thread's cache is empty, so it refills from the global list: every
  // object comes back rather than fresh memory.
  std::set<void*> again;
  for (int i = 0; i < 10; ++i) again.insert(Pool::acquire());
  EXPECT_EQ(again, std::set<void*>(made.begin(), made.end()));
  for (void* p : again) Pool::recycle(p);
}

TEST(ObjectPool, RecycledStorageIsServedAgainOnTheSameThread) {
  void* p = Pool::acquire();
  Pool::recycle(p);
  EXPECT_EQ(Pool::acquire(), p);
  Pool::recycle(p);
}

}  // namespace
}  // namespace tsr
