#include "engine/watch_registry.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace strata::engine {
namespace {

std::shared_ptr<WatchState> armed(WatchRegistry& registry, std::string key) {
  auto watch = std::make_shared<WatchState>(std::move(key), std::string("seen"));
  registry.arm(watch, [](std::string_view) { return std::optional<std::string>("seen"); });
  EXPECT_EQ(watch->status(), WatchState::Status::armed);
  return watch;
}

// Watches cancelled while their key never changes leave the registry long before the
// limit: a database with no armed watch held up to max_watches dead ones (1.3 GB at the
// C API's 1,000,000 with 1 KB values).
TEST(WatchRegistry, CancelledWatchesDoNotPileUp) {
  WatchRegistry registry;
  registry.set_limit(WatchRegistry::kMaxWatchesCeiling);
  std::size_t most = 0;
  for (int i = 0; i < 100'000; ++i) {
    armed(registry, "k")->finish(WatchState::Status::cancelled);
    most = std::max(most, registry.size());
  }
  EXPECT_LE(most, 128u);
}

// ... and do not outnumber the armed ones by much; the armed ones stay.
TEST(WatchRegistry, CancelledWatchesAreDroppedBesideArmedOnes) {
  WatchRegistry registry;
  registry.set_limit(WatchRegistry::kMaxWatchesCeiling);
  std::vector<std::shared_ptr<WatchState>> live;
  for (int i = 0; i < 1000; ++i) live.push_back(armed(registry, "live" + std::to_string(i)));
  std::size_t most = 0;
  for (int i = 0; i < 100'000; ++i) {
    armed(registry, "k")->finish(WatchState::Status::cancelled);
    most = std::max(most, registry.size());
  }
  EXPECT_LE(most, 2 * live.size() + 1);
  EXPECT_GE(registry.size(), live.size());
  for (const auto& w : live) EXPECT_EQ(w->status(), WatchState::Status::armed);
}

}  // namespace
}  // namespace strata::engine
