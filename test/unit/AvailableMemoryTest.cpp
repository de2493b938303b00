//===- AvailableMemoryTest.cpp - cgroup limits read from files ------------===//
//
// afm_cgroup_room reads the limits a container or a systemd slice puts on
// this process from /proc/self/cgroup and the hierarchies under
// /sys/fs/cgroup. Each test describes a machine with files in a temporary
// directory: cgroup v2 (alone and beside v1, as a hybrid system mounts it
// under unified/), v1's memory controller, a container whose group path is
// not under its mount, and files that say nothing usable.
//
//===----------------------------------------------------------------------===//

#include "afm/available_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

class CgroupRoomTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("afm-cgroup-" + std::to_string(::testing::UnitTest::GetInstance()
                                              ->random_seed()) +
           "-" + ::testing::UnitTest::GetInstance()
                     ->current_test_info()
                     ->name());
    fs::remove_all(dir);
    fs::create_directories(dir / "sys");
  }
  void TearDown() override { fs::remove_all(dir); }

  /// Writes `text` to `relative` under the fake /sys/fs/cgroup.
  void write(const std::string &relative, const std::string &text) {
    fs::path path = dir / "sys" / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  /// The room for a process whose /proc/self/cgroup says `procCgroup`.
  uint64_t room(const std::string &procCgroup, bool lessUsage) {
    std::ofstream(dir / "cgroup") << procCgroup;
    return afm_cgroup_room((dir / "cgroup").c_str(), (dir / "sys").c_str(),
                           lessUsage);
  }

  fs::path dir;
};

TEST_F(CgroupRoomTest, V2TheTightestLevelUpToTheRootLimits) {
  write("a/b/memory.max", "max\n");
  write("a/b/memory.current", "50\n");
  write("a/memory.max", "1000\n");
  write("a/memory.current", "300\n");
  EXPECT_EQ(room("0::/a/b\n", /*lessUsage=*/false), 1000u);
  EXPECT_EQ(room("0::/a/b\n", /*lessUsage=*/true), 700u);

  write("a/b/memory.max", "500\n");
  write("a/b/memory.current", "100\n");
  EXPECT_EQ(room("0::/a/b\n", false), 500u);
  EXPECT_EQ(room("0::/a/b\n", true), 400u);
}

TEST_F(CgroupRoomTest, UsageAtOrPastTheLimitLeavesNothing) {
  write("a/memory.max", "1000\n");
  write("a/memory.current", "1200\n");
  EXPECT_EQ(room("0::/a\n", true), 0u);
}

TEST_F(CgroupRoomTest, NoLimitAnywhereIsUnknown) {
  write("a/memory.max", "max\n");
  write("a/memory.current", "123\n");
  EXPECT_EQ(room("0::/a\n", true), UINT64_MAX);
  EXPECT_EQ(room("0::/\n", true), UINT64_MAX);
  EXPECT_EQ(room("0::/not/there\n", true), UINT64_MAX);
  EXPECT_EQ(afm_cgroup_room((dir / "missing").c_str(), (dir / "sys").c_str(),
                            true),
            UINT64_MAX);
}

TEST_F(CgroupRoomTest, HybridSystemsMountV2UnderUnified) {
  write("unified/a/memory.max", "2000\n");
  write("unified/a/memory.current", "500\n");
  EXPECT_EQ(room("4:memory:/\n0::/a\n", true), 1500u);
}

TEST_F(CgroupRoomTest, V1MemoryControllerLimits) {
  write("memory/x/y/memory.limit_in_bytes", "3000\n");
  write("memory/x/y/memory.usage_in_bytes", "1000\n");
  EXPECT_EQ(room("3:cpuset:/x/y\n4:memory:/x/y\n0::/\n", true), 2000u);
  EXPECT_EQ(room("3:cpuset:/x/y\n4:memory:/x/y\n0::/\n", false), 3000u);
  // Controllers mounted together name memory among others.
  EXPECT_EQ(room("5:cpuacct,memory:/x/y\n", true), 2000u);
  // A v1 group without a limit reads as a number near 2^63.
  write("memory/x/y/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(room("4:memory:/x/y\n", false), 9223372036854771712u);
}

TEST_F(CgroupRoomTest, OtherControllersAreNotMemory) {
  write("memory/q/memory.limit_in_bytes", "100\n");
  EXPECT_EQ(room("3:cpuset:/q\n", true), UINT64_MAX);
  EXPECT_EQ(room("3:memoryx:/q\n", true), UINT64_MAX);
  EXPECT_EQ(room("3:xmemory:/q\n", true), UINT64_MAX);
}

TEST_F(CgroupRoomTest, AContainerSeesItsOwnGroupAtTheMount) {
  // The host's path for the group is not under the container's mount,
  // which shows the container's own group at its top.
  write("memory/memory.limit_in_bytes", "4096\n");
  write("memory/memory.usage_in_bytes", "96\n");
  EXPECT_EQ(room("4:memory:/docker/0123abcd\n", true), 4000u);
}

TEST_F(CgroupRoomTest, LinesThatSayNothingUsableAreSkipped) {
  write("a/memory.max", "1000\n");
  std::string longLine = "7:memory:/" + std::string(3000, 'z') + ":x\n";
  EXPECT_EQ(room("garbage\n" + longLine + "1:\n0::/a\n", false), 1000u);
  // A limit file that is not a number does not limit.
  write("a/memory.max", "lots\n");
  EXPECT_EQ(room("0::/a\n", false), UINT64_MAX);
}

TEST(AvailableMemoryTest, ThisProcessHasRoomUnderItsLimit) {
  uint64_t limit = afm_memory_limit(), available = afm_available_memory();
  EXPECT_GT(available, 0u);
  EXPECT_LE(available, limit);
}

} // namespace
