//===- Bands.cpp - a matrix's block rows on several threads ---------------===//

#include "afm/Compress/Bands.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

using namespace mlir::afm;

unsigned mlir::afm::bandWorkers(size_t count, size_t bandSize,
                                unsigned threads) {
  size_t size = std::max<size_t>(1, bandSize);
  size_t bands = (count + size - 1) / size;
  size_t workers =
      threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(
      std::max<size_t>(1, std::min(workers, bands)));
}

llvm::Error mlir::afm::forEachBand(
    size_t count, size_t bandSize, unsigned threads,
    llvm::function_ref<llvm::Error(size_t, size_t, unsigned)> work) {
  size_t size = std::max<size_t>(1, bandSize);
  size_t bands = (count + size - 1) / size;
  unsigned workers = bandWorkers(count, size, threads);
  std::atomic<size_t> nextBand{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  llvm::Error firstError = llvm::Error::success();
  auto run = [&](unsigned worker) {
    for (size_t band; !failed && (band = nextBand++) < bands;) {
      size_t begin = band * size;
      if (llvm::Error error = work(begin, std::min(count, begin + size),
                                   worker)) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!failed.exchange(true)) {
          // The success it replaces, checked as llvm::Error requires.
          llvm::consumeError(std::move(firstError));
          firstError = std::move(error);
        } else
          llvm::consumeError(std::move(error));
        return;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned worker = 1; worker < workers; ++worker)
    helpers.emplace_back(run, worker);
  run(0);
  for (std::thread &helper : helpers)
    helper.join();
  return firstError;
}
