//===- BandsTest.cpp - a matrix's block rows on several threads -----------===//

#include "afm/Compress/Bands.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace mlir::afm;

TEST(Bands, NoMoreWorkersThanBandsAndAtLeastOne) {
  EXPECT_EQ(bandWorkers(100, 32, 8), 4u); // bands of 32, 32, 32 and 4
  EXPECT_EQ(bandWorkers(100, 32, 2), 2u);
  EXPECT_EQ(bandWorkers(0, 32, 4), 1u);
  EXPECT_EQ(bandWorkers(5, 0, 3), 3u); // a band size of 0 counts as 1
}

TEST(Bands, EveryItemOnceInBandsOfTheSizeAcrossTheWorkers) {
  // 103 items in bands of 10 on 3 workers: each item's count goes to 1,
  // every band but the last holds 10, and worker ids stay below 3.
  std::vector<std::atomic<int>> seen(103);
  std::mutex mutex;
  std::multiset<size_t> sizes;
  std::set<std::thread::id> threads;
  llvm::Error error = forEachBand(
      seen.size(), 10, 3, [&](size_t begin, size_t end, unsigned worker) {
        EXPECT_LT(worker, 3u);
        for (size_t i = begin; i < end; ++i)
          ++seen[i];
        std::lock_guard<std::mutex> lock(mutex);
        sizes.insert(end - begin);
        threads.insert(std::this_thread::get_id());
        return llvm::Error::success();
      });
  ASSERT_FALSE(error) << llvm::toString(std::move(error));
  for (size_t i = 0; i < seen.size(); ++i)
    EXPECT_EQ(seen[i].load(), 1) << "item " << i;
  EXPECT_EQ(sizes.count(10), 10u);
  EXPECT_EQ(sizes.count(3), 1u);
  EXPECT_LE(threads.size(), 3u);
}

TEST(Bands, TheFirstErrorIsReturnedAndTheRestStops) {
  // One worker, so the order is the bands' order: band 2 fails, and bands
  // 3 and later never run.
  std::vector<size_t> ran;
  llvm::Error error = forEachBand(
      50, 5, 1, [&](size_t begin, size_t, unsigned) -> llvm::Error {
        ran.push_back(begin);
        if (begin == 10)
          return llvm::createStringError("band at 10 failed");
        return llvm::Error::success();
      });
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_EQ(llvm::toString(std::move(error)), "band at 10 failed");
  EXPECT_EQ(ran, (std::vector<size_t>{0, 5, 10}));
}

TEST(Bands, AnErrorOnSeveralWorkersIsReturnedOnce) {
  // Every band fails: whichever comes first is returned, the others are
  // consumed (an unchecked llvm::Error would abort in a checked build).
  llvm::Error error = forEachBand(
      40, 4, 2, [&](size_t begin, size_t, unsigned) -> llvm::Error {
        return llvm::createStringError("band at %zu failed", begin);
      });
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_NE(llvm::toString(std::move(error)).find("failed"),
            std::string::npos);
}
