# Compiler settings shared by every ksched target (applied through ksched_options).
# Installed with the libraries (cmake/KschedInstall.cmake): the warning flags are this
# tree's own, so code built against an installed ksched chooses its own.
add_library(ksched_options INTERFACE)
target_include_directories(ksched_options INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                                    $<INSTALL_INTERFACE:include/ksched>)
# Designated initializers deliberately omit defaulted fields of options structs.
target_compile_options(ksched_options INTERFACE
                       "$<BUILD_INTERFACE:-Wall;-Wextra;-Wno-unused-parameter;-Wno-missing-field-initializers>")
if(KSCHED_WERROR)
  target_compile_options(ksched_options INTERFACE $<BUILD_INTERFACE:-Werror>)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # Checks GUARDED_BY / REQUIRES annotations (pkg/util/thread_annotations.h).
  target_compile_options(ksched_options INTERFACE $<BUILD_INTERFACE:-Wthread-safety>)
endif()
if(KSCHED_FUZZ)
  # libFuzzer targets (tests/fuzz): every library they link gets coverage instrumentation
  # (fuzzer-no-link: the fuzz executables supply main) and runs under ASan + UBSan, so a
  # memory error or undefined behaviour anywhere in the decoders is a crash the fuzzer
  # reports with its input.
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "KSCHED_FUZZ needs clang: -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang")
  endif()
  if(NOT KSCHED_SANITIZE)
    set(KSCHED_SANITIZE address,undefined)
  endif()
  target_compile_options(ksched_options INTERFACE -fsanitize=fuzzer-no-link)
endif()
if(KSCHED_SANITIZE)
  target_compile_options(ksched_options INTERFACE -fsanitize=${KSCHED_SANITIZE} -fno-omit-frame-pointer
                                                  -fno-sanitize-recover=all)
  target_link_options(ksched_options INTERFACE -fsanitize=${KSCHED_SANITIZE})
endif()
find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()
