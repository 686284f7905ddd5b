# The SDK end to end (ctest -R sdk_score_plugin_example; cmake/KschedInstall.cmake
# registers it): this build is installed into a scratch prefix, every installed header
# is compiled against that prefix alone, examples/score-plugin is configured and built
# against it (CMAKE_PREFIX_PATH=<prefix>, warnings as errors) and its test run; last,
# the stock binary must refuse the example's configuration, naming the plugin it lacks.
#
#   cmake -DSOURCE_DIR=... -DBUILD_DIR=... -DWORK_DIR=... -DCXX=... -DLAUNCHER=... -DBUILD_TYPE=...
#         -P cmake/KschedSdkTest.cmake

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc}):\n${out}")
  endif()
  message(STATUS "${what}: ok")
endfunction()

cmake_host_system_information(RESULT jobs QUERY NUMBER_OF_LOGICAL_CORES)
set(prefix ${WORK_DIR}/prefix)
set(configure_args -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()

file(REMOVE_RECURSE ${WORK_DIR})
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The package is relocatable and self-contained: nothing in it names the tree it came from.
file(GLOB package_files ${prefix}/lib*/cmake/ksched/*.cmake ${prefix}/lib*/*/cmake/ksched/*.cmake)
if(NOT package_files)
  message(FATAL_ERROR "no CMake package under ${prefix}")
endif()
foreach(f IN LISTS package_files)
  file(READ ${f} text)
  string(FIND "${text}" "${SOURCE_DIR}/" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${f} names the source tree ${SOURCE_DIR}")
  endif()
endforeach()

# Every installed header, in one translation unit built against the prefix only.
file(GLOB_RECURSE headers RELATIVE ${prefix}/include/ksched ${prefix}/include/ksched/*.h)
list(SORT headers)
set(all_headers "")
foreach(h IN LISTS headers)
  string(APPEND all_headers "#include \"${h}\"\n")
endforeach()
file(WRITE ${WORK_DIR}/headers/all_headers.cc "${all_headers}")
file(WRITE ${WORK_DIR}/headers/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(ksched_headers LANGUAGES CXX)
find_package(ksched REQUIRED)
add_library(all_headers OBJECT all_headers.cc)
target_link_libraries(all_headers PRIVATE ksched::framework)
target_compile_options(all_headers PRIVATE -Wall -Wextra -Werror)
")
list(LENGTH headers header_count)
run("configure the ${header_count} installed headers"
    ${CMAKE_COMMAND} -S ${WORK_DIR}/headers -B ${WORK_DIR}/headers/build ${configure_args})
run("compile the installed headers" ${CMAKE_COMMAND} --build ${WORK_DIR}/headers/build)

set(example ${SOURCE_DIR}/examples/score-plugin)
run("configure examples/score-plugin" ${CMAKE_COMMAND} -S ${example} -B ${WORK_DIR}/build ${configure_args})
run("build examples/score-plugin" ${CMAKE_COMMAND} --build ${WORK_DIR}/build -j${jobs})
run("test examples/score-plugin" ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/build --output-on-failure)

# The stock binary does not know the plugin: the same configuration is refused, naming it.
execute_process(COMMAND ${prefix}/bin/ksched simulate --cluster ${example}/test/cluster.yaml
                        --pods ${example}/test/pods.yaml --config ${example}/config.yaml
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "\"LabelPreference\" does not exist")
  message(FATAL_ERROR "the stock ksched with the example's config: want exit 2 naming LabelPreference, got exit "
                      "${rc}: ${err}")
endif()
message(STATUS "stock ksched refuses LabelPreference: ok")
message(STATUS "sdk example: PASS")
