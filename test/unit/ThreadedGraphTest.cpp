//===- ThreadedGraphTest.cpp - graphs compiled for the host's threads -----===//
//
// A graph compiled with GraphThreads::Host runs the tile loops of its big
// ops through the afm_host_api it is given. Each kernel runs on a
// two-thread runtime pool and is compared with a plain C++ loop (not with
// its own single-thread output); the host also records which threads ran
// the tasks, so a silently sequential kernel fails.
//
//===----------------------------------------------------------------------===//

extern "C" {
#include "runtime/thread_pool.h"
}

#include "HostGraphTestSupport.h"

#include "afm/Layout/PackedWeights.h"
#include "afm/kernel_abi.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <set>
#include <thread>

using namespace mlir;

namespace {

/// A zeroed argument buffer; these tests' buffers are a few MiB.
afm::HostBuffer zeroed(size_t bytes) {
  return llvm::cantFail(afm::HostBuffer::allocate(bytes));
}

/// An afm_host_api over a runtime pool that counts parallel_for calls and
/// records the threads their iterations ran on.
class RecordingHost {
public:
  explicit RecordingHost(int32_t threads) {
    EXPECT_EQ(afm_thread_pool_create(threads, &pool), AFM_OK);
    api = {parallelFor, this, afm_thread_pool_size(pool),
           /*track_begin=*/0, /*track_end=*/INT64_MAX,
           afm_track_allreduce_local, /*track_ctx=*/nullptr};
  }
  ~RecordingHost() { afm_thread_pool_free(pool); }

  afm_host_api api;
  std::atomic<int> calls{0};
  std::set<std::thread::id> threads;

  int64_t joined() {
    std::lock_guard<std::mutex> lock(mutex);
    return static_cast<int64_t>(threads.size());
  }

private:
  struct Task {
    RecordingHost *host;
    int64_t n;
    void (*fn)(void *, int64_t);
    void *ctx;
    std::atomic<bool> started{false};
  };
  static void parallelFor(void *self, int64_t n, void (*fn)(void *, int64_t),
                          void *ctx) {
    auto *host = static_cast<RecordingHost *>(self);
    ++host->calls;
    Task task{host, n, fn, ctx};
    afm_thread_pool_parallel_for(
        host->pool, n,
        [](void *opaque, int64_t i) {
          auto *task = static_cast<Task *>(opaque);
          RecordingHost *host = task->host;
          {
            std::lock_guard<std::mutex> lock(host->mutex);
            host->threads.insert(std::this_thread::get_id());
          }
          // The pool hands indices to whichever thread claims them first,
          // so a thread that wakes late may get none. The first index run
          // in a job with an index for every thread therefore waits (up to
          // 10 s) until every thread has joined, which shows that the
          // compiled tasks can run on all of them. It must be the first
          // index run, not index 0: a dispatcher preempted right after it
          // publishes the job lets the worker run its share and steal the
          // dispatcher's down to index 0, and then no index is left for
          // the dispatcher to join with (a CI run under load saw it).
          // Blocking the first index run leaves the other thread its own
          // share, which no one else can have claimed.
          bool first = !task->started.exchange(true);
          auto deadline =
              std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (first && task->n >= host->api.num_threads &&
                 host->joined() < host->api.num_threads &&
                 std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
          task->fn(task->ctx, i);
        },
        &task);
  }

  afm_thread_pool *pool = nullptr;
  std::mutex mutex;
};

class ThreadedGraphTest : public afm::test::HostGraphTest {
protected:
  /// Compiles `source` for the host's threads; returns its main.
  void *compile(const char *source) {
    return HostGraphTest::compile(source, afm::getHostTarget(),
                                  afm::GraphThreads::Host);
  }

  std::mt19937 random{11};
};

// y[n] = sum_k x[k] w[n, k], 512 x 1024: 512K multiply-adds, above the
// default minParallelWork (256K), so the row tiles become tasks.
TEST_F(ThreadedGraphTest, GEMVMatchesAPlainLoopOnTwoThreads) {
  constexpr int64_t n = 512, k = 1024;
  void *main = compile(R"mlir(
    func.func @main(%x: tensor<1x1024xf32>, %w: tensor<512x1024xf32>)
        -> tensor<1x512xf32> {
      %y = afm.linear %x, %w : tensor<1x1024xf32>, tensor<512x1024xf32>
          -> tensor<1x512xf32>
      return %y : tensor<1x512xf32>
    })mlir");
  ASSERT_NE(main, nullptr);
  afm::HostBuffer x = zeroed(k * 4), w = zeroed(n * k * 4), y = zeroed(n * 4);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t i = 0; i < k; ++i)
    x.data<float>()[i] = uniform(random);
  for (int64_t i = 0; i < n * k; ++i)
    w.data<float>()[i] = uniform(random);

  RecordingHost host(2);
  ASSERT_FALSE(afm::callGraph(main, {&host.api, x.data(), w.data(), y.data()}));
  EXPECT_GE(host.calls.load(), 1);
  EXPECT_EQ(host.threads.size(), 2u);

  // f32 sums of 1024 products in any order: within 1e-5 of the sum of
  // magnitudes (the bound is about k * 2^-24 = 6e-5, the typical error far
  // smaller).
  for (int64_t row = 0; row < n; ++row) {
    double expected = 0, magnitude = 0;
    for (int64_t col = 0; col < k; ++col) {
      double product = double(x.data<float>()[col]) * w.data<float>()[row * k + col];
      expected += product;
      magnitude += std::fabs(product);
    }
    EXPECT_NEAR(y.data<float>()[row], expected, 1e-5 * magnitude) << "row " << row;
  }
}

// 4-bit embedding rows: table[t, j] = scale[t, j / 32] * q, q the signed
// nibble j of row t (low nibble first). 256 tokens x 2048 = 512K elements.
TEST_F(ThreadedGraphTest, Q4EmbeddingMatchesAPlainLoopOnTwoThreads) {
  constexpr int64_t vocab = 1024, dim = 2048, tokens = 256, group = 32;
  void *main = compile(R"mlir(
    func.func @main(%tokens: tensor<256xi32>, %codes: tensor<1024x1024xi8>,
                    %scales: tensor<1024x64xf32>) -> tensor<256x2048xf32> {
      %w = afm.bound_weight %codes, %scales
          : tensor<1024x1024xi8>, tensor<1024x64xf32>
          -> !afm.q4<1024x2048, group = 32>
      %y = afm.embedding %w[%tokens]
          : !afm.q4<1024x2048, group = 32>, tensor<256xi32>
          -> tensor<256x2048xf32>
      return %y : tensor<256x2048xf32>
    })mlir");
  ASSERT_NE(main, nullptr);
  afm::HostBuffer ids = zeroed(tokens * 4), codes = zeroed(vocab * dim / 2),
                  scales = zeroed(vocab * dim / group * 4),
                  y = zeroed(tokens * dim * 4);
  for (int64_t t = 0; t < tokens; ++t)
    ids.data<int32_t>()[t] = random() % vocab;
  for (int64_t i = 0; i < vocab * dim / 2; ++i)
    codes.data<uint8_t>()[i] = random();
  for (int64_t i = 0; i < vocab * dim / group; ++i)
    scales.data<float>()[i] = 0.01f * (1 + i % 7);

  RecordingHost host(2);
  ASSERT_FALSE(afm::callGraph(
      main, {&host.api, ids.data(), codes.data(), scales.data(), y.data()}));
  EXPECT_GE(host.calls.load(), 1);
  EXPECT_EQ(host.threads.size(), 2u);

  // One product of exact values: exact.
  for (int64_t t = 0; t < tokens; ++t) {
    int64_t row = ids.data<int32_t>()[t];
    for (int64_t j = 0; j < dim; ++j) {
      // Bound codes are in the kernels' order (afm/Layout/PackedWeights.h).
      uint8_t byte = codes.data<uint8_t>()[row * dim / 2 +
                                           afm::q4CodeByteInRow(j, dim, group)];
      int nibble = j % 2 ? byte >> 4 : byte & 15;
      int q = nibble >= 8 ? nibble - 16 : nibble;
      float expected = scales.data<float>()[row * dim / group + j / group] * q;
      ASSERT_EQ(y.data<float>()[t * dim + j], expected)
          << "token " << t << ", column " << j;
    }
  }
}

} // namespace
