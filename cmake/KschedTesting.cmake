include(GoogleTest)

# ksched_test(<name> SOURCES a.cc b.cc LIBS ksched_x [INTEGRATION [SANITIZED]])
#   Unit tests carry the ctest label "unit" and run under the sanitizers in CI.
#   Integration tests (label "integration") start a real etcd + kube-apiserver through
#   tests/harness/control_plane.h; they are skipped in KSCHED_UNIT_TESTS_ONLY builds unless
#   SANITIZED (label "sanitized" too: CI runs them under the sanitizers as well).
function(ksched_test name)
  cmake_parse_arguments(T "INTEGRATION;SANITIZED" "" "SOURCES;LIBS" ${ARGN})
  # SANITIZED integration tests are built in the sanitizer build too (label "sanitized").
  if(T_INTEGRATION AND KSCHED_UNIT_TESTS_ONLY AND NOT T_SANITIZED)
    return()
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} ksched_options GTest::gtest GTest::gmock)
  # The fuzz build runs only the fuzz targets (ctest -L fuzz): its tests are defined, since
  # module CMakeLists add definitions to them, and can be built by name, but are not built
  # by default or registered with ctest.
  if(KSCHED_FUZZ)
    set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL TRUE)
  endif()
  if(T_INTEGRATION)
    target_link_libraries(${name} PRIVATE ksched_control_plane)
    if(KSCHED_FUZZ)
      return()
    endif()
    # One control plane per test binary, so the binary's tests run in one process.
    add_test(NAME ${name} COMMAND ${name})
    set(labels integration)
    if(T_SANITIZED)
      list(APPEND labels sanitized)
    endif()
    set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT 900 RUN_SERIAL TRUE)
  else()
    target_link_libraries(${name} PRIVATE GTest::gtest_main)
    if(KSCHED_FUZZ)
      return()
    endif()
    gtest_discover_tests(${name} PROPERTIES LABELS unit TIMEOUT 120 DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
