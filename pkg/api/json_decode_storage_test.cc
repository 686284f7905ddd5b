#include <gtest/gtest.h>

#include "pkg/api/json.h"
#include "pkg/api/storage.h"

namespace ksched::api {
namespace {

// A claim the PV controller has bound, as the API server sends it.
constexpr std::string_view kBoundClaim = R"({
  "apiVersion": "v1",
  "kind": "PersistentVolumeClaim",
  "metadata": {
    "annotations": {
      "pv.kubernetes.io/bind-completed": "yes",
      "pv.kubernetes.io/bound-by-controller": "yes",
      "volume.kubernetes.io/selected-node": "node-a",
      "kubectl.kubernetes.io/last-applied-configuration": "{\"huge\":true}"
    },
    "creationTimestamp": "2026-11-25T10:00:00Z",
    "finalizers": ["kubernetes.io/pvc-protection"],
    "labels": {"app": "db"},
    "managedFields": [{"manager": "kube-controller-manager"}],
    "name": "data-db-0",
    "namespace": "prod",
    "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "db-0", "uid": "pod-uid", "controller": true}],
    "resourceVersion": "812",
    "uid": "claim-uid"
  },
  "spec": {
    "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
    "resources": {"requests": {"storage": "5Gi", "cpu": "1"}},
    "selector": {"matchLabels": {"tier": "fast"}},
    "storageClassName": "local",
    "volumeMode": "Filesystem",
    "volumeName": "pv-7"
  },
  "status": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}, "phase": "Bound"}
})";

TEST(JsonDecodeStorageTest, ClaimKeepsSpecPhaseAndBindingAnnotations) {
  JsonParser parser;
  auto c = DecodePersistentVolumeClaim(parser, kBoundClaim);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->Name(), "data-db-0");
  EXPECT_EQ((*c)->Namespace(), "prod");
  EXPECT_EQ((*c)->metadata.uid, "claim-uid");
  EXPECT_EQ((*c)->metadata.resource_version, "812");
  EXPECT_TRUE((*c)->metadata.labels.empty());
  EXPECT_EQ((*c)->annotations, (StringMap{{"pv.kubernetes.io/bind-completed", "yes"},
                                          {"pv.kubernetes.io/bound-by-controller", "yes"},
                                          {"volume.kubernetes.io/selected-node", "node-a"}}));
  EXPECT_FALSE((*c)->being_deleted);
  ASSERT_EQ((*c)->owner_references.size(), 1u);
  EXPECT_EQ((*c)->owner_references[0].uid, "pod-uid");
  EXPECT_TRUE((*c)->owner_references[0].controller);
  EXPECT_EQ((*c)->access_modes, (std::vector<std::string>{"ReadWriteOnce", "ReadOnlyMany"}));
  ASSERT_TRUE((*c)->selector.has_value());
  EXPECT_EQ((*c)->selector->match_labels, (StringMap{{"tier", "fast"}}));
  ASSERT_TRUE((*c)->storage_request.has_value());
  EXPECT_EQ((*c)->storage_request->Value(), int64_t{5} << 30);
  EXPECT_EQ((*c)->volume_name, "pv-7");
  EXPECT_EQ((*c)->StorageClass(), "local");
  EXPECT_EQ((*c)->volume_mode, "Filesystem");
  EXPECT_EQ((*c)->phase, "Bound");
}

TEST(JsonDecodeStorageTest, ClaimStorageClassFromBetaAnnotationOrAbsent) {
  JsonParser parser;
  auto beta = DecodePersistentVolumeClaim(parser, R"({"metadata":{"name":"c","namespace":"d",
      "annotations":{"volume.beta.kubernetes.io/storage-class":"old"},"deletionTimestamp":"2026-11-25T10:00:00Z"},
      "spec":{"storageClassName":"new"}})");
  ASSERT_TRUE(beta.ok()) << beta.status().ToString();
  EXPECT_EQ((*beta)->StorageClass(), "old");
  EXPECT_TRUE((*beta)->being_deleted);

  auto none = DecodePersistentVolumeClaim(parser, R"({"metadata":{"name":"c","namespace":"d"},"spec":{}})");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE((*none)->storage_class_name.has_value());
  EXPECT_EQ((*none)->StorageClass(), "");
  EXPECT_FALSE((*none)->storage_request.has_value());

  auto empty = DecodePersistentVolumeClaim(parser, R"({"metadata":{"name":"c","namespace":"d"},
      "spec":{"storageClassName":""}})");
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE((*empty)->storage_class_name.has_value());
  EXPECT_EQ(*(*empty)->storage_class_name, "");
}

// A local volume pinned to one node and pre-bound to a claim.
constexpr std::string_view kLocalVolume = R"({
  "apiVersion": "v1",
  "kind": "PersistentVolume",
  "metadata": {
    "annotations": {"pv.kubernetes.io/bound-by-controller": "yes", "other": "x"},
    "labels": {"topology.kubernetes.io/zone": "z1"},
    "name": "pv-7",
    "resourceVersion": "77",
    "uid": "pv-uid"
  },
  "spec": {
    "accessModes": ["ReadWriteOnce"],
    "capacity": {"storage": "10Gi"},
    "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": "data-db-0", "namespace": "prod",
                 "resourceVersion": "800", "uid": "claim-uid"},
    "local": {"path": "/mnt/disks/ssd1"},
    "nodeAffinity": {"required": {"nodeSelectorTerms": [
      {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-a"]}]}]}},
    "persistentVolumeReclaimPolicy": "Delete",
    "storageClassName": "local",
    "volumeMode": "Block"
  },
  "status": {"phase": "Bound"}
})";

TEST(JsonDecodeStorageTest, VolumeKeepsWhatTheVolumePluginsRead) {
  JsonParser parser;
  auto pv = DecodePersistentVolume(parser, kLocalVolume);
  ASSERT_TRUE(pv.ok()) << pv.status().ToString();
  EXPECT_EQ((*pv)->Name(), "pv-7");
  EXPECT_EQ((*pv)->metadata.uid, "pv-uid");
  EXPECT_EQ((*pv)->metadata.resource_version, "77");
  EXPECT_EQ((*pv)->metadata.labels, (StringMap{{"topology.kubernetes.io/zone", "z1"}}));
  EXPECT_EQ((*pv)->annotations, (StringMap{{"pv.kubernetes.io/bound-by-controller", "yes"}}));
  ASSERT_TRUE((*pv)->capacity.has_value());
  EXPECT_EQ((*pv)->capacity->Value(), int64_t{10} << 30);
  EXPECT_EQ((*pv)->access_modes, (std::vector<std::string>{"ReadWriteOnce"}));
  EXPECT_EQ((*pv)->storage_class_name, "local");
  EXPECT_EQ((*pv)->volume_mode, "Block");
  ASSERT_TRUE((*pv)->claim_ref.has_value());
  EXPECT_EQ(*(*pv)->claim_ref, (ClaimReference{"prod", "data-db-0", "claim-uid"}));
  ASSERT_TRUE((*pv)->node_affinity.has_value());
  ASSERT_EQ((*pv)->node_affinity->size(), 1u);
  EXPECT_EQ((*(*pv)->node_affinity)[0].match_expressions,
            (std::vector<LabelSelectorRequirement>{{"kubernetes.io/hostname", SelectorOperator::kIn, {"node-a"}}}));
  EXPECT_EQ((*pv)->source, VolumeSource{});  // a local volume: no CSI driver, no in-tree disk
  EXPECT_EQ((*pv)->phase, "Bound");
}

TEST(JsonDecodeStorageTest, VolumeSourcesAndBetaClass) {
  JsonParser parser;
  auto csi = DecodePersistentVolume(parser, R"({"metadata":{"name":"a",
      "annotations":{"volume.beta.kubernetes.io/storage-class":"beta"}},
      "spec":{"storageClassName":"ignored","csi":{"driver":"ebs.csi.aws.com","volumeHandle":"vol-1","readOnly":true},
              "claimRef":null,"nodeAffinity":null}})");
  ASSERT_TRUE(csi.ok()) << csi.status().ToString();
  EXPECT_EQ((*csi)->storage_class_name, "beta");
  EXPECT_EQ((*csi)->source.csi_driver, "ebs.csi.aws.com");
  EXPECT_EQ((*csi)->source.csi_volume_handle, "vol-1");
  EXPECT_TRUE((*csi)->source.read_only);
  EXPECT_FALSE((*csi)->claim_ref.has_value());
  EXPECT_FALSE((*csi)->node_affinity.has_value());

  auto rbd = DecodePersistentVolume(parser, R"({"metadata":{"name":"b"},
      "spec":{"rbd":{"monitors":["m1","m2"],"image":"img"}}})");
  ASSERT_TRUE(rbd.ok()) << rbd.status().ToString();
  EXPECT_EQ((*rbd)->source.rbd_monitors, (std::vector<std::string>{"m1", "m2"}));
  EXPECT_EQ((*rbd)->source.rbd_pool, "rbd");  // the API's default
  EXPECT_EQ((*rbd)->source.rbd_image, "img");

  // Present but empty required node affinity: matches no node, so it stays engaged.
  auto none = DecodePersistentVolume(parser, R"({"metadata":{"name":"c"},
      "spec":{"nodeAffinity":{"required":{"nodeSelectorTerms":[]}}}})");
  ASSERT_TRUE(none.ok());
  ASSERT_TRUE((*none)->node_affinity.has_value());
  EXPECT_TRUE((*none)->node_affinity->empty());
}

TEST(JsonDecodeStorageTest, BadInputNamesTheObjectAndField) {
  JsonParser parser;
  auto pv = DecodePersistentVolume(parser, R"({"metadata":{"name":"pv-bad"},"spec":{"capacity":{"storage":"ten"}}})");
  ASSERT_FALSE(pv.ok());
  EXPECT_NE(pv.status().message().find("persistentvolume \"pv-bad\""), std::string::npos) << pv.status().message();
  EXPECT_NE(pv.status().message().find("spec.capacity.storage"), std::string::npos) << pv.status().message();

  auto pvc = DecodePersistentVolumeClaim(parser, R"({"metadata":{"name":"c","namespace":"ns"},
      "spec":{"accessModes":"ReadWriteOnce"}})");
  ASSERT_FALSE(pvc.ok());
  EXPECT_NE(pvc.status().message().find("persistentvolumeclaim \"ns/c\": spec.accessModes"), std::string::npos)
      << pvc.status().message();

  auto wrong_kind = DecodeStorageClass(parser, R"({"kind":"CSINode","metadata":{"name":"x"}})");
  EXPECT_FALSE(wrong_kind.ok());
}

TEST(JsonDecodeStorageTest, StorageClassCSINodeAndCSIDriver) {
  JsonParser parser;
  auto sc = DecodeStorageClass(parser, R"({"apiVersion":"storage.k8s.io/v1","kind":"StorageClass",
      "metadata":{"name":"local","resourceVersion":"5"},"provisioner":"example.com/local",
      "parameters":{"type":"ssd"},"reclaimPolicy":"Delete","volumeBindingMode":"WaitForFirstConsumer",
      "allowedTopologies":[{"matchLabelExpressions":[{"key":"topology.kubernetes.io/zone","values":["z1","z2"]}]}]})");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ((*sc)->Name(), "local");
  EXPECT_EQ((*sc)->provisioner, "example.com/local");
  EXPECT_TRUE((*sc)->WaitForFirstConsumer());
  ASSERT_EQ((*sc)->allowed_topologies.size(), 1u);
  EXPECT_EQ((*sc)->allowed_topologies[0],
            (TopologySelectorTerm{{"topology.kubernetes.io/zone", {"z1", "z2"}}}));

  auto node = DecodeCSINode(parser, R"({"kind":"CSINode","metadata":{"name":"node-a",
      "annotations":{"storage.alpha.kubernetes.io/migrated-plugins":"kubernetes.io/aws-ebs"}},
      "spec":{"drivers":[{"name":"ebs.csi.aws.com","nodeID":"i-1","allocatable":{"count":25},
      "topologyKeys":["topology.ebs.csi.aws.com/zone"]},{"name":"other","nodeID":"n","allocatable":null}]}})");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  ASSERT_EQ((*node)->drivers.size(), 2u);
  const CSINodeDriver* ebs = (*node)->FindDriver("ebs.csi.aws.com");
  ASSERT_NE(ebs, nullptr);
  EXPECT_EQ(ebs->node_id, "i-1");
  EXPECT_EQ(ebs->allocatable_count, 25);
  EXPECT_EQ(ebs->topology_keys, (std::vector<std::string>{"topology.ebs.csi.aws.com/zone"}));
  EXPECT_FALSE((*node)->FindDriver("other")->allocatable_count.has_value());
  EXPECT_EQ((*node)->FindDriver("missing"), nullptr);
  EXPECT_EQ((*node)->annotations, (StringMap{{"storage.alpha.kubernetes.io/migrated-plugins", "kubernetes.io/aws-ebs"}}));

  auto attach = DecodeCSIDriver(parser, R"({"kind":"CSIDriver","metadata":{"name":"d"},"spec":{"attachRequired":false}})");
  ASSERT_TRUE(attach.ok());
  EXPECT_FALSE((*attach)->attach_required);
  auto dflt = DecodeCSIDriver(parser, R"({"kind":"CSIDriver","metadata":{"name":"d"},"spec":{}})");
  ASSERT_TRUE(dflt.ok());
  EXPECT_TRUE((*dflt)->attach_required);
}

TEST(JsonDecodeStorageTest, ListsAndWatchEvents) {
  JsonParser parser;
  auto list = DecodePersistentVolumeList(parser, R"({"kind":"PersistentVolumeList","metadata":{"resourceVersion":"90"},
      "items":[{"metadata":{"name":"a","resourceVersion":"1"},"spec":{"storageClassName":"x"}},
               {"metadata":{"name":"b","resourceVersion":"2"},"spec":{"capacity":{"storage":"bad"}}}]})");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "90");
  ASSERT_EQ(list->items.size(), 1u);  // the bad one is skipped, not the whole list
  EXPECT_EQ(list->items[0]->storage_class_name, "x");
  EXPECT_EQ(list->skipped.size(), 1u);

  auto ev = DecodePersistentVolumeClaimWatchEvent(parser, R"({"type":"MODIFIED","object":{"kind":"PersistentVolumeClaim",
      "metadata":{"name":"c","namespace":"n","resourceVersion":"12"},"spec":{"volumeName":"pv"}}})");
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->type, WatchEventType::kModified);
  ASSERT_NE(ev->object, nullptr);
  EXPECT_EQ(ev->object->volume_name, "pv");
}

TEST(JsonDecodeStorageTest, PodKeepsTheVolumesThePluginsRead) {
  auto pod = DecodePod(R"({"metadata":{"name":"p","namespace":"n","uid":"u"},"spec":{"volumes":[
      {"name":"data","persistentVolumeClaim":{"claimName":"data-p","readOnly":true}},
      {"name":"scratch","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"]}}}},
      {"name":"pd","gcePersistentDisk":{"pdName":"disk-1","readOnly":true}},
      {"name":"ebs","awsElasticBlockStore":{"volumeID":"vol-9"}},
      {"name":"iscsi","iscsi":{"targetPortal":"10.0.0.1:3260","iqn":"iqn.x","lun":2}},
      {"name":"inline","csi":{"driver":"inline.csi.example.com"}},
      {"name":"cfg","configMap":{"name":"c"}},
      {"name":"token","projected":{"sources":[]}},
      {"name":"tmp","emptyDir":{}}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  const auto& v = (*pod)->spec.volumes;
  ASSERT_EQ(v.size(), 6u);  // configMap, projected and emptyDir are not kept
  EXPECT_EQ(v[0].pvc_claim_name, "data-p");
  EXPECT_TRUE(v[0].pvc_read_only);
  EXPECT_TRUE(v[1].ephemeral);
  EXPECT_EQ(ClaimName(**pod, v[1]), "p-scratch");
  EXPECT_EQ(ClaimName(**pod, v[0]), "data-p");
  EXPECT_EQ(ClaimName(**pod, v[2]), "");
  EXPECT_EQ(v[2].source.gce_pd_name, "disk-1");
  EXPECT_TRUE(v[2].source.read_only);
  EXPECT_EQ(v[3].source.aws_volume_id, "vol-9");
  EXPECT_EQ(v[4].source.iscsi_iqn, "iqn.x");
  EXPECT_EQ(v[4].source.iscsi_lun, 2);
  EXPECT_EQ(v[4].source.iscsi_target_portal, "10.0.0.1:3260");
  EXPECT_EQ(v[5].source.csi_driver, "inline.csi.example.com");
}

TEST(JsonDecodeStorageTest, ClaimIsForPodNeedsTheControllingOwner) {
  Pod pod;
  pod.metadata.uid = "pod-uid";
  PersistentVolumeClaim claim;
  EXPECT_FALSE(ClaimIsForPod(pod, claim));
  claim.owner_references.push_back({.kind = "Pod", .name = "p", .uid = "pod-uid", .controller = false});
  EXPECT_FALSE(ClaimIsForPod(pod, claim));  // an owner, but not the controller
  claim.owner_references.push_back({.kind = "Pod", .name = "p", .uid = "other", .controller = true});
  EXPECT_FALSE(ClaimIsForPod(pod, claim));
  claim.owner_references.back().uid = "pod-uid";
  EXPECT_TRUE(ClaimIsForPod(pod, claim));
}

TEST(JsonDecodeStorageTest, PodUsesClaimByVolumeKind) {
  Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "ns";
  pod.metadata.uid = "pod-uid";
  pod.spec.volumes = {{.name = "data", .pvc_claim_name = "data-p"}, {.name = "scratch", .ephemeral = true},
                      {.name = "cfg"}};
  PersistentVolumeClaim claim;
  claim.metadata.namespace_ = "ns";
  claim.metadata.name = "data-p";
  EXPECT_TRUE(PodUsesClaim(pod, claim, false));
  EXPECT_TRUE(PodUsesClaim(pod, claim, true));
  claim.metadata.name = "p-scratch";  // the ephemeral volume's claim
  EXPECT_FALSE(PodUsesClaim(pod, claim, false));
  EXPECT_TRUE(PodUsesClaim(pod, claim, true));
  claim.metadata.namespace_ = "other";
  EXPECT_FALSE(PodUsesClaim(pod, claim, true));
  claim.metadata.namespace_ = "ns";
  claim.metadata.name = "";  // never matches the volume without a claim
  EXPECT_FALSE(PodUsesClaim(pod, claim, true));

  claim.metadata.name = "p-scratch";
  EXPECT_EQ(claim.Key(), "ns/p-scratch");
  EXPECT_EQ(ClaimKey("ns", "c"), "ns/c");
  EXPECT_EQ(NotOwnedClaimMessage(pod, claim), "PVC ns/p-scratch was not created for pod ns/p (pod is not owner)");
}

}  // namespace
}  // namespace ksched::api
