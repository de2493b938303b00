//===- BackgroundLibraryBuildTest.cpp - LLVM on a thread of its own --------===//
//
// afm-compile builds the model's shared library on a thread of its own
// while it encodes the weights (BackgroundLibraryBuild, Compile.h). The
// contract: the module is read before start() returns, so the caller may
// change or drop it; take() gives the library toSharedLibrary would have
// given, or the error that stopped the build; a build nobody takes is
// waited for and dropped, never left running past its owner.
//
//===----------------------------------------------------------------------===//

#include "HostGraphTestSupport.h"

#include "afm/Compiler/Compile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::afm;

namespace {

constexpr llvm::StringLiteral kAnswer = R"mlir(
module {
  llvm.func @afm_test_answer() -> i32 {
    %c = llvm.mlir.constant(42 : i32) : i32
    llvm.return %c : i32
  }
}
)mlir";

// The fixture's context knows the afm dialects and LLVM IR translations.
class BackgroundLibraryBuildTest : public test::HostGraphTest {
protected:
  OwningOpRef<ModuleOp> parse() {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(kAnswer, &context);
    EXPECT_TRUE(module);
    return module;
  }

  /// What the library's afm_test_answer returns once loaded (-1 when it
  /// cannot be loaded or has no such function, with the test failed).
  static int answerOf(llvm::StringRef library) {
    HostLibrary loaded;
    if (llvm::Error error = loaded.load(library)) {
      ADD_FAILURE() << llvm::toString(std::move(error));
      return -1;
    }
    auto *answer =
        reinterpret_cast<int (*)()>(loaded.lookup("afm_test_answer"));
    EXPECT_NE(answer, nullptr);
    return answer ? answer() : -1;
  }
};

TEST_F(BackgroundLibraryBuildTest, TakesTheLibraryTheSerialBuildGives) {
  OwningOpRef<ModuleOp> module = parse();
  ASSERT_TRUE(module);
  TargetDescription host = getHostTarget();
  auto serial = toSharedLibrary(*module, host);
  ASSERT_TRUE(bool(serial)) << llvm::toString(serial.takeError());

  auto build = BackgroundLibraryBuild::start(*module, host);
  auto library = build.take();
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());
  EXPECT_EQ(*library, *serial);
  EXPECT_EQ(answerOf(*library), 42);
}

// The caller encodes the weights meanwhile and may drop the MLIR module
// (afm-compile frees it before the weights): the build owns its copy.
TEST_F(BackgroundLibraryBuildTest, TheModuleMayGoOnceStarted) {
  OwningOpRef<ModuleOp> module = parse();
  ASSERT_TRUE(module);
  auto build = BackgroundLibraryBuild::start(*module, getHostTarget());
  module->getBody()->clear();
  module = nullptr;
  auto library = build.take();
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());
  EXPECT_EQ(answerOf(*library), 42);
}

// An error found before the thread starts (here: no back end for the
// triple) comes out of take() like one found on the thread.
TEST_F(BackgroundLibraryBuildTest, ATargetWithoutBackEndIsAnErrorOnTake) {
  OwningOpRef<ModuleOp> module = parse();
  ASSERT_TRUE(module);
  TargetDescription nowhere = getHostTarget();
  nowhere.triple = "nowhere-unknown-none";
  auto build = BackgroundLibraryBuild::start(*module, nowhere);
  auto library = build.take();
  ASSERT_FALSE(bool(library));
  EXPECT_THAT(llvm::toString(library.takeError()),
              ::testing::HasSubstr("no LLVM back end for triple "
                                   "'nowhere-unknown-none'"));
}

// afm-compile drops the build when encoding the weights fails: the
// destructor waits for the thread and drops its result (a library or an
// error); under ASan and LSan (make sanitize) nothing leaks.
TEST_F(BackgroundLibraryBuildTest, ABuildNeverTakenIsWaitedForAndDropped) {
  OwningOpRef<ModuleOp> module = parse();
  ASSERT_TRUE(module);
  { auto built = BackgroundLibraryBuild::start(*module, getHostTarget()); }
  TargetDescription nowhere = getHostTarget();
  nowhere.triple = "nowhere-unknown-none";
  { auto failed = BackgroundLibraryBuild::start(*module, nowhere); }
  // Moved from: only the new owner waits.
  auto first = BackgroundLibraryBuild::start(*module, getHostTarget());
  BackgroundLibraryBuild second = std::move(first);
  auto library = second.take();
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());
  EXPECT_EQ(answerOf(*library), 42);
}

} // namespace
