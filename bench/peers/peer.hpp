// bench/peers/peer.hpp: the interface every engine in strata-peers implements, and the key
// helpers the recipes share.
//
// One Peer object serves one workload cell (or the two point-get cells, which share the
// loaded data); it lives in its own fresh directory under the run directory. Thread `t`
// (0 <= t < threads given to prepare()) calls only with its own index, so a peer may keep
// per-thread handles (SQLite connections, RocksDB transaction objects, LMDB read txns).
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace peers {

class Peer {
 public:
  virtual ~Peer() = default;
  // Per-thread handles for the next cell; called from the main thread before it starts.
  virtual void prepare(int threads) = 0;

  // Queue recipe: enqueue reads the last key and inserts after it (or takes its index from
  // an in-process counter, where the engine's users do: head_hint.hpp); dequeue reads the
  // first key and deletes it; each is one transaction with the peer's own retry loop.
  virtual void enqueue(int t, std::string_view value) = 0;
  virtual bool dequeue(int t, std::string& out) = 0;  // false: the queue was empty

  // Priority-queue recipe: keys (priority byte, counter, random bytes).
  virtual void pq_push(int t, int priority, std::string_view value) = 0;
  virtual bool pq_pop_min(int t, std::string& out) = 0;

  // Point operations: one set per writing transaction; a get in a read-only transaction.
  virtual void set(int t, std::string_view key, std::string_view value) = 0;
  virtual bool get(int t, std::string_view key, std::string& out) = 0;
  // Untimed bulk load of point_key(0..n-1) -> value, in big transactions.
  virtual void load(std::uint64_t n, std::string_view value) = 0;
  // Counters since the previous call, for the log (e.g. "commits 10, conflicts 2"); may be "".
  virtual std::string counters() { return {}; }
};

// A peer that was not built returns nullptr (main reports it as skipped).
std::unique_ptr<Peer> make_strata_peer(const std::filesystem::path& dir);
// Whether strata peers made from now on use the recipes' high-contention mode (default off).
void set_strata_high_contention(bool on);
bool strata_high_contention();
std::unique_ptr<Peer> make_lmdb_peer(const std::filesystem::path& dir);
std::unique_ptr<Peer> make_rocksdb_peer(const std::filesystem::path& dir);
std::unique_ptr<Peer> make_sqlite_peer(const std::filesystem::path& dir);
std::unique_ptr<Peer> make_wiredtiger_peer(const std::filesystem::path& dir);
std::unique_ptr<Peer> make_std_peer(const std::filesystem::path& dir);

constexpr std::size_t kKeyBytes = 16;
constexpr std::size_t kValueBytes = 100;
constexpr std::size_t kQueueSuffix = 20;  // random bytes after the queue index

inline void put_be64(char* p, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}
inline std::uint64_t get_be64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// A small fast generator (splitmix64); one per thread.
struct Rng {
  std::uint64_t s;
  explicit Rng(std::uint64_t seed) : s(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

inline Rng& thread_rng() {
  thread_local Rng rng(reinterpret_cast<std::uintptr_t>(&rng) * 0x2545f4914f6cdd1dull + 1);
  return rng;
}

inline void fill_random(char* p, std::size_t n) {
  Rng& r = thread_rng();
  while (n > 0) {
    std::uint64_t v = r.next();
    std::size_t k = n < 8 ? n : 8;
    std::memcpy(p, &v, k);
    p += k;
    n -= k;
  }
}

// Queue key: 8-byte big-endian index + 20 random bytes.
inline std::string queue_key(std::uint64_t index) {
  std::string k(8 + kQueueSuffix, '\0');
  put_be64(k.data(), index);
  fill_random(k.data() + 8, kQueueSuffix);
  return k;
}
// Priority-queue key: priority byte + 8-byte big-endian counter + 20 random bytes.
inline std::string pq_key(int priority, std::uint64_t count) {
  std::string k(1 + 8 + kQueueSuffix, '\0');
  k[0] = static_cast<char>(priority);
  put_be64(k.data() + 1, count);
  fill_random(k.data() + 9, kQueueSuffix);
  return k;
}
// The next counter for `priority` given the last key stored at or below it (or none).
inline std::uint64_t pq_next_count(int priority, const char* last, std::size_t size) {
  if (last == nullptr || size < 9 || static_cast<unsigned char>(last[0]) != priority) return 0;
  return get_be64(last + 1) + 1;
}
// Point key i: 16 bytes, "key:" + 12 decimal digits, written over `k`. The timed loops
// reuse one string, so that making a key allocates nothing (16 bytes are past
// std::string's inline buffer) and the harness's share of an operation stays small.
inline void write_point_key(std::string& k, std::uint64_t i) {
  k.assign("key:000000000000");
  for (int p = 15; p >= 4 && i > 0; --p) {
    k[static_cast<std::size_t>(p)] = static_cast<char>('0' + i % 10);
    i /= 10;
  }
}
inline std::string point_key(std::uint64_t i) {
  std::string k;
  write_point_key(k, i);
  return k;
}

// A fresh directory `dir/name`, emptied first; removed again by the destructor.
class ScratchDir {
 public:
  ScratchDir(const std::filesystem::path& dir, const std::string& name) : path_(dir / name) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace peers
