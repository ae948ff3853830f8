// bench/backlog.hpp: the bound on queue items in flight (enqueued, not yet dequeued) in the
// producer/consumer benchmarks (strata-stress's queue runs, strata-peers' producers/consumers).
//
// Producers wait for room, as on a bounded buffer, rather than spinning or running free.
// Unbounded, producers outrun the consumers by millions of items: the drain after the
// producing phase takes longer than the phase, memory grows with the backlog, and the rates
// measure the backlog more than the flow. Spinning producers would spend the cores of the
// engine being measured.
//
// Thread safety: enter() and leave() from any number of threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <semaphore>

namespace bench {

class Backlog {
 public:
  // limit 0: no bound.
  explicit Backlog(std::int64_t limit) {
    if (limit > 0) room_ = std::make_unique<std::counting_semaphore<>>(limit);
  }

  // Takes a place for one item, waiting while the backlog is full; false, without a place,
  // once `give_up()` says so (it is asked every few milliseconds of waiting).
  template <class GiveUp>
  bool enter(GiveUp give_up) {
    if (room_ == nullptr) return true;
    while (!room_->try_acquire_for(std::chrono::milliseconds(5))) {
      if (give_up()) return false;
    }
    return true;
  }

  // Gives back the place of one item delivered.
  void leave() {
    if (room_ != nullptr) room_->release();
  }

 private:
  std::unique_ptr<std::counting_semaphore<>> room_;
};

}  // namespace bench
