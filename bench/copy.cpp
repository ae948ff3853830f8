// strata-copy: copies a durable strata database into a FoundationDB cluster, then reads
// both back and compares them (docs/cluster.md, "Moving data").
//
//   strata-copy DIR --cluster-file FILE [--client-library LIB] [--batch-bytes N]
//
// Every key below \xff is copied with its value, byte for byte, so a program that moves
// to the cluster finds its data where it left it. Each destination transaction carries
// at most --batch-bytes of keys and values (default 1 MB, at most 5 MB): well inside
// FoundationDB's 10,000,000-byte transactions, and quick enough for its 5 s limit. The
// source directory is locked while the copy runs (no other process can write it); the
// destination must hold no key below \xff (the copy refuses to mix two databases).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "strata/strata.hpp"

#include "cli.hpp"

namespace {

constexpr std::string_view kEnd = "\xff";

constexpr const char* kDescription =
    "Copies every key below \\xff of the durable strata database in DIR into the\n"
    "FoundationDB cluster FILE names, in transactions of at most --batch-bytes of keys\n"
    "and values, then reads both back and compares them. The destination must be empty\n"
    "below \\xff. Exits 0 when the copy is verified, 1 when it differs, 2 on a bad option\n"
    "or a destination that is not empty, 3 when a database cannot be opened.";

// Up to `bytes` of rows from `begin` on, in one transaction of `db`.
std::vector<strata::KeyValue> batch(strata::Database& db, const std::string& begin, int bytes) {
  return db.run([&](strata::Transaction& tr) {
    return tr.snapshot().get_range(begin, kEnd, {.target_bytes = bytes});
  });
}

std::string after(const std::string& key) { return key + '\0'; }

int copy(strata::Database& from, strata::Database& to, int batch_bytes) {
  const bool empty = to.run([](strata::Transaction& tr) {
    return tr.snapshot().get_range("", kEnd, {.limit = 1}).empty();
  });
  if (!empty) {
    std::fprintf(stderr, "strata-copy: the destination holds keys below \\xff already\n");
    return 2;
  }
  std::uint64_t rows = 0, bytes = 0, transactions = 0;
  for (std::string cursor;;) {
    const std::vector<strata::KeyValue> part = batch(from, cursor, batch_bytes);
    if (part.empty()) break;
    to.run([&](strata::Transaction& tr) {
      for (const strata::KeyValue& kv : part) tr.set(kv.key, kv.value);
    });
    ++transactions;
    for (const strata::KeyValue& kv : part) bytes += kv.key.size() + kv.value.size();
    rows += part.size();
    cursor = after(part.back().key);
  }
  std::printf("strata-copy: copied %llu keys (%llu bytes) in %llu transactions\n",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(transactions));
  // Read back: each batch of the source against the same span of the destination, then
  // nothing in the destination past the source's last key.
  std::string cursor;
  std::uint64_t checked = 0;
  for (;;) {
    const std::vector<strata::KeyValue> part = batch(from, cursor, batch_bytes);
    const std::string end = part.empty() ? std::string(kEnd) : after(part.back().key);
    const std::vector<strata::KeyValue> copied =
        to.run([&](strata::Transaction& tr) { return tr.snapshot().get_range(cursor, end); });
    if (copied != part) {
      std::fprintf(stderr,
                   "strata-copy: the copy differs from the source: %zu keys in the cluster "
                   "where the source has %zu, from the %llu-th key on\n",
                   copied.size(), part.size(), static_cast<unsigned long long>(checked));
      return 1;
    }
    checked += part.size();
    if (part.empty()) break;
    cursor = end;
  }
  std::printf("strata-copy: verified: the cluster holds the same %llu keys and values\n",
              static_cast<unsigned long long>(rows));
  return 0;
}

}  // namespace

static int program_main(int argc, char** argv) {
  std::string dir, cluster_file, client_library;
  int batch_bytes = 1'000'000;
  CLI::App app(kDescription, "strata-copy");
  bench::set_up(app);
  app.add_option("DIR", dir, "the durable strata database to copy")->required();
  app.add_option("--cluster-file", cluster_file, "the cluster to copy into")
      ->type_name("FILE")
      ->required();
  app.add_option("--client-library", client_library,
                 "FoundationDB's libfdb_c.so (default: libfdb_c.so from the loader's search "
                 "path)")
      ->type_name("FILE");
  app.add_option("--batch-bytes", batch_bytes,
                 "keys and values per destination transaction (default 1000000)")
      ->type_name("N")
      ->transform(bench::number_in(1, 5'000'000));
  bench::parse_or_exit(app, argc, argv);
  if (!std::filesystem::is_directory(dir)) {
    std::fprintf(stderr, "strata-copy: %s is not a directory\n", dir.c_str());
    return 2;
  }
  std::optional<strata::Database> from, to;
  try {
    strata::Options source;
    source.path = dir;
    from.emplace(strata::Database::open(source));
    strata::Options cluster;
    cluster.cluster_file = cluster_file;
    cluster.client_library = client_library;
    to.emplace(strata::Database::open(cluster));
  } catch (const strata::Error& e) {
    std::fprintf(stderr, "strata-copy: %s\n", e.what());
    return 3;
  }
  return copy(*from, *to, batch_bytes);
}

int main(int argc, char** argv) {
  return bench::run_main("strata-copy", [&] { return program_main(argc, argv); });
}
