//===- HostBufferTest.cpp - the argument buffers of compiled graphs -------===//
//
// HostBuffer::allocate gives zeroed memory aligned as the compiler's own
// allocations are, and refuses a size it cannot give with an error rather
// than a null pointer or an out-of-memory kill: afm-bench's buffer sizes
// come from the command line, afm-onnx-greedy's and afm-onnx-conformance's
// from a model's shapes.
//
//===----------------------------------------------------------------------===//

#include "afm/Compiler/HostLibrary.h"
#include "afm/available_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

using mlir::afm::HostBuffer;

namespace {

/// The buffer `allocate` gave, failing the test on an error.
HostBuffer allocated(size_t bytes) {
  auto buffer = HostBuffer::allocate(bytes);
  if (!buffer) {
    ADD_FAILURE() << llvm::toString(buffer.takeError());
    return llvm::cantFail(HostBuffer::allocate(0));
  }
  return std::move(*buffer);
}

/// The message of `allocate`'s error, "" when it gave a buffer.
std::string refusal(size_t bytes) {
  auto buffer = HostBuffer::allocate(bytes);
  return buffer ? "" : llvm::toString(buffer.takeError());
}

bool allZero(const HostBuffer &buffer) {
  const auto *bytes = buffer.data<uint8_t>();
  for (size_t i = 0; i < buffer.size(); ++i)
    if (bytes[i] != 0)
      return false;
  return true;
}

TEST(HostBufferTest, SmallBuffersAreZeroedAndCacheLineAligned) {
  HostBuffer buffer = allocated(1000);
  EXPECT_EQ(buffer.size(), 1000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % 64, 0u);
  EXPECT_TRUE(allZero(buffer));
}

// At least a huge page: aligned to one, so Linux can back it with them.
TEST(HostBufferTest, BuffersOfAHugePageAreAlignedToOne) {
  HostBuffer buffer = allocated((size_t(2) << 20) + 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % (size_t(2) << 20),
            0u);
  EXPECT_TRUE(allZero(buffer));
}

TEST(HostBufferTest, AnEmptyBufferIsValid) {
  EXPECT_EQ(allocated(0).size(), 0u);
}

TEST(HostBufferTest, MovingTransfersTheMemory) {
  HostBuffer buffer = allocated(64);
  void *data = buffer.data();
  HostBuffer moved = std::move(buffer);
  EXPECT_EQ(moved.data(), data);
  EXPECT_EQ(buffer.data(), nullptr);
}

// More than this process may still use: an error naming the size, before
// any page is touched (zeroing it would end in the OOM killer).
TEST(HostBufferTest, MoreThanAvailableMemoryIsAnError) {
  uint64_t available = afm_available_memory();
  ASSERT_NE(available, UINT64_MAX);
  size_t bytes = available + (size_t(1) << 30);
  EXPECT_THAT(refusal(bytes),
              testing::AllOf(
                  testing::HasSubstr("cannot allocate a buffer of " +
                                     std::to_string(bytes) + " bytes"),
                  testing::HasSubstr("more than this process may still use")));
}

// A size near SIZE_MAX (a shape's bytes saturated on overflow) is refused,
// not rounded up past zero.
TEST(HostBufferTest, ASizeThatOverflowsIsAnError) {
  EXPECT_THAT(refusal(SIZE_MAX),
              testing::HasSubstr("cannot allocate a buffer of"));
}

} // namespace
