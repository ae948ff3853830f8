// kv/reader_registry.hpp: which read versions live transactions hold.
//
// Each transaction that reads holds a Slot announcing its read version. The writer asks
// for the oldest announced version (`oldest`), which is both
//   - the garbage-collection watermark: versions older than it can never be read, and
//   - the reclamation bound: memory unlinked while the committed version was T may be
//     freed once oldest() > T, because every reader that might still hold it announced
//     a version <= T.
// A transaction that has finished reading and is committing marks its slot (begin_commit):
// it no longer counts for either, only for the history its commit is checked against
// (`horizons().resolving`).
// Slots sit on their own cache lines and are handed out from a per-thread cache, so a
// read-only transaction writes no cache line that other threads write. A thread keeps at
// most kThreadCacheSlots free slots per registry: the slot count stays near the most
// readers ever active at once, even when slots are released on other threads than the
// ones that acquired them.
//
// A reader may announce with a deadline (a transaction: its MVCC window). Past it, the
// writer may revoke the version (`revoke_expired`), so that a transaction left idle does
// not hold every later version's garbage. Such a reader brackets each read with
// begin_read/end_read: a read under way keeps the version, a read begun after the
// revocation is refused, and the reader reports transaction_too_old. Readers with no
// deadline (checkpoints, watches) are never revoked.
//
// Thread safety: acquire/release/announce from any thread; oldest() from any thread;
// begin_read/end_read by the slot's one reader thread at a time.
// A committer may also hold its commit's version in its slot (hold), announced before the
// version is published, for as long as it keeps the slot: no reader reads there.
// Invariants: a slot's announced version never exceeds the version its reader reads at;
// the committed version an announcement reads never goes back; a slot is idle (no version,
// no read under way) when it is handed out and when it is given back. The last two are
// checked (STRATA_INVARIANT, base/invariant.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "strata/types.hpp"

#include "base/invariant.hpp"
#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace strata::kv {

class ReaderRegistry {
 public:
  static constexpr Version kIdle = std::numeric_limits<Version>::max();

  // No deadline: the version is never revoked.
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  // The deadline of a revoked version. Revocation marks the deadline, not the version: an
  // announcement replaces its deadline, so a writer that read an expired one cannot revoke
  // a later announcement that happens to hold the same version (its compare-and-swap
  // finds the new deadline), unless that announcement has the same deadline, expired too.
  static constexpr std::int64_t kRevoked = std::numeric_limits<std::int64_t>::min();

  struct alignas(64) Slot {
    std::atomic<Version> version{kIdle};
    // When the version may be revoked (base::CoarseClock nanoseconds), kNever, or
    // kRevoked once it has been.
    std::atomic<std::int64_t> deadline{kNever};
    // Whether a read is under way (begin_read .. end_read).
    std::atomic<std::uint32_t> reading{0};
  };

  ReaderRegistry();
  ~ReaderRegistry();
  ReaderRegistry(const ReaderRegistry&) = delete;
  ReaderRegistry& operator=(const ReaderRegistry&) = delete;

  // An idle slot for one reader; give it back with release().
  Slot* acquire();
  void release(Slot* slot);
  // This registry's identity: unlike its address, never reused.
  std::uint64_t id() const { return id_; }
  // Gives `slot` back to `registry` if the registry with `id` still exists; else does
  // nothing (the slot went with it). For a slot kept while idle by a holder that does not
  // keep its registry alive (a thread's spare transaction). REQUIRES: the slot is
  // withdrawn (a slot of a destroyed registry must not be touched).
  static void release_if_alive(std::uint64_t id, ReaderRegistry* registry, Slot* slot);

  // A slot holding (v | kTentative) is announcing: its reader will read at v or later.
  // Without the bit the slot holds exactly the version its reader reads at.
  static constexpr Version kTentative = Version{1} << 61;

  // Announces a read version in `slot` and returns it: the newest value of `committed`,
  // ordered so that a concurrent oldest() either sees the slot or returns a version no
  // newer than the one returned here, and a concurrent snapshot() sees the slot either
  // as tentative (at most the version returned), as exactly that version, or not at all
  // (and then the version returned is at least the committed version it loaded first).
  // `deadline` (kNever: none) is when the writer may revoke it.
  static Version announce(Slot* slot, const std::atomic<Version>& committed,
                          std::int64_t deadline = kNever) {
    // Relaxed: the seq_cst stores below publish it with the version.
    slot->deadline.store(deadline, std::memory_order_relaxed);
    Version guess = committed.load(std::memory_order_acquire);
    slot->version.store(guess | kTentative, std::memory_order_seq_cst);
    Version v = committed.load(std::memory_order_seq_cst);
    STRATA_INVARIANT(v >= guess);  // published versions only grow
    slot->version.store(v, std::memory_order_release);
    return v;
  }
  // Writer: announces `version` in `slot` with `deadline`, for a committer that keeps its
  // commit's version readable while it holds the slot. REQUIRES: `version` is not
  // published yet (no collection can have passed it), and the slot's reader reads no more.
  static void hold(Slot* slot, Version version, std::int64_t deadline) {
    slot->deadline.store(deadline, std::memory_order_relaxed);
    slot->version.store(version, std::memory_order_release);
  }
  // Withdraws the announcement (the slot stays owned).
  static void withdraw(Slot* slot) { slot->version.store(kIdle, std::memory_order_release); }

  // A slot holding (v | kCommitting) belongs to a transaction that read at v, reads no
  // more, and is committing: its commit is still checked against the writes after v, so
  // the conflict history above v must stay (Horizons::resolving), but collection may free
  // every record that only v could see (Horizons::reading). A committer waiting for the
  // commit lock or for the log then holds no garbage.
  static constexpr Version kCommitting = Version{1} << 60;
  // Marks the slot's exact version as committing. REQUIRES: the slot holds an exact
  // version, and its reader has finished every read (release: those reads happen before
  // a collector that sees the mark frees what they read).
  static void begin_commit(Slot* slot) {
    const Version v = slot->version.load(std::memory_order_relaxed);
    STRATA_INVARIANT(v != kIdle && (v & (kTentative | kCommitting)) == 0);
    slot->version.store(v | kCommitting, std::memory_order_release);
  }

  // Starts a read at the announced version: false, with nothing started, when the writer
  // has revoked it. Either the writer sees the read under way and keeps the version, or
  // the read sees the revocation: the writer makes every thread pass a full barrier
  // between its revocations and its first look at `reading` (membarrier(2)), so the
  // reader's store and load here need no fence of their own (a locked instruction on
  // every read would be a large share of a point read's cost).
  static bool begin_read(Slot* slot) {
    slot->reading.store(1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // keeps the compiler's order
    if (slot->deadline.load(std::memory_order_relaxed) != kRevoked) return true;
    end_read(slot);
    return false;
  }
  // Release: the writer that sees the read over also sees everything it read.
  static void end_read(Slot* slot) {
    STRATA_INVARIANT(slot->reading.load(std::memory_order_relaxed) == 1);
    slot->reading.store(0, std::memory_order_release);
  }

  // Writer: revokes every version whose deadline is before `now` (base::CoarseClock
  // nanoseconds). Returns how many it revoked. Revokes nothing where the kernel offers no
  // process-wide barrier (membarrier's private expedited command).
  std::size_t revoke_expired(std::int64_t now);

  // The oldest announced versions, or committed.load() when there are none. A revoked
  // version counts only while a read at it is under way. (The same holds for snapshot().)
  struct Horizons {
    Version reading;    // the oldest a reader may read at: collection's bound
    Version resolving;  // the oldest a commit may be checked at, committing ones too
  };
  Horizons horizons(const std::atomic<Version>& committed) const;
  // horizons().reading.
  Version oldest(const std::atomic<Version>& committed) const {
    return horizons(committed).reading;
  }
  // Every announced version: `exact` gets the versions readers read at (sorted; not those
  // of committing transactions, which read no more), and
  // `tentative` the lowest version a reader still announcing may read at (kIdle if none).
  // A reader in neither reads at the committed version loaded after this call or later.
  // Without `count_revoked`, a revoked version is left out even while a read at it is
  // under way (such a read is being refused, or ends soon): a revoked reader may not
  // vouch for its version to another (MvccStore::pin_at).
  void snapshot(std::vector<Version>& exact, Version& tentative, bool count_revoked = true) const;

  struct ThreadCache;  // per-thread free slots (reader_registry.cpp)

 private:
  static constexpr std::size_t kChunkSlots = 64;
  static constexpr std::size_t kThreadCacheSlots = 8;  // free slots a thread keeps per registry
  static constexpr std::size_t kMaxChunks = 4096;

  Slot* allocate_slot();
  // Puts withdrawn `slots` on `registry`'s free list. The caller holds the lock of the
  // live registries and found `registry` among them (reader_registry.cpp), so it cannot
  // finish its destructor meanwhile.
  static void return_slots(ReaderRegistry* registry, std::span<Slot* const> slots);

  const std::uint64_t id_;
  std::atomic<std::size_t> slot_count_{0};
  std::unique_ptr<std::atomic<Slot*>[]> chunks_;
  base::Mutex mu_;                           // held to take from free_ or to allocate a new chunk
  std::vector<Slot*> free_ GUARDED_BY(mu_);  // slots given back by threads that exited
};

}  // namespace strata::kv
