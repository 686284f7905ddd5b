# Default filter/score plugins, set A: NodeName, NodeUnschedulable, NodePorts,
# NodeAffinity, TaintToleration and the shared score normalization. Selector and
# toleration matching live in ksched_api (pkg/api/selector.h).
# Included from pkg/framework/CMakeLists.txt, so paths are relative to pkg/framework.
add_library(ksched_plugins_a
  plugins/helper/normalize_score.cc
  plugins/nodename/node_name.cc
  plugins/nodeunschedulable/node_unschedulable.cc
  plugins/nodeports/node_ports.cc
  plugins/nodeaffinity/node_affinity.cc
  plugins/tainttoleration/taint_toleration.cc)
target_link_libraries(ksched_plugins_a PUBLIC ksched_framework_api ksched_cache ksched_api ksched_config
                      ksched_options)

ksched_test(plugins_a_test
  SOURCES plugins/helper/normalize_score_test.cc
          plugins/nodename/node_name_test.cc
          plugins/nodeunschedulable/node_unschedulable_test.cc
          plugins/nodeports/node_ports_test.cc
          plugins/nodeaffinity/node_affinity_test.cc
          plugins/tainttoleration/taint_toleration_test.cc
  LIBS ksched_plugins_a)
