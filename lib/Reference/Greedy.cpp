//===- Greedy.cpp - greedy decoding protocol ------------------------------===//

#include "afm/Reference/Greedy.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir::afm;

int32_t mlir::afm::argmax(llvm::ArrayRef<float> values) {
  if (values.empty())
    return -1;
  int32_t best = 0;
  for (size_t i = 1; i < values.size(); ++i)
    if (values[i] > values[best])
      best = static_cast<int32_t>(i);
  return best;
}

llvm::Expected<GreedyResult>
mlir::afm::greedyDecode(ReferenceModel &model, llvm::ArrayRef<int32_t> prompt,
                        int64_t decodeSteps) {
  const ModelConfig &config = model.config();
  if (decodeSteps < 0)
    return llvm::createStringError("the number of decode steps is negative");
  // Every decode step feeds one more token; check the whole run up front.
  if (model.position() + static_cast<int64_t>(prompt.size()) + decodeSteps >
      config.maxPositionEmbeddings)
    return llvm::createStringError(llvm::formatv(
        "a prompt of {0} tokens plus {1} decode steps exceeds "
        "max_position_embeddings ({2})",
        prompt.size(), decodeSteps, config.maxPositionEmbeddings));
  GreedyResult result;
  llvm::Expected<std::vector<float>> logits = model.forward(prompt);
  for (int64_t step = 0;; ++step) {
    if (!logits)
      return logits.takeError();
    result.logits.insert(result.logits.end(), logits->begin(), logits->end());
    result.tokens.push_back(argmax(*logits));
    if (step == decodeSteps)
      return std::move(result);
    logits = model.forward(result.tokens.back());
  }
}

llvm::Expected<std::vector<int32_t>>
mlir::afm::parseTokenList(llvm::StringRef text) {
  if (text.trim().empty())
    return llvm::createStringError("the token list is empty");
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  std::vector<int32_t> tokens;
  for (llvm::StringRef item : items) {
    int32_t token;
    if (item.trim().getAsInteger(10, token))
      return llvm::createStringError(llvm::formatv(
          "'{0}' in the token list '{1}' is not an integer token id",
          item.trim(), text));
    tokens.push_back(token);
  }
  return tokens;
}
