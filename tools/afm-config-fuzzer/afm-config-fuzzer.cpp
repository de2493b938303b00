//===- afm-config-fuzzer.cpp - libFuzzer target of config.json + weights --===//
//
// Each input is a model's config.json and its .safetensors file in one
// buffer: the bytes before the first NUL are the config (JSON text holds
// no NUL), the bytes after it the weights. The target parses and validates
// the config, prints it back with toJSON and parses that again (it must
// give the same text), opens the weights from memory, checks them against
// the config and widens every tensor to f32: what afm-compile does before
// any MLIR. Errors are fine; crashes, sanitizer reports, a failed round
// trip and an error without a message are bugs.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/ModelConfig.h"
#include "afm/Model/ModelWeights.h"
#include "afm/Model/SafeTensors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir::afm;

namespace {

/// Drops `error`; it must say something.
void consume(llvm::Error error, const char *what) {
  std::string message = llvm::toString(std::move(error));
  if (message.empty()) {
    llvm::errs() << "afm-config-fuzzer: " << what
                 << " failed without a message\n";
    std::abort();
  }
}

} // namespace

// Debian's LLVM and MLIR libraries are not instrumented, but the inline
// allocator code compiled here is: it poisons memory that the libraries'
// copies then touch without unpoisoning. Poisoning by hand is off.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  size_t split = input.find('\0');
  llvm::StringRef json = input.take_front(split);
  llvm::StringRef weights =
      split == llvm::StringRef::npos ? "" : input.drop_front(split + 1);

  llvm::Expected<ModelConfig> config = parseModelConfig(json, "config.json");
  if (!config) {
    consume(config.takeError(), "parseModelConfig");
  } else {
    // What toJSON prints, parseModelConfig reads back to the same config.
    std::string printed = toJSON(*config);
    llvm::Expected<ModelConfig> reread =
        parseModelConfig(printed, "printed.json");
    if (!reread || toJSON(*reread) != printed) {
      llvm::errs() << "afm-config-fuzzer: toJSON does not round-trip:\n"
                   << printed << "\n";
      if (!reread)
        llvm::errs() << llvm::toString(reread.takeError()) << "\n";
      std::abort();
    }
    (void)parameterCount(*config);
  }

  // A copy, so that reads past the end are the sanitizer's to see.
  llvm::Expected<SafeTensorsFile> file = SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(weights, "model.safetensors"));
  if (!file) {
    consume(file.takeError(), "SafeTensorsFile::fromBuffer");
    return 0;
  }
  for (const TensorInfo &tensor : file->tensors())
    (void)file->toF32(tensor);
  if (config)
    if (llvm::Error error = checkWeights(*config, *file))
      consume(std::move(error), "checkWeights");
  return 0;
}
