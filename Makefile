# The two commands of the README, and the steps they are made of.
#   make demo   install dependencies, build, run the bundled example
#   make test   install dependencies, build, run every test (lit + GoogleTest),
#               then again under ASan, LSan and UBSan (make sanitize)

BUILD ?= build
LLVM_DIR ?= /usr/lib/llvm-22
JOBS ?= $(shell nproc)
# Worktrees side by side under one folder share ccache hits.
export CCACHE_BASEDIR ?= $(abspath $(CURDIR)/..)

.PHONY: all deps configure build demo test sanitize clean

all: build

deps:
	bash scripts/install-deps.sh

# The configuration both build trees share (add -B DIR and extra options).
CMAKE_CONFIGURE = cmake -G Ninja -S . \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=$(LLVM_DIR)/bin/clang \
	  -DCMAKE_CXX_COMPILER=$(LLVM_DIR)/bin/clang++ \
	  -DLLVM_USE_LINKER=lld \
	  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
	  -DLLVM_DIR=$(LLVM_DIR)/lib/cmake/llvm

$(BUILD)/build.ninja:
	$(CMAKE_CONFIGURE) -B $(BUILD)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	bash python-free-examples/run-demo.sh $(BUILD)/bin

test: build
	cmake --build $(BUILD) --target check-afm -j $(JOBS)
	$(MAKE) sanitize

# The whole project built again with ASan (LeakSanitizer included) and
# UBSan, every report fatal, and run over every GoogleTest suite (the
# runtime's: load errors, sessions, threads, the structured mutation
# campaign over hostile .afmb files), and the lit tests of the tools, the runtime
# and the end-to-end models (compiling, running compiled code).
# LLVM_USE_SANITIZER names only Address: it also drops LLVM's -z defs,
# which instrumented shared libraries cannot link with; UBSan must be added
# by name or it is silently left out. Debian's LLVM and MLIR libraries are
# not instrumented, while the inline allocator code compiled into ours is:
# hence allow_user_poisoning=0. The compiled models' code is not
# instrumented either (afm-compile emits it); the runtime around it is.
SAN_BUILD ?= $(BUILD)-sanitize
SAN_FLAGS = -fsanitize=undefined -fno-sanitize-recover=undefined
SAN_ENV = ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=1:detect_container_overflow=0:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
SAN_GTESTS = AFMRuntimeTests AFMUnitTests AFMReferenceTests AFMCompressTests \
	  AFMCompilerTests AFMTokenizerTests AFMGrammarTests
SAN_LIT_DIRS = e2e runtime tools
sanitize: deps
	$(CMAKE_CONFIGURE) -B $(SAN_BUILD) \
	  -DLLVM_USE_SANITIZER=Address \
	  "-DCMAKE_C_FLAGS=$(SAN_FLAGS)" "-DCMAKE_CXX_FLAGS=$(SAN_FLAGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=undefined \
	  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=undefined \
	  -DAFM_ENABLE_FUZZERS=OFF -DAFM_BUILD_AARCH64_RUNTIME=OFF > /dev/null
	cmake --build $(SAN_BUILD) -j $(JOBS)
	for suite in $(SAN_GTESTS); do \
	  $(SAN_ENV) $(SAN_BUILD)/test/unit/$$suite --gtest_brief=1 || exit 1; \
	done
	$(SAN_ENV) $(LLVM_DIR)/bin/lit -sv $(addprefix $(SAN_BUILD)/test/,$(SAN_LIT_DIRS))

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
