# The fake model of the runtime tests (fake_model.c) as a shared library:
# the code section afm-pack-test-binary and AFMRuntimeTests pack. Included
# by test/runtime/CMakeLists.txt and by the standalone runtime build (so it
# cross-builds with afm-run); sets AFM_FAKE_MODEL_FILE to where it lands.
# Like a compiled model, it must unload at dlclose: LLVM's CMake links every
# shared library with -z nodelete, which would keep each loaded copy mapped
# (a leak the loader fuzzer found), so this directory drops the flag.
string(REPLACE "-Wl,-z,nodelete" "" CMAKE_SHARED_LINKER_FLAGS
       "${CMAKE_SHARED_LINKER_FLAGS}")
add_library(afm_fake_model SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_model.c)
target_include_directories(afm_fake_model PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/../../include)
set(AFM_FAKE_MODEL_DIR ${CMAKE_BINARY_DIR}/test/runtime)
set_target_properties(afm_fake_model PROPERTIES
  C_STANDARD 11
  C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${AFM_FAKE_MODEL_DIR})
set(AFM_FAKE_MODEL_FILE
  ${AFM_FAKE_MODEL_DIR}/${CMAKE_SHARED_LIBRARY_PREFIX}afm_fake_model${CMAKE_SHARED_LIBRARY_SUFFIX})
