# libFuzzer targets (tools/afm-onnx-import-fuzzer). They need clang and its
# fuzzer runtime (Debian's libclang-rt-22-dev); AFM_ENABLE_FUZZERS
# defaults to ON exactly when a `-fsanitize=fuzzer,address` program links.
include(CheckCXXSourceCompiles)

set(AFM_FUZZER_COMPILE_FLAGS -fsanitize=fuzzer-no-link,address)
set(AFM_FUZZER_LINK_FLAGS -fsanitize=fuzzer,address)

set(AFM_HAVE_LIBFUZZER OFF)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address")
  set(CMAKE_REQUIRED_LINK_OPTIONS ${AFM_FUZZER_LINK_FLAGS})
  check_cxx_source_compiles([[
    #include <cstddef>
    #include <cstdint>
    extern "C" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) {
      return 0;
    }]] AFM_LIBFUZZER_LINKS)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  set(AFM_HAVE_LIBFUZZER ${AFM_LIBFUZZER_LINKS})
endif()

option(AFM_ENABLE_FUZZERS "Build the libFuzzer targets and their tests"
       ${AFM_HAVE_LIBFUZZER})
if(AFM_ENABLE_FUZZERS AND NOT AFM_HAVE_LIBFUZZER)
  message(FATAL_ERROR "AFM_ENABLE_FUZZERS needs clang with libFuzzer "
                      "(-fsanitize=fuzzer); on Debian: libclang-rt-22-dev")
endif()
message(STATUS "afm libFuzzer targets: ${AFM_ENABLE_FUZZERS}")

# A second, instrumented copy of a library's sources for a fuzzer: the
# normal library stays uninstrumented. Asserts stay on so that a broken
# invariant in an inline LLVM/MLIR helper (cast<>, Type::get) is a crash
# the fuzzer reports, not silent undefined behavior.
function(afm_add_fuzzer_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  llvm_update_compile_flags(${name})
  target_compile_options(${name} PRIVATE ${AFM_FUZZER_COMPILE_FLAGS} -UNDEBUG)
  target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
endfunction()
