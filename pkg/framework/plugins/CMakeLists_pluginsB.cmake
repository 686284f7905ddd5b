# Default plugins, set B: NodeResourcesFit, NodeResourcesBalancedAllocation, ImageLocality,
# DefaultBinder. Included from pkg/framework/CMakeLists.txt (paths relative to it).
add_library(ksched_plugins_b
  plugins/helper/resource_score.cc
  plugins/noderesources/resource_allocation.cc
  plugins/noderesources/fit.cc
  plugins/noderesources/balanced_allocation.cc
  plugins/imagelocality/image_locality.cc
  plugins/defaultbinder/default_binder.cc)
target_link_libraries(ksched_plugins_b PUBLIC ksched_framework_api ksched_cache ksched_api ksched_config
                      ksched_util ksched_options)

ksched_test(plugins_b_test
  SOURCES plugins/helper/resource_score_test.cc
          plugins/noderesources/fit_test.cc
          plugins/noderesources/score_test.cc
          plugins/noderesources/balanced_allocation_test.cc
          plugins/imagelocality/image_locality_test.cc
          plugins/defaultbinder/default_binder_test.cc
  LIBS ksched_plugins_b)
