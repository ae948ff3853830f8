// kv/slab_source.hpp: huge slabs faulted in ahead of use, on another thread.
//
// A store that grows fast spends much of its time in the kernel zeroing the fresh pages
// its slabs fault in (clear_page): a large share of replaying a 1 GB log
// (docs/benchmarks.md, "Recovering 1 GB"). On a machine with a spare core that work can be
// done beside the writer: a SlabSource keeps a few slabs of SizeClassPool::kHugeSlab bytes
// allocated, advised for huge pages and touched, and a pool given the source takes them
// instead of allocating its own. When none is ready the pool allocates as usual, so the
// writer never waits for the helper.
//
// Ownership: a slab taken belongs to the taker (free it with std::free, as SizeClassPool
// does); slabs never taken are freed by the destructor.
// Thread safety: take() from any thread; the helper thread lives inside the object.
#pragma once

#include <cstddef>
#include <thread>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace strata::kv {

class SlabSource {
 public:
  // Starts the helper, which keeps up to `ahead` slabs ready.
  explicit SlabSource(std::size_t ahead = 8);
  // Stops the helper and frees the slabs nobody took.
  ~SlabSource();
  SlabSource(const SlabSource&) = delete;
  SlabSource& operator=(const SlabSource&) = delete;

  // A slab of SizeClassPool::kHugeSlab bytes aligned to its size, its pages already
  // faulted in; nullptr when none is ready.
  void* take();

  // Slabs handed out by take(), and slabs the helper made (for tests and diagnostics).
  std::size_t taken() const;
  std::size_t made() const;

 private:
  void run();

  const std::size_t ahead_;
  mutable base::Mutex mu_;
  base::CondVar wanted_;  // the helper waits here while enough slabs are ready
  std::vector<void*> ready_ GUARDED_BY(mu_);
  std::size_t taken_ GUARDED_BY(mu_) = 0;
  std::size_t made_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread helper_;
};

}  // namespace strata::kv
