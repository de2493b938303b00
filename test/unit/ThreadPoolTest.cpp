//===- ThreadPoolTest.cpp - the runtime's parallel_for --------------------===//
//
// The pool behind afm_host_api.parallel_for, tested through its internal
// header: every index runs exactly once, a slowed thread leaves the rest of
// a job to the others, each thread runs its share from the front and
// steals from the back of another's, and nested calls run inline instead
// of deadlocking.
//
//===----------------------------------------------------------------------===//

extern "C" {
#include "runtime/thread_pool.h"
}

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

struct Pool {
  explicit Pool(int32_t threads) {
    EXPECT_EQ(afm_thread_pool_create(threads, &pool), AFM_OK);
  }
  ~Pool() { afm_thread_pool_free(pool); }
  afm_thread_pool *pool = nullptr;
};

struct Record {
  std::vector<std::atomic<int>> hits;
  std::vector<std::thread::id> threads;
  explicit Record(size_t n) : hits(n), threads(n) {}
};

void record(void *ctx, int64_t i) {
  auto *r = static_cast<Record *>(ctx);
  r->hits[i]++;
  r->threads[i] = std::this_thread::get_id();
}

TEST(ThreadPool, EveryIndexRunsOnce) {
  for (int32_t threads : {1, 2, 3, 8}) {
    Pool pool(threads);
    EXPECT_EQ(afm_thread_pool_size(pool.pool), threads);
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      Record r(n);
      afm_thread_pool_parallel_for(pool.pool, n, record, &r);
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(r.hits[i], 1)
            << threads << " threads, n " << n << ", i " << i;
    }
  }
}

// Index 0 holds its thread until more than half of the job is done
// elsewhere (or 10 s pass): with one fixed chunk per thread that never
// happens, since the other thread's share is exactly half.
struct HeldFirstIndex {
  explicit HeldFirstIndex(size_t n) : record(n) {}
  Record record;
  std::atomic<int64_t> done{0};
};

void holdFirstIndex(void *ctx, int64_t i) {
  auto *h = static_cast<HeldFirstIndex *>(ctx);
  int64_t half = static_cast<int64_t>(h->record.hits.size()) / 2;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  if (i == 0)
    while (h->done.load() <= half &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  record(&h->record, i);
  h->done++;
}

TEST(ThreadPool, ASlowThreadLeavesTheRestOfTheJobToOthers) {
  Pool pool(2);
  constexpr int64_t n = 64;
  HeldFirstIndex h(n);
  afm_thread_pool_parallel_for(pool.pool, n, holdFirstIndex, &h);
  std::thread::id slow = h.record.threads[0];
  int64_t bySlow = 0;
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(h.record.hits[i], 1) << i;
    bySlow += h.record.threads[i] == slow;
  }
  EXPECT_LT(bySlow, n / 2) << "the held thread kept its whole share";
}

// Each thread owns half of a job on 2 threads and runs it from its front, a
// quarter of what is left at a time; a thread done with its own steals the
// back half of what is left of the other's. Index 0 (the caller's first)
// is held until index 31 has run: only the worker can run it then, by
// stealing the back of the caller's half after finishing its own.
void holdUntilIndex31(void *ctx, int64_t i) {
  auto *r = static_cast<Record *>(ctx);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  if (i == 0)
    while (r->hits[31].load() == 0 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  record(r, i);
}

TEST(ThreadPool, EachThreadRunsItsHalfFromTheFrontAndStealsFromTheBack) {
  Pool pool(2);
  constexpr int64_t n = 64;
  Record r(n);
  afm_thread_pool_parallel_for(pool.pool, n, holdUntilIndex31, &r);
  const auto &threads = r.threads;
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(r.hits[i], 1) << i;
  // The caller's first run: a quarter of its half, [0, 8).
  for (int i = 1; i < 8; ++i)
    EXPECT_EQ(threads[i], threads[0]) << i;
  // The worker's own half, all of it: the caller was held meanwhile.
  EXPECT_NE(threads[32], threads[0]);
  for (int i = 33; i < 64; ++i)
    EXPECT_EQ(threads[i], threads[32]) << i;
  // Then the back half of what was left of the caller's, [20, 32).
  for (int i = 20; i < 32; ++i)
    EXPECT_EQ(threads[i], threads[32]) << i;
}

TEST(ThreadPool, OneThreadRunsInline) {
  Pool pool(1);
  Record r(4);
  afm_thread_pool_parallel_for(pool.pool, 4, record, &r);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(r.threads[i], std::this_thread::get_id());
}

struct Nested {
  afm_thread_pool *pool;
  std::atomic<int> inner{0};
};

void inner(void *ctx, int64_t) { static_cast<Nested *>(ctx)->inner++; }
void outer(void *ctx, int64_t) {
  auto *n = static_cast<Nested *>(ctx);
  afm_thread_pool_parallel_for(n->pool, 3, inner, n);
}

TEST(ThreadPool, NestedCallsRunInline) {
  Pool pool(3);
  Nested n{pool.pool};
  afm_thread_pool_parallel_for(pool.pool, 6, outer, &n);
  EXPECT_EQ(n.inner, 18);
}

// Many short jobs in a row, some after a pause long enough for the workers
// to stop spinning and sleep on the condition variable: no hand-over
// between spinning and sleeping loses a job or a completion (a lost one
// hangs here).
TEST(ThreadPool, ShortJobsAcrossSpinAndSleep) {
  for (int32_t threads : {2, 3}) {
    Pool pool(threads);
    for (int job = 0; job < 5000; ++job) {
      if (job % 500 == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      int64_t n = 1 + job % (2 * threads);
      Record r(n);
      afm_thread_pool_parallel_for(pool.pool, n, record, &r);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(r.hits[i], 1) << threads << " threads, job " << job;
    }
  }
}

void slowLastIndex(void *ctx, int64_t i) {
  auto *r = static_cast<Record *>(ctx);
  if (i + 1 == static_cast<int64_t>(r->hits.size()))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  record(ctx, i);
}

// A worker's chunk that outlasts the caller's spin: the caller sleeps on
// the completion and returns only after the chunk is done.
TEST(ThreadPool, CallerWaitsForASlowChunk) {
  Pool pool(2);
  for (int job = 0; job < 100; ++job) {
    Record r(2);
    afm_thread_pool_parallel_for(pool.pool, 2, slowLastIndex, &r);
    ASSERT_EQ(r.hits[0], 1) << "job " << job;
    ASSERT_EQ(r.hits[1], 1) << "job " << job;
  }
}

TEST(ThreadPool, RejectsZeroThreads) {
  afm_thread_pool *pool = nullptr;
  EXPECT_EQ(afm_thread_pool_create(0, &pool), AFM_ERR_ARGUMENT);
  EXPECT_EQ(pool, nullptr);
}

} // namespace
