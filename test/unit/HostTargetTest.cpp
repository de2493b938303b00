//===- HostTargetTest.cpp - which known target a machine gets -------------===//
//
// getHostTarget's choice from the CPU name and features LLVM reads off the
// machine, including what virtual machines report.
//
//===----------------------------------------------------------------------===//

#include "afm/Target/TargetDescription.h"

#include <gtest/gtest.h>

#include <initializer_list>

using namespace mlir::afm;

namespace {
llvm::StringMap<bool> featureSet(std::initializer_list<const char *> names) {
  llvm::StringMap<bool> features;
  for (const char *name : names)
    features[name] = true;
  return features;
}

// AVX-512 with VNNI, as every target from x86-64-v4-vnni up needs.
llvm::StringMap<bool> vnniFeatures() {
  return featureSet({"avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                     "avx512dq", "avx512vnni"});
}

TEST(HostTarget, NamedSapphireRapidsFamilyCoresGetTheirTarget) {
  for (const char *cpu : {"sapphirerapids", "emeraldrapids", "graniterapids"})
    EXPECT_EQ(chooseHostTargetName(false, cpu, vnniFeatures()),
              "intel-sapphire-rapids")
        << cpu;
}

// A Granite Rapids VM reported model 167, which LLVM names "rocketlake":
// its AMX tiles still tell the server cores apart from the desktop ones.
TEST(HostTarget, AMXIdentifiesSapphireRapidsCoresUnderAnotherName) {
  llvm::StringMap<bool> features = vnniFeatures();
  features["amx-tile"] = true;
  features["amx-int8"] = true;
  EXPECT_EQ(chooseHostTargetName(false, "rocketlake", features),
            "intel-sapphire-rapids");
  EXPECT_EQ(chooseHostTargetName(false, "rocketlake", vnniFeatures()),
            "x86-64-v4-vnni");
}

TEST(HostTarget, ZenFourByNameAndOtherCoresByFeatures) {
  EXPECT_EQ(chooseHostTargetName(false, "znver4", vnniFeatures()), "amd-zen4");
  EXPECT_EQ(chooseHostTargetName(false, "znver5", vnniFeatures()),
            "x86-64-v4-vnni");
  llvm::StringMap<bool> noVNNI = vnniFeatures();
  noVNNI["avx512vnni"] = false;
  EXPECT_EQ(chooseHostTargetName(false, "skylake-avx512", noVNNI), "x86-64-v4");
  EXPECT_EQ(chooseHostTargetName(false, "znver3", featureSet({"avx2", "fma"})),
            "x86-64-v3");
}

// AMX without AVX-512 VNNI is not a machine the Sapphire Rapids target's
// code runs on: the features it compiles for decide first.
TEST(HostTarget, AMXAloneDoesNotPickATargetTheMachineCannotRun) {
  llvm::StringMap<bool> features = featureSet({"avx2", "fma"});
  features["amx-tile"] = true;
  features["amx-int8"] = true;
  EXPECT_EQ(chooseHostTargetName(false, "rocketlake", features), "x86-64-v3");
}

TEST(HostTarget, AArch64HostsGetTheGenericTarget) {
  EXPECT_EQ(chooseHostTargetName(true, "neoverse-v2", {}), "aarch64-generic");
}
} // namespace
