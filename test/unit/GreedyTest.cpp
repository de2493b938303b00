//===- GreedyTest.cpp - argmax, token lists and the greedy protocol -------===//

#include "ModelTestSupport.h"

#include "afm/Reference/Greedy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::afm;
using namespace mlir::afm::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {
TEST(Greedy, ArgmaxPicksTheLowestIndexOnTies) {
  EXPECT_EQ(argmax({1, 3, 3, 2}), 1);
  EXPECT_EQ(argmax({-5, -1, -7}), 1);
  EXPECT_EQ(argmax({2}), 0);
  EXPECT_EQ(argmax({}), -1);
  EXPECT_EQ(argmax({0, NAN, 1}), 2) << "a NaN never wins";
}

TEST(Greedy, ParsesCommaSeparatedTokenIds) {
  EXPECT_THAT(llvm::cantFail(parseTokenList("1,2,3")), ElementsAre(1, 2, 3));
  EXPECT_THAT(llvm::cantFail(parseTokenList(" 4 , 5")), ElementsAre(4, 5));
  EXPECT_THAT(llvm::cantFail(parseTokenList("-1")), ElementsAre(-1))
      << "range checks belong to the model, which knows V";
}

TEST(Greedy, RejectsMalformedTokenLists) {
  for (const char *text : {"", " ", "1,,2", "1,x", "1.5", "2147483648", "1,"}) {
    llvm::Expected<std::vector<int32_t>> tokens = parseTokenList(text);
    EXPECT_FALSE(errorText(tokens).empty()) << "'" << text << "'";
  }
  llvm::Expected<std::vector<int32_t>> tokens = parseTokenList("1,x");
  EXPECT_EQ(errorText(tokens),
            "'x' in the token list '1,x' is not an integer token id");
}

TEST(Greedy, FollowsThePrefillThenDecodeProtocol) {
  ModelConfig config = smallConfig();
  llvm::Expected<ReferenceModel> model = exampleModel(config);
  ASSERT_TRUE(bool(model)) << errorText(model);
  std::vector<int32_t> prompt = {3, 1, 4};
  llvm::Expected<GreedyResult> result = greedyDecode(*model, prompt, 5);
  ASSERT_TRUE(bool(result)) << errorText(result);
  ASSERT_EQ(result->tokens.size(), 6u);
  ASSERT_EQ(result->logits.size(), 6u * 32);
  EXPECT_EQ(model->position(), 3 + 5);
  // Step k's logits are those of the prompt followed by t_1..t_k, and
  // t_{k+1} is their argmax.
  std::vector<int32_t> context = prompt;
  for (size_t k = 0; k < 6; ++k) {
    llvm::ArrayRef<float> step =
        llvm::ArrayRef<float>(result->logits).slice(k * 32, 32);
    llvm::Expected<ReferenceModel> fresh = exampleModel(config);
    ASSERT_TRUE(bool(fresh)) << errorText(fresh);
    EXPECT_EQ(llvm::cantFail(fresh->forward(context)), step.vec()) << k;
    EXPECT_EQ(result->tokens[k], argmax(step)) << k;
    context.push_back(result->tokens[k]);
  }
}

TEST(Greedy, ZeroDecodeStepsGiveOneToken) {
  llvm::Expected<ReferenceModel> model = exampleModel(smallConfig());
  ASSERT_TRUE(bool(model)) << errorText(model);
  llvm::Expected<GreedyResult> result = greedyDecode(*model, {7}, 0);
  ASSERT_TRUE(bool(result)) << errorText(result);
  EXPECT_EQ(result->tokens.size(), 1u);
  EXPECT_EQ(result->logits.size(), 32u);
}

TEST(Greedy, RunsPastTheContextLengthFailBeforeAnyWork) {
  ModelConfig config = smallConfig();
  config.maxPositionEmbeddings = 8;
  llvm::Expected<ReferenceModel> model = exampleModel(config);
  ASSERT_TRUE(bool(model)) << errorText(model);
  llvm::Expected<GreedyResult> result = greedyDecode(*model, {1, 2, 3}, 6);
  EXPECT_EQ(errorText(result), "a prompt of 3 tokens plus 6 decode steps "
                               "exceeds max_position_embeddings (8)");
  EXPECT_EQ(model->position(), 0);
  llvm::Expected<GreedyResult> fits = greedyDecode(*model, {1, 2, 3}, 5);
  EXPECT_TRUE(bool(fits)) << errorText(fits);
  llvm::Expected<GreedyResult> afterFullContext = greedyDecode(*model, {99}, 0);
  EXPECT_THAT(errorText(afterFullContext), HasSubstr("exceeds"));
}

TEST(Greedy, BadPromptTokenIsAnError) {
  llvm::Expected<ReferenceModel> model = exampleModel(smallConfig());
  ASSERT_TRUE(bool(model)) << errorText(model);
  llvm::Expected<GreedyResult> result = greedyDecode(*model, {1, 40}, 2);
  EXPECT_THAT(errorText(result),
              HasSubstr("token 40 (at index 1) is outside the vocabulary"));
}
} // namespace
