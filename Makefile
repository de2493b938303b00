# The two commands of the README, and the steps they are made of.
#   make demo   install dependencies, build, run the bundled example
#   make test   install dependencies, build, run every test (lit + GoogleTest)

BUILD ?= build
LLVM_DIR ?= /usr/lib/llvm-22
JOBS ?= $(shell nproc)
# Worktrees side by side under one folder share ccache hits.
export CCACHE_BASEDIR ?= $(abspath $(CURDIR)/..)

.PHONY: all deps configure build demo test clean

all: build

deps:
	bash scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=$(LLVM_DIR)/bin/clang \
	  -DCMAKE_CXX_COMPILER=$(LLVM_DIR)/bin/clang++ \
	  -DLLVM_USE_LINKER=lld \
	  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
	  -DLLVM_DIR=$(LLVM_DIR)/lib/cmake/llvm

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	bash python-free-examples/run-demo.sh $(BUILD)/bin

test: build
	cmake --build $(BUILD) --target check-afm -j $(JOBS)

clean:
	rm -rf $(BUILD)
