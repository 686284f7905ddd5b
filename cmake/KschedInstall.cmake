# `make install` / `cmake --install`: the ksched binary, and the SDK for a ksched with
# plugins of its own (docs/user-guide.md, "Writing a plugin of your own"):
#
#   <prefix>/bin/ksched
#   <prefix>/include/ksched/...            the plugin interfaces and what they include
#   <prefix>/lib/libksched_*.a             every library ksched::app::Main links
#   <prefix>/lib/cmake/ksched/             find_package(ksched): ksched::framework,
#                                          ksched_add_scheduler()
#
# The installed libraries are not listed here by hand: they are the link closure of
# ksched::framework, so a module that pkg/scheduler (or anything else the program
# links) starts to use is installed without a change to this file.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# What a plugin and its main() link: the program (cmd/ksched/app.h) and, through it, the
# framework, the in-tree plugins, the configuration and everything below them.
add_library(ksched_framework INTERFACE)
target_link_libraries(ksched_framework INTERFACE ksched_app)
target_compile_features(ksched_framework INTERFACE cxx_std_20)
set_target_properties(ksched_framework PROPERTIES EXPORT_NAME framework)
add_library(ksched::framework ALIAS ksched_framework)

# The headers a plugin includes; everything they include (by "..." from the source
# root) is installed with them, so the installed set is closed.
set(KSCHED_PUBLIC_HEADERS
    cmd/ksched/app.h
    pkg/framework/interface.h
    pkg/framework/queue_plugins.h
    pkg/framework/pod_info.h
    pkg/framework/status.h
    pkg/framework/registry.h
    pkg/framework/runtime/plugin_args.h
    pkg/framework/plugins/helper/normalize_score.h)

# Targets of this project that `roots` link, directly or not (LINK_ONLY included:
# static libraries need their private dependencies at the final link).
function(ksched_link_closure out)
  set(todo ${ARGN})
  set(seen "")
  while(todo)
    list(POP_FRONT todo t)
    get_target_property(aliased ${t} ALIASED_TARGET)
    if(aliased)
      set(t ${aliased})
    endif()
    if(t IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${t})
    get_target_property(direct ${t} LINK_LIBRARIES)
    get_target_property(interface ${t} INTERFACE_LINK_LIBRARIES)
    foreach(lib IN LISTS direct interface)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
      if(TARGET "${lib}")
        get_target_property(imported ${lib} IMPORTED)
        if(NOT imported)
          list(APPEND todo ${lib})
        endif()
      endif()
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

ksched_link_closure(ksched_installed_targets ksched_framework)
install(TARGETS ksched RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${ksched_installed_targets} EXPORT kschedTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT kschedTargets NAMESPACE ksched:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ksched)

# The headers are found at install time, so an #include added later is followed.
install(CODE "
  set(KSCHED_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
  set(KSCHED_PUBLIC_HEADERS \"${KSCHED_PUBLIC_HEADERS}\")
  set(KSCHED_INCLUDE_DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}/ksched\")
  include(\"${PROJECT_SOURCE_DIR}/cmake/KschedInstallHeaders.cmake\")
")

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kschedConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kschedConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ksched)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kschedConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kschedConfig.cmake ${PROJECT_BINARY_DIR}/kschedConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ksched)

# The SDK end to end: install this build into a scratch prefix, build examples/score-plugin
# against that prefix alone and run its test (cmake/KschedSdkTest.cmake). Integration:
# it needs the whole build, and is not run under the sanitizers.
add_test(NAME sdk_score_plugin_example
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DBUILD_DIR=${PROJECT_BINARY_DIR}
                 -DWORK_DIR=${PROJECT_BINARY_DIR}/sdk-example -DCXX=${CMAKE_CXX_COMPILER}
                 -DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER} -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
                 -P ${PROJECT_SOURCE_DIR}/cmake/KschedSdkTest.cmake)
set_tests_properties(sdk_score_plugin_example PROPERTIES LABELS integration TIMEOUT 900)
