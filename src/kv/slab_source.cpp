#include "kv/slab_source.hpp"

#include <cstdlib>

#include "kv/size_class_pool.hpp"
#include <sys/mman.h>
#include <unistd.h>

namespace strata::kv {
namespace {

// A huge slab with every page written once, so that the kernel has zeroed it (as one huge
// page when it can) before the writer gets it. nullptr when memory is short: the pool
// then allocates for itself and reports the failure there.
void* make_slab() {
  constexpr std::size_t kBytes = SizeClassPool::kHugeSlab;
  void* memory = std::aligned_alloc(kBytes, kBytes);
  if (memory == nullptr) return nullptr;
#ifdef MADV_HUGEPAGE
  ::madvise(memory, kBytes, MADV_HUGEPAGE);
#endif
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  auto* bytes = static_cast<volatile unsigned char*>(memory);
  for (std::size_t offset = 0; offset < kBytes; offset += page) bytes[offset] = 0;
  return memory;
}

}  // namespace

SlabSource::SlabSource(std::size_t ahead) : ahead_(ahead), helper_([this] { run(); }) {}

SlabSource::~SlabSource() {
  {
    base::MutexLock lock(mu_);
    stop_ = true;
  }
  wanted_.notify_one();
  helper_.join();
  for (void* slab : ready_) std::free(slab);
}

void* SlabSource::take() {
  void* slab = nullptr;
  {
    base::MutexLock lock(mu_);
    if (ready_.empty()) return nullptr;
    slab = ready_.back();
    ready_.pop_back();
    ++taken_;
  }
  wanted_.notify_one();
  return slab;
}

std::size_t SlabSource::taken() const {
  base::MutexLock lock(mu_);
  return taken_;
}

std::size_t SlabSource::made() const {
  base::MutexLock lock(mu_);
  return made_;
}

void SlabSource::run() {
  base::MutexLock lock(mu_);
  ready_.reserve(ahead_);
  for (;;) {
    while (!stop_ && ready_.size() >= ahead_) wanted_.wait(lock);
    if (stop_) return;
    lock.unlock();
    void* slab = make_slab();
    lock.lock();
    if (slab == nullptr) return;  // out of memory: leave the allocating to the pools
    ready_.push_back(slab);
    ++made_;
  }
}

}  // namespace strata::kv
