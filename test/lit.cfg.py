# -*- Python -*-
# lit configuration of the afm regression suite.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "AFM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "weight-table.test.mlir"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.afm_obj_root, "test")

config.substitutions.append(("%afm_src_root", config.afm_src_root))
config.substitutions.append(("%examples", os.path.join(config.afm_src_root, "python-free-examples")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.afm_tools_dir, config.llvm_tools_dir]
tools = [
    ToolSubst("afm-opt", unresolved="fatal"),
    ToolSubst("afm-pack-test-binary", unresolved="fatal"),
    ToolSubst("afm-run", unresolved="fatal"),
    ToolSubst("afm-translate", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The runtime's libraries and the fake model its tests pack (host build).
config.substitutions.append(("%afm_lib_dir", config.afm_lib_dir))
config.substitutions.append(("%host_fake_model", config.afm_fake_model))

llvm_config.with_environment("PATH", config.afm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
