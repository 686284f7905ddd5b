// The invariants the Pod, Node and resource.k8s.io fuzz targets check alike on one
// input: the object decoder (in place and from a copy), a re-encode round trip (for
// kinds with an encoder), the list decoder and the watch-event decoder, each object
// then handed to the target's own `exercise`.
#pragma once

#include <string>
#include <string_view>

#include "pkg/api/json.h"
#include "tests/fuzz/fuzz_util.h"

namespace ksched::fuzz {

// `Codec` names the kind's functions: static One / List / Event (decoders taking a
// parser and JsonText) and, if the kind has an encoder, Encode.
template <typename Codec, typename Exercise>
void CheckObjectDecoders(api::JsonParser& parser, std::string_view input, Exercise exercise) {
  std::string text(input);
  auto obj = Codec::One(parser, api::JsonText::Padded(text));
  // libFuzzer's buffer has no padding after the input: the decoder must copy it.
  auto copied = Codec::One(parser, api::JsonText(input));
  Check(obj.ok() == copied.ok(), "in-place and copied decodes agree");
  if (obj.ok()) {
    Check(**obj == **copied, "in-place and copied decodes give equal objects");
    exercise(**obj);
    if constexpr (requires { Codec::Encode(**obj); }) {
      std::string encoded = Codec::Encode(**obj);
      auto again = Codec::One(parser, api::JsonText::Padded(encoded));
      Check(again.ok(), "the encoder's output decodes", again.ok() ? "" : again.status().message());
      Check(**again == **obj, "an encode round trip gives an equal object", encoded);
    }
  }

  auto list = Codec::List(parser, api::JsonText(text));
  if (list.ok()) {
    for (const auto& item : list->items) {
      Check(item != nullptr, "list items are not null");
      exercise(*item);
    }
  }

  auto event = Codec::Event(parser, api::JsonText(text));
  if (event.ok()) {
    const auto type = event->type;
    if (type == api::WatchEventType::kAdded || type == api::WatchEventType::kModified ||
        type == api::WatchEventType::kDeleted) {
      Check(event->object != nullptr, "ADDED/MODIFIED/DELETED events carry an object");
    }
    if (event->object) {
      Check(event->resource_version == event->object->metadata.resource_version,
            "the event's resourceVersion is its object's");
      exercise(*event->object);
    }
  }
}

}  // namespace ksched::fuzz
