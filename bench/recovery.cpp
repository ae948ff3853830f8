// strata-recovery: how long a durable database takes to open after writing N bytes of
// 16-byte keys and 100-byte values: (1) by replaying the log after a crash (the writer
// process ends with _exit, so no final checkpoint is written), (2) from the checkpoint a
// clean close writes.
//
//   strata-recovery [--random-keys] DIR [MEGABYTES]      (default 1024)
// DIR is emptied first and removed at the end, so it must be new, empty, or a strata
// database directory (a leftover of an earlier run): anything else is refused.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "strata/strata.hpp"

#include "cli.hpp"
#include "durability/file_names.hpp"
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace durability = strata::durability;

std::string key_of(std::uint64_t i) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "k%015llu",
                static_cast<unsigned long long>(i % 1000000000000000ull));
  return std::string(buf, 16);
}

// A bijection of the 64-bit integers (splitmix64's finalizer): consecutive i land far apart.
std::uint64_t scatter(std::uint64_t i) {
  i = (i ^ (i >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  i = (i ^ (i >> 27U)) * 0x94d049bb133111ebULL;
  return i ^ (i >> 31U);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::uint64_t dir_bytes(const std::filesystem::path& dir, const char* ext) {
  std::uint64_t n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ext) n += e.file_size();
  }
  return n;
}

constexpr const char* kDescription =
    "Writes MEGABYTES (default 1024) of 16-byte keys and 100-byte values to a durable\n"
    "database in DIR, 1,000 keys per transaction (in key order, or with --random-keys\n"
    "scattered over the key space, as random writes are), ends the writer without a\n"
    "checkpoint, then times the open that replays the log and the open from the\n"
    "checkpoint a clean close writes. DIR is emptied first and removed at the end: it\n"
    "must be new, empty, or a strata database.";

// Why `dir` may not be emptied, or "" when it may.
std::string refuse_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return "";
  if (!std::filesystem::is_directory(dir, ec)) return dir.string() + " is not a directory";
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() ||
        durability::parse_file_name(name).kind == durability::FileKind::other) {
      return dir.string() + " holds " + name +
             ", which is not a strata database's file: give a new or empty directory";
    }
  }
  return ec ? dir.string() + ": " + ec.message() : "";
}

}  // namespace

static int program_main(int argc, char** argv) {
  std::string dir_text;
  std::uint64_t megabytes = 1024;
  bool random_keys = false;
  CLI::App app(kDescription, "strata-recovery");
  bench::set_up(app);
  app.add_flag("--random-keys", random_keys, "write the keys scattered over the key space");
  app.add_option("DIR", dir_text, "the database directory (new, empty, or a strata database)")
      ->required();
  constexpr std::uint64_t kMaxMegabytes = std::uint64_t{1} << 20;  // 1 TB
  app.add_option("MEGABYTES", megabytes, "how much to write (default 1024)")
      ->transform(bench::number_in(std::uint64_t{1}, kMaxMegabytes));
  bench::parse_or_exit(app, argc, argv);
  const std::filesystem::path dir = dir_text;
  // The i-th key written: in order, or scattered over the key space (random writes).
  auto key = [random_keys](std::uint64_t i) { return key_of(random_keys ? scatter(i) : i); };
  if (const std::string why = refuse_dir(dir); !why.empty()) {
    std::fprintf(stderr, "strata-recovery: %s\n", why.c_str());
    return 2;
  }
  const std::uint64_t keys = megabytes * 1000 * 1000 / 116;
  std::filesystem::remove_all(dir);
  strata::Options o;
  o.path = dir;
  o.durability = strata::Durability::buffered;
  o.checkpoint_log_bytes = ~0ull;  // no checkpoint while writing: everything is in the log

  pid_t child = fork();
  if (child == 0) {
    strata::Database db = strata::Database::open(o);
    const std::string value(100, 'v');
    for (std::uint64_t i = 0; i < keys; i += 1000) {
      db.run([&](strata::Transaction& tr) {
        for (std::uint64_t j = i; j < std::min(keys, i + 1000); ++j) tr.set(key(j), value);
      });
    }
    _exit(0);  // a crash as far as the directory knows: no final checkpoint
  }
  int status = 0;
  waitpid(child, &status, 0);
  const double log_mb = static_cast<double>(dir_bytes(dir, ".log")) / 1e6;

  auto start = std::chrono::steady_clock::now();
  {
    strata::Database db = strata::Database::open(o);
    const double replay = seconds_since(start);
    std::printf("log replay: %.0f MB of log, %llu keys: opened in %.2f s (%.0f MB/s)\n", log_mb,
                static_cast<unsigned long long>(keys), replay, log_mb / replay);
    if (!db.run([&](strata::Transaction& tr) { return tr.get(key(keys - 1)); })) return 1;
    start = std::chrono::steady_clock::now();
  }
  const double close = seconds_since(start);
  const double ckpt_mb = static_cast<double>(dir_bytes(dir, ".ckpt")) / 1e6;
  start = std::chrono::steady_clock::now();
  {
    strata::Database db = strata::Database::open(o);
    const double load = seconds_since(start);
    std::printf("checkpoint: written at close in %.2f s (%.0f MB file); reopened in %.2f s\n",
                close, ckpt_mb, load);
    if (!db.run([&](strata::Transaction& tr) { return tr.get(key(keys / 2)); })) return 1;
  }
  std::filesystem::remove_all(dir);
  return 0;
}

int main(int argc, char** argv) {
  return bench::run_main("strata-recovery", [&] { return program_main(argc, argv); });
}
