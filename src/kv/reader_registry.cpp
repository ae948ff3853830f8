#include "kv/reader_registry.hpp"

#include <algorithm>
#include <span>
#include <unordered_set>

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace strata::kv {
namespace {

std::atomic<std::uint64_t> next_registry_id{1};

// membarrier(2) makes every running thread of the process execute a full memory barrier
// before it returns; the process registers once for the cheap "private expedited" form.
bool process_barrier_available() {
  static const bool kAvailable =
      ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  return kAvailable;
}

void process_barrier() { ::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0); }

// Registries that still exist, so a thread that exits returns its cached slots only to
// live ones. Touched only when a registry is made or destroyed and when a thread exits.
struct LiveRegistries {
  base::Mutex mu;
  std::unordered_set<std::uint64_t> ids GUARDED_BY(mu);
};
LiveRegistries& live_registries() {
  static auto* live = new LiveRegistries();  // never destroyed: threads exit after statics
  return *live;
}

// The calling thread's ThreadCache, or nullptr before its first acquire() and once the
// cache is destroyed at thread exit (a thread-local reader released after that gives its
// slot to the registry).
thread_local ReaderRegistry::ThreadCache* tls_cache = nullptr;

}  // namespace

// Per-thread free slots, per registry. Entries of destroyed registries are never
// dereferenced: lookups match on the id of a live registry, and ids are never reused.
struct ReaderRegistry::ThreadCache {
  struct Entry {
    std::uint64_t id;
    ReaderRegistry* registry;
    std::vector<Slot*> free;
  };
  std::vector<Entry> entries;

  Entry& entry_for(ReaderRegistry* r) {
    for (Entry& e : entries) {
      if (e.id == r->id_) return e;
    }
    if (entries.size() >= 16) prune();
    entries.push_back(Entry{r->id_, r, {}});
    return entries.back();
  }
  void prune() {
    LiveRegistries& live = live_registries();
    base::MutexLock lock(live.mu);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (!live.ids.contains(entries[i].id)) continue;
      if (kept != i) entries[kept] = std::move(entries[i]);
      ++kept;
    }
    entries.resize(kept);
  }
  ~ThreadCache() {
    tls_cache = nullptr;
    LiveRegistries& live = live_registries();
    base::MutexLock lock(live.mu);
    for (Entry& e : entries) {
      if (live.ids.contains(e.id)) return_slots(e.registry, e.free);
    }
  }
};

ReaderRegistry::ReaderRegistry()
    : id_(next_registry_id.fetch_add(1)), chunks_(new std::atomic<Slot*>[kMaxChunks]) {
  process_barrier_available();  // registers the process before any revocation needs it
  for (std::size_t i = 0; i < kMaxChunks; ++i) chunks_[i].store(nullptr);
  LiveRegistries& live = live_registries();
  base::MutexLock lock(live.mu);
  live.ids.insert(id_);
}

ReaderRegistry::~ReaderRegistry() {
  {
    LiveRegistries& live = live_registries();
    base::MutexLock lock(live.mu);
    live.ids.erase(id_);
  }
  for (std::size_t i = 0; i < kMaxChunks; ++i) delete[] chunks_[i].load();
}

ReaderRegistry::Slot* ReaderRegistry::acquire() {
  static thread_local ThreadCache cache;  // destroyed at thread exit, returning slots
  tls_cache = &cache;
  auto& entry = cache.entry_for(this);
  Slot* s = nullptr;
  if (!entry.free.empty()) {
    s = entry.free.back();
    entry.free.pop_back();
  } else {
    s = allocate_slot();
  }
  STRATA_INVARIANT(s->version.load(std::memory_order_relaxed) == kIdle);
  STRATA_INVARIANT(s->reading.load(std::memory_order_relaxed) == 0);
  return s;
}

void ReaderRegistry::release(Slot* slot) {
  STRATA_INVARIANT(slot->reading.load(std::memory_order_relaxed) == 0);  // no read under way
  withdraw(slot);
  // A thread keeps a few free slots; the rest go back to the registry, where any thread
  // takes them. Otherwise slots acquired on one thread and released on another (a
  // transaction handed between threads) would pile up in the releasing thread's cache
  // while the acquiring thread made a new slot each time, until kMaxChunks ran out.
  if (tls_cache != nullptr) {
    std::vector<Slot*>& free = tls_cache->entry_for(this).free;
    if (free.size() < kThreadCacheSlots) {
      free.push_back(slot);
      return;
    }
  }
  base::MutexLock lock(mu_);
  free_.push_back(slot);
}

void ReaderRegistry::release_if_alive(std::uint64_t id, ReaderRegistry* registry, Slot* slot) {
  // Not release(): its thread cache may take the live registries' lock.
  LiveRegistries& live = live_registries();
  base::MutexLock lock(live.mu);
  // A registry gone took its slots with it: they are not read.
  if (live.ids.contains(id)) return_slots(registry, std::span<Slot* const>(&slot, 1));
}

void ReaderRegistry::return_slots(ReaderRegistry* registry, std::span<Slot* const> slots) {
  for ([[maybe_unused]] Slot* slot : slots) {
    STRATA_INVARIANT(slot->version.load(std::memory_order_relaxed) == kIdle);
  }
  base::MutexLock registry_lock(registry->mu_);
  registry->free_.insert(registry->free_.end(), slots.begin(), slots.end());
}

ReaderRegistry::Slot* ReaderRegistry::allocate_slot() {
  base::MutexLock lock(mu_);
  if (!free_.empty()) {
    Slot* s = free_.back();
    free_.pop_back();
    return s;
  }
  std::size_t index = slot_count_.load(std::memory_order_relaxed);
  std::size_t chunk = index / kChunkSlots;
  if (chunk >= kMaxChunks) std::terminate();  // 262,144 concurrent readers
  if (chunks_[chunk].load(std::memory_order_relaxed) == nullptr) {
    chunks_[chunk].store(new Slot[kChunkSlots], std::memory_order_release);
  }
  Slot* s = &chunks_[chunk].load(std::memory_order_relaxed)[index % kChunkSlots];
  // seq_cst, like announce(): oldest() that misses this slot loaded the committed version
  // before the slot's reader did.
  slot_count_.store(index + 1, std::memory_order_seq_cst);
  return s;
}

namespace {

bool revoked(const ReaderRegistry::Slot& slot) {
  return slot.deadline.load(std::memory_order_seq_cst) == ReaderRegistry::kRevoked;
}

// The version a slot holds for collection: kIdle when none, or when it was revoked and
// no read at it is under way (then none can start).
// (The deadline is loaded after the version: a newer announcement's version comes with its
// own deadline, so a stale revocation is never charged to it.)
Version held_version(const ReaderRegistry::Slot& slot) {
  Version v = slot.version.load(std::memory_order_seq_cst);
  if (v == ReaderRegistry::kIdle || !revoked(slot)) return v;
  // Acquire: a read seen over happened before what collection then frees.
  if (slot.reading.load(std::memory_order_acquire) == 0) return ReaderRegistry::kIdle;
  return v;
}

}  // namespace

std::size_t ReaderRegistry::revoke_expired(std::int64_t now) {
  if (!process_barrier_available()) return 0;
  std::size_t revoked = 0;
  std::size_t n = slot_count_.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    Slot& slot = chunks_[i / kChunkSlots].load(std::memory_order_acquire)[i % kChunkSlots];
    Version v = slot.version.load(std::memory_order_acquire);
    // Only exact versions: an announcing reader is about to take a fresh one, and a
    // committing one has passed its age check and reads no more.
    if (v == kIdle || (v & (kTentative | kCommitting)) != 0) continue;
    // Acquire above: the deadline read is the one announced with v (or a later one).
    std::int64_t deadline = slot.deadline.load(std::memory_order_relaxed);
    if (deadline == kRevoked || deadline >= now) continue;
    // Fails if the reader has announced again since (a new deadline); if it announced
    // with this same deadline, that announcement has expired as well.
    if (slot.deadline.compare_exchange_strong(deadline, kRevoked, std::memory_order_seq_cst)) {
      ++revoked;
    }
  }
  // Every reader that had not seen a revocation by now had its `reading` flag visible: a
  // begin_read before the barrier is seen under way, one after it sees the revocation.
  if (revoked != 0) process_barrier();
  return revoked;
}

ReaderRegistry::Horizons ReaderRegistry::horizons(const std::atomic<Version>& committed) const {
  // Load the committed version before scanning (both seq_cst), pairing with announce().
  const Version now = committed.load(std::memory_order_seq_cst);
  Horizons result{now, now};
  std::size_t n = slot_count_.load(std::memory_order_seq_cst);
  for (std::size_t i = 0; i < n; ++i) {
    const Slot* chunk = chunks_[i / kChunkSlots].load(std::memory_order_acquire);
    Version v = held_version(chunk[i % kChunkSlots]);
    if (v == kIdle) continue;
    const Version version = v & ~(kTentative | kCommitting);
    result.resolving = std::min(result.resolving, version);
    if ((v & kCommitting) == 0) result.reading = std::min(result.reading, version);
  }
  return result;
}

void ReaderRegistry::snapshot(std::vector<Version>& exact, Version& tentative,
                              bool count_revoked) const {
  exact.clear();
  tentative = kIdle;
  std::size_t n = slot_count_.load(std::memory_order_seq_cst);
  for (std::size_t i = 0; i < n; ++i) {
    const Slot* chunk = chunks_[i / kChunkSlots].load(std::memory_order_acquire);
    const Slot& slot = chunk[i % kChunkSlots];
    Version v = held_version(slot);
    if (v == kIdle || (v & kCommitting) != 0) continue;
    // (A slot that changes between the two loads is left out at worst: the caller then
    // refuses what it would have allowed.)
    if (!count_revoked && revoked(slot)) continue;
    if ((v & kTentative) != 0) {
      tentative = std::min(tentative, v & ~kTentative);
    } else {
      exact.push_back(v);
    }
  }
  std::sort(exact.begin(), exact.end());
}

}  // namespace strata::kv
