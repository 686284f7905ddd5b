#include "pkg/util/mutex.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <thread>

namespace ksched {
namespace {

using namespace std::chrono_literals;

struct Guarded {
  SharedMutex mu;
  int value GUARDED_BY(mu) = 0;
};

TEST(SharedMutexTest, ReadersShareTheLock) {
  Guarded g;
  ReaderMutexLock first(g.mu);
  std::atomic<bool> second_read{false};
  // A second reader gets in while the first still holds the lock.
  std::thread t([&] {
    ReaderMutexLock second(g.mu);
    second_read = g.value == 0;
  });
  t.join();
  EXPECT_TRUE(second_read);
}

TEST(SharedMutexTest, WriterExcludesReaders) {
  Guarded g;
  std::atomic<bool> read{false};
  std::thread reader;
  {
    WriterMutexLock w(g.mu);
    reader = std::thread([&] {
      ReaderMutexLock r(g.mu);
      EXPECT_EQ(g.value, 1);  // never the state before the writer finished
      read = true;
    });
    std::this_thread::sleep_for(20ms);
    EXPECT_FALSE(read);
    g.value = 1;
  }
  reader.join();
  EXPECT_TRUE(read);
}

// ReaderMutexLock is BasicLockable, so a condition_variable_any can wait with it in
// shared mode (as Informer::WaitForSync does).
TEST(SharedMutexTest, ConditionVariableWaitsUnderAReaderLock) {
  Guarded g;
  std::condition_variable_any cv;
  std::thread writer([&] {
    std::this_thread::sleep_for(10ms);
    WriterMutexLock w(g.mu);
    g.value = 7;
    cv.notify_all();
  });
  bool seen;
  {
    ReaderMutexLock r(g.mu);
    seen = cv.wait_for(r, 10s, [&]() REQUIRES_SHARED(g.mu) { return g.value == 7; });
  }
  writer.join();
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace ksched
