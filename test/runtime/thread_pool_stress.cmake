# afm-thread-pool-stress (thread_pool_stress.c): many short jobs through the
# runtime's thread pool, with a watchdog for lost wake-ups. Included by
# test/runtime/CMakeLists.txt and by the standalone runtime build, so it
# cross-builds for AArch64 with afm-run; lands in <build>/test/runtime.
add_executable(afm-thread-pool-stress
               ${CMAKE_CURRENT_LIST_DIR}/thread_pool_stress.c)
target_link_libraries(afm-thread-pool-stress PRIVATE afm_runtime_static m)
target_include_directories(afm-thread-pool-stress
                           PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../..)
set_target_properties(afm-thread-pool-stress PROPERTIES
  C_STANDARD 11
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/runtime)
