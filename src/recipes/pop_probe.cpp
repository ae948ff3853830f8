#include "recipes/pop_probe.hpp"

namespace strata::recipes_detail {

namespace pop_probe_internal {
std::atomic<PopProbe*> installed{nullptr};
}  // namespace pop_probe_internal

void install_pop_probe(PopProbe* probe) {
  pop_probe_internal::installed.store(probe, std::memory_order_release);
}

}  // namespace strata::recipes_detail
