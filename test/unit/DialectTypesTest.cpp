//===- DialectTypesTest.cpp - storage arithmetic of afm types -------------===//
//
// The byte counts these helpers return decide weight-file layouts and KV
// memory, so they are pinned down against hand-computed values.
//
//===----------------------------------------------------------------------===//

#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::afm;

namespace {
class AFMTypesTest : public ::testing::Test {
protected:
  AFMTypesTest() { context.loadDialect<AFMDialect>(); }

  template <typename T> T parse(StringRef text) {
    return dyn_cast_or_null<T>(parseType(text, &context));
  }

  MLIRContext context;
};

TEST_F(AFMTypesTest, Q2PacksFourCodesPerBytePaddingEachRow) {
  auto perTensor = parse<Q2WeightType>("!afm.q2<3x10, per_tensor>");
  ASSERT_TRUE(perTensor);
  EXPECT_EQ(perTensor.getCodeBytes(), 3 * 3); // ceil(10 / 4) bytes per row
  EXPECT_EQ(perTensor.getNumScales(), 1);
  auto perChannel = parse<Q2WeightType>("!afm.q2<3x10, per_channel>");
  ASSERT_TRUE(perChannel);
  EXPECT_EQ(perChannel.getNumScales(), 3);
}

TEST_F(AFMTypesTest, Q4HasOneScalePerGroup) {
  auto q4 = parse<Q4WeightType>("!afm.q4<5x64, group = 16>");
  ASSERT_TRUE(q4);
  EXPECT_EQ(q4.getCodeBytes(), 5 * 32);
  EXPECT_EQ(q4.getNumScales(), 5 * 4);
}

TEST_F(AFMTypesTest, ASTCCountsPaddedEdgeBlocks) {
  auto astc =
      parse<ASTCWeightType>("!afm.astc<13x7, block = 6x6, offset = min>");
  ASSERT_TRUE(astc);
  EXPECT_EQ(astc.getNumBlocks(), 3 * 2);
  EXPECT_EQ(astc.getOffset(), ASTCOffset::Min);
}

TEST_F(AFMTypesTest, WeightMatrixShapeCoversEveryWeightKind) {
  Builder b(&context);
  auto shape = getWeightMatrixShape(
      RankedTensorType::get({4, 8}, b.getF32Type()));
  ASSERT_TRUE(shape);
  EXPECT_EQ((*shape)[0], 4);
  EXPECT_EQ((*shape)[1], 8);
  shape = getWeightMatrixShape(parse<Type>("!afm.q4<32x16, group = 8>"));
  ASSERT_TRUE(shape);
  EXPECT_EQ((*shape)[0], 32);
  EXPECT_FALSE(getWeightMatrixShape(
      RankedTensorType::get({4, 8, 2}, b.getF32Type())));
  EXPECT_FALSE(getWeightMatrixShape(b.getF32Type()));
}

TEST_F(AFMTypesTest, InvalidTypesAreRejectedWithADiagnostic) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_FALSE(parse<Type>("!afm.kv_cache<2x0x16, f32>"));
  EXPECT_NE(message.find("KV cache shape must be positive"), std::string::npos)
      << message;
  EXPECT_FALSE(parse<Type>("!afm.astc<12x12, block = 7x7, offset = min>"));
  EXPECT_NE(message.find("not an ASTC 2D footprint"), std::string::npos)
      << message;
}
} // namespace
