# afm-tokenizer-check (tokenizer_check.c): the runtime tokenizer over a
# corpus through the public C API alone. Included by test/runtime/
# CMakeLists.txt and by the standalone runtime build, so it cross-builds
# for AArch64 with afm-run; lands in <build>/test/runtime.
add_executable(afm-tokenizer-check ${CMAKE_CURRENT_LIST_DIR}/tokenizer_check.c)
target_link_libraries(afm-tokenizer-check PRIVATE afm_runtime_static)
set_target_properties(afm-tokenizer-check PROPERTIES
  C_STANDARD 11
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/runtime)
