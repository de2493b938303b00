//===- WeightTableTest.cpp - the weight inventory export ------------------===//

#include "afm/Translate/Translations.h"
#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {
TEST(WeightTable, CountsBytesOfEachFormatAndListsTiedWeightsOnce) {
  MLIRContext context;
  context.loadDialect<afm::AFMDialect, func::FuncDialect>();
  const char *source = R"mlir(
    func.func @f() {
      %a = afm.weight "emb" : !afm.q4<16x8, group = 4>
      %b = afm.weight "emb" : !afm.q4<16x8, group = 4>
      %c = afm.weight "w2" : !afm.q2<6x6, per_channel>
      %d = afm.weight "wa" : !afm.astc<6x12, block = 6x6, offset = min>
      %e = afm.weight "g" : tensor<8xf16> = dense<1.0>
      return
    }
  )mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  std::string text;
  llvm::raw_string_ostream os(text);
  ASSERT_TRUE(succeeded(afm::writeWeightTable(*module, os)));
  // q4: 16*4 code bytes + 16*2 scales * 4; q2: 6*2 + 6*4; astc: 2 * 18;
  // f16: 8 * 2.
  int64_t expected = (64 + 128) + (12 + 24) + 36 + 16;
  EXPECT_NE(text.find("total: 4 weights, 244 parameters, " +
                      std::to_string(expected) + " bytes"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("inline"), std::string::npos) << text;
}
} // namespace
