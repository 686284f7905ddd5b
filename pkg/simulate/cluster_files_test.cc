// Reading clusters from files: YAML documents, JSON lists (typed lists whose items carry
// no kind), directories of mixed files, every kind simulate reads, unknown kinds skipped
// and counted, and errors that name the file, the document and the field.
#include "pkg/simulate/cluster_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ksched::simulate {
namespace {

std::vector<std::string> Names(const ClusterObjects& c) {
  std::vector<std::string> out;
  for (const SourceObject& o : c.objects) out.push_back(std::string(o.kind->kind) + "/" + o.name);
  return out;
}

StatusOr<ClusterObjects> Parse(std::string_view text, const std::string& file = "cluster.yaml") {
  ClusterObjects out;
  if (Status s = ParseClusterText(text, file, out); !s.ok()) return s;
  return out;
}

TEST(ClusterFilesTest, ReadsEveryKindSimulateServes) {
  auto c = Parse(R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: ns}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns, labels: {team: a}}
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: ns}
spec: {selector: {app: web}}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: rc, namespace: ns}
spec: {selector: {app: web}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, namespace: ns}
spec: {selector: {matchLabels: {app: web}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ss, namespace: ns}
spec: {selector: {matchLabels: {app: web}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb, namespace: ns}
spec: {selector: {matchLabels: {app: web}}}
status: {disruptionsAllowed: 1}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], storageClassName: local}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pvc1, namespace: ns}
spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 1Gi}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: ebs.csi.aws.com, nodeID: n1, allocatable: {count: 25}}]}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec: {attachRequired: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap, namespace: ns}
storageClassName: local
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
---
# a document of comments only
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(Names(*c), (std::vector<std::string>{
                           "Node/n1", "Pod/p1", "Namespace/ns", "Service/s", "ReplicationController/rc",
                           "ReplicaSet/rs", "StatefulSet/ss", "PodDisruptionBudget/pdb", "PriorityClass/high",
                           "PersistentVolume/pv1", "PersistentVolumeClaim/pvc1", "StorageClass/local", "CSINode/n1",
                           "CSIDriver/ebs.csi.aws.com"}));
  EXPECT_EQ(c->skipped_kinds, (std::map<std::string, size_t>{{"CSIStorageCapacity", 1}, {"Deployment", 1}}));
  EXPECT_EQ(c->objects[1].source, "cluster.yaml: document 2");
  EXPECT_EQ(c->objects[1].namespace_, "ns");
}

TEST(ClusterFilesTest, JsonListsAndTypedListsWhoseItemsHaveNoKind) {
  auto c = Parse(R"({"kind":"List","apiVersion":"v1","items":[
      {"kind":"Node","apiVersion":"v1","metadata":{"name":"a"}},
      {"kind":"PodList","apiVersion":"v1","metadata":{"name":"not-expanded"}}]})",
                 "list.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(Names(*c), (std::vector<std::string>{"Node/a"}));
  EXPECT_EQ(c->skipped_kinds.at("PodList"), 1u);  // an item that is no object simulate reads
  c = Parse(R"({"kind":"PodList","apiVersion":"v1","items":[
      {"metadata":{"name":"p1","namespace":"x"},"spec":{}},
      {"metadata":{"name":"p2"},"spec":{"nodeName":"a"}}]})",
            "pods.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(Names(*c), (std::vector<std::string>{"Pod/p1", "Pod/p2"}));
  EXPECT_EQ(c->objects[1].source, "pods.json: items[1]");
  EXPECT_NE(c->objects[0].json.find("\"kind\":\"Pod\""), std::string::npos) << c->objects[0].json;
}

TEST(ClusterFilesTest, BadInputNamesTheFileTheDocumentAndTheField) {
  auto bad = Parse("apiVersion: v1\nkind: Node\nmetadata: {name: [unclosed\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("cluster.yaml: line "), std::string::npos) << bad.status().message();

  bad = Parse("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nmetadata: {name: x}\n");
  EXPECT_EQ(bad.status().message(), "cluster.yaml: document 2: kind is missing");

  bad = Parse("kind: Pod\nmetadata: {name: x}\n");
  EXPECT_EQ(bad.status().message(), "cluster.yaml: document 1: Pod: apiVersion is missing");

  bad = Parse("apiVersion: v1\nkind: Pod\nmetadata: {namespace: ns}\n");
  EXPECT_EQ(bad.status().message(), "cluster.yaml: document 1: Pod: metadata.name is missing");

  bad = Parse(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: lots}}
)");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cluster.yaml: document 1: "), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("spec.containers[0].resources.requests.cpu"), std::string::npos)
      << bad.status().message();

  bad = Parse("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\nvalue: high\n");
  EXPECT_EQ(bad.status().message(), "cluster.yaml: document 1: PriorityClass \"p\": value: must be an integer");

  bad = Parse("- just\n- a list\n");
  EXPECT_EQ(bad.status().message(), "cluster.yaml: document 1: a document must be a map");

  bad = Parse("{\"kind\": ", "broken.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("broken.json: not JSON"), std::string::npos) << bad.status().message();
}

// Documents split as kubectl splits them; yaml-cpp's LoadAll looped forever on the
// second document here (found by fuzz_cluster_files).
TEST(ClusterFilesTest, DocumentsAreSplitOnSeparatorLinesOnly) {
  auto c = Parse("---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n--- # comment\n"
                 "apiVersion: v1\nkind: Node\nmetadata:\n  name: b\n  annotations: {x: \"--- not a separator\"}\n---\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(Names(*c), (std::vector<std::string>{"Node/a", "Node/b"}));
  EXPECT_EQ(c->objects[1].source, "cluster.yaml: document 2");
  auto bad = Parse("apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n, n|mespace: shop, labels: {app: web}}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cluster.yaml: line 5"), std::string::npos) << bad.status().message();
}

TEST(ClusterFilesTest, ADirectoryOfMixedFilesIsReadInNameOrder) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ksched-sim-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "b-nodes.yaml") << "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n";
  std::ofstream(dir / "a-nodes.json") << R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}})";
  std::ofstream(dir / "c.yml") << "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n";
  std::ofstream(dir / "README.md") << "not read";
  auto c = LoadClusterFiles({dir.string()});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(Names(*c), (std::vector<std::string>{"Node/n1", "Node/n2"}));
  EXPECT_EQ(c->skipped_kinds.at("ConfigMap"), 1u);
  std::ofstream(dir / "d.yaml") << "apiVersion: v1\nkind: Node\nmetadata: {name: n3}\nspec: {unschedulable: maybe}\n";
  auto bad = LoadClusterFiles({dir.string()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("d.yaml: document 1: "), std::string::npos) << bad.status().message();
  EXPECT_EQ(LoadClusterFiles({(dir / "missing").string()}).status().message(),
            (dir / "missing").string() + ": no such file or directory");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ksched::simulate
