#include "recipes/contention.hpp"

#include <algorithm>
#include <cstddef>
#include <functional>

namespace strata::recipes_detail {

bool ContentionHints::fast_path_open() {
  int left = closed_for_.load(std::memory_order_relaxed);
  while (left > 0) {
    if (closed_for_.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
      return false;
    }
  }
  return true;
}

void ContentionHints::fast_path_lost() {
  // Poppers that lose together close the gate once: only a loss after it reopened doubles.
  if (closed_for_.load(std::memory_order_relaxed) > 0) return;
  int penalty = penalty_.load(std::memory_order_relaxed);
  closed_for_.store(penalty, std::memory_order_relaxed);
  penalty_.store(std::min(2 * penalty, kMaxPenalty), std::memory_order_relaxed);
}

void ContentionHints::fast_path_won() {
  int penalty = penalty_.load(std::memory_order_relaxed);
  penalty_.store(std::max(kFirstPenalty, penalty - 1), std::memory_order_relaxed);
}

std::chrono::microseconds ContentionHints::help_bound(std::chrono::microseconds floor) const {
  return std::max(floor, std::chrono::microseconds(help_bound_us_.load(std::memory_order_relaxed)));
}

void ContentionHints::pass_lost(std::chrono::microseconds used) {
  std::int64_t doubled = std::min<std::int64_t>(2 * used.count(), kMaxHelpBound.count());
  // Raise only: several losers of one race must not undo each other.
  std::int64_t current = help_bound_us_.load(std::memory_order_relaxed);
  while (current < doubled &&
         !help_bound_us_.compare_exchange_weak(current, doubled, std::memory_order_relaxed)) {
  }
  fast_path_lost();
}

void ContentionHints::pass_landed() {
  std::int64_t current = help_bound_us_.load(std::memory_order_relaxed);
  help_bound_us_.store(current - current / 32, std::memory_order_relaxed);
}

void ContentionHints::reset() {
  closed_for_.store(0, std::memory_order_relaxed);
  penalty_.store(kFirstPenalty, std::memory_order_relaxed);
  help_bound_us_.store(0, std::memory_order_relaxed);
}

ContentionHints& contention_hints(std::string_view requests_prefix) {
  struct alignas(64) Slot {
    ContentionHints hints;
  };
  static constexpr std::size_t kSlots = 64;
  static Slot slots[kSlots];
  return slots[std::hash<std::string_view>{}(requests_prefix) % kSlots].hints;
}

}  // namespace strata::recipes_detail
