#include "pkg/leaderelection/lease.h"

#include <gtest/gtest.h>

namespace ksched::leaderelection {
namespace {

// As kube-apiserver 1.20 returns it (managedFields shortened).
constexpr char kServerLease[] = R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1",
  "metadata":{"name":"ksched","namespace":"kube-system","uid":"8b1c","resourceVersion":"4711",
    "creationTimestamp":"2026-01-01T00:00:00Z","labels":{"team":"sched"},
    "managedFields":[{"manager":"ksched","operation":"Update","apiVersion":"coordination.k8s.io/v1"}]},
  "spec":{"holderIdentity":"host-a_1234","leaseDurationSeconds":15,
    "acquireTime":"2026-01-01T00:00:00.000000Z","renewTime":"2026-01-01T00:00:10.250000Z","leaseTransitions":3}}
)";

TEST(LeaseTest, DecodesServerLease) {
  auto lease = DecodeLease(kServerLease);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(lease->resource_version, "4711");
  EXPECT_EQ(lease->record, (LeaseRecord{.holder_identity = "host-a_1234",
                                        .lease_duration_seconds = 15,
                                        .acquire_time = "2026-01-01T00:00:00.000000Z",
                                        .renew_time = "2026-01-01T00:00:10.250000Z",
                                        .lease_transitions = 3}));
  EXPECT_EQ(lease->raw_metadata.front(), '{');
  EXPECT_EQ(lease->raw_metadata.back(), '}');
  EXPECT_NE(lease->raw_metadata.find(R"("labels":{"team":"sched"})"), std::string::npos);
}

TEST(LeaseTest, NullAndMissingSpecFieldsAreEmpty) {
  auto lease = DecodeLease(
      R"({"metadata":{"name":"x","resourceVersion":"1"},"spec":{"holderIdentity":null,"acquireTime":null}})");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(lease->record, LeaseRecord{});
  auto no_spec = DecodeLease(R"({"metadata":{"name":"x","resourceVersion":"1"}})");
  ASSERT_TRUE(no_spec.ok());
  EXPECT_EQ(no_spec->record, LeaseRecord{});
}

TEST(LeaseTest, RejectsMalformed) {
  for (const char* bad : {"", "[]", R"({"spec":{}})", R"({"metadata":{},"spec":{"leaseTransitions":"x"}})",
                          R"({"metadata":{"name":"x"},"spec":{"holderIdentity":3}})"}) {
    auto lease = DecodeLease(bad);
    EXPECT_FALSE(lease.ok()) << bad;
    if (!lease.ok()) {
      EXPECT_EQ(lease.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

TEST(LeaseTest, UpdateEchoesMetadataAndRoundTrips) {
  auto lease = DecodeLease(kServerLease);
  ASSERT_TRUE(lease.ok());
  LeaseRecord r{.holder_identity = "b \"quoted\"", .lease_duration_seconds = 4, .renew_time = "t",
                .lease_transitions = 4};
  std::string body = EncodeLeaseUpdate(lease->raw_metadata, r);
  EXPECT_NE(body.find(R"("acquireTime":null)"), std::string::npos);
  auto back = DecodeLease(body);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << body;
  EXPECT_EQ(back->record, r);
  EXPECT_EQ(back->resource_version, "4711");
  EXPECT_EQ(back->raw_metadata, lease->raw_metadata);
}

// A repeated "metadata" key: the last one is echoed back, and its resourceVersion (here:
// none) is the one reported, never another copy's.
TEST(LeaseTest, RepeatedMetadataKeyTakesTheLastOneWhole) {
  auto lease = DecodeLease(R"({"metadata":{"name":"a","resourceVersion":"1"},"spec":{},"metadata":{"name":"b"}})");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(lease->raw_metadata, R"({"name":"b"})");
  EXPECT_EQ(lease->resource_version, "");
  auto again = DecodeLease(EncodeLeaseUpdate(lease->raw_metadata, lease->record));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->resource_version, lease->resource_version);
}

TEST(LeaseTest, TrailingContentIsRejected) {
  auto lease = DecodeLease(R"({"metadata":{"name":"a","resourceVersion":"1"},"spec":{}} {"x":1})");
  ASSERT_FALSE(lease.ok());
  EXPECT_NE(lease.status().message().find("after the JSON value"), std::string::npos) << lease.status().ToString();
}

TEST(LeaseTest, NewLeaseNamesTheObject) {
  std::string body = EncodeNewLease("kube-system", "ksched", {.holder_identity = "a"});
  auto back = DecodeLease(body);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->raw_metadata, R"({"name":"ksched","namespace":"kube-system"})");
  EXPECT_EQ(back->resource_version, "");
  EXPECT_EQ(back->record.holder_identity, "a");
}

TEST(LeaseTest, Paths) {
  EXPECT_EQ(LeaseCollectionPath("kube-system"), "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases");
  EXPECT_EQ(LeasePath("ns", "l"), "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l");
}

TEST(LeaseTest, MicroTimeFormat) {
  using namespace std::chrono;
  Clock::wall_time t = sys_days(year(2021) / 2 / 3) + hours(4) + minutes(5) + seconds(6) + microseconds(7089);
  EXPECT_EQ(FormatMicroTime(t), "2021-02-03T04:05:06.007089Z");
  EXPECT_EQ(FormatMicroTime(sys_days(year(2026) / 1 / 1)), "2026-01-01T00:00:00.000000Z");
}

}  // namespace
}  // namespace ksched::leaderelection
