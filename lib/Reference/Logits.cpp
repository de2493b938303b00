//===- Logits.cpp - logits files and their comparison ---------------------===//

#include "afm/Reference/Logits.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir::afm;
namespace endian = llvm::support::endian;

llvm::Error mlir::afm::writeLogitsFile(llvm::StringRef path,
                                       llvm::ArrayRef<float> logits) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec)
    return llvm::createStringError(path + ": cannot write: " + ec.message());
  for (float value : logits) {
    char bytes[4];
    endian::write32le(bytes, llvm::bit_cast<uint32_t>(value));
    out.write(bytes, sizeof(bytes));
  }
  out.close();
  if (out.has_error())
    return llvm::createStringError(path + ": cannot write: " +
                                   out.error().message());
  return llvm::Error::success();
}

llvm::Expected<std::vector<float>>
mlir::afm::readLogitsFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(path + ": cannot read: " +
                                   buffer.getError().message());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() % 4 != 0)
    return llvm::createStringError(llvm::formatv(
        "{0}: {1} bytes is not a whole number of f32 values", path,
        bytes.size()));
  std::vector<float> values(bytes.size() / 4);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = llvm::bit_cast<float>(endian::read32le(bytes.data() + 4 * i));
  return values;
}

/// The larger of `current` and `value`, where a NaN wins and stays.
static double maxKeepingNaN(double current, double value) {
  return std::isnan(current) || std::isnan(value) ? NAN
                                                  : std::max(current, value);
}

static StepComparison compareStep(llvm::ArrayRef<float> reference,
                                  llvm::ArrayRef<float> actual) {
  StepComparison result{0.0, 0.0, 0.0};
  for (size_t i = 0; i < reference.size(); ++i) {
    double ref = reference[i];
    result.maxAbsDiff =
        maxKeepingNaN(result.maxAbsDiff, std::abs(actual[i] - ref));
    result.maxAbsReference =
        maxKeepingNaN(result.maxAbsReference, std::abs(ref));
  }
  if (std::isnan(result.maxAbsDiff) || std::isnan(result.maxAbsReference))
    result.relativeError = NAN;
  else if (result.maxAbsReference == 0.0)
    result.relativeError = result.maxAbsDiff == 0.0
                               ? 0.0
                               : std::numeric_limits<double>::infinity();
  else
    result.relativeError = result.maxAbsDiff / result.maxAbsReference;
  return result;
}

llvm::Expected<std::vector<StepComparison>>
mlir::afm::compareLogitSteps(llvm::ArrayRef<float> reference,
                             llvm::ArrayRef<float> actual, int64_t vocabSize) {
  if (vocabSize <= 0)
    return llvm::createStringError(
        llvm::formatv("the vocabulary size must be positive, got {0}",
                      vocabSize));
  if (reference.size() != actual.size())
    return llvm::createStringError(llvm::formatv(
        "the reference has {0} logits but the actual file has {1}",
        reference.size(), actual.size()));
  if (reference.empty())
    return llvm::createStringError("there are no logits to compare");
  if (reference.size() % vocabSize != 0)
    return llvm::createStringError(llvm::formatv(
        "{0} logits are not a whole number of steps of vocab size {1}",
        reference.size(), vocabSize));
  std::vector<StepComparison> steps;
  for (size_t begin = 0; begin < reference.size(); begin += vocabSize)
    steps.push_back(compareStep(reference.slice(begin, vocabSize),
                                actual.slice(begin, vocabSize)));
  return steps;
}
