// An Authorizer (the secure server's token check) whose decisions the test scripts, and
// which counts the calls it gets.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <utility>

#include "pkg/server/server.h"

namespace ksched::testing {

class FakeAuthorizer : public server::Authorizer {
 public:
  using Decide =
      std::function<StatusOr<bool>(const std::string& token, const std::string& path, const std::string& verb)>;
  explicit FakeAuthorizer(Decide decide) : decide_(std::move(decide)) {}

  StatusOr<bool> Allowed(const std::string& token, const std::string& path, const std::string& verb) override {
    ++calls;
    return decide_(token, path, verb);
  }

  std::atomic<int> calls{0};

 private:
  Decide decide_;
};

}  // namespace ksched::testing
