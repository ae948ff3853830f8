// strata-peers: the same workloads against strata and the engines a user would pick
// instead (LMDB, RocksDB OptimisticTransactionDB, SQLite, WiredTiger, a mutex-protected std
// container), in one run; prints ops/s and the ratio strata/peer per workload, and a CSV.
//
// Every engine runs without durability (no sync, no log; files on a tmpfs); each
// workload cell gets a fresh instance per engine in its own directory, and the engines
// take turns in short rounds (--rounds; within a round, in shorter turns with --turn), so
// each ratio compares engines measured at the same time. See bench/peers/plot.gp for the
// chart made from the CSV.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../backlog.hpp"
#include "../cli.hpp"
#include "../core_latency.hpp"
#include "peer.hpp"
#include <unistd.h>

namespace peers {
namespace {

using Clock = std::chrono::steady_clock;

struct PeerInfo {
  const char* name;   // column name
  const char* label;  // table heading
  std::unique_ptr<Peer> (*make)(const std::filesystem::path&);
  const char* missing;   // why it may be absent
  const char* settings;  // how it is configured, printed with the results
};

// Every engine runs without durability: nothing is synced and nothing is logged, so each
// measures its in-memory path (files, where an engine needs them, are on a tmpfs).
const PeerInfo kPeers[] = {
    {"strata", "strata", make_strata_peer, "",
     "in memory (no WAL, no checkpoints); serializable optimistic transactions"},
    {"lmdb", "LMDB", make_lmdb_peer, "liblmdb-dev was not found when configuring",
     "tmpfs; MDB_NOSYNC|MDB_NOMETASYNC|MDB_WRITEMAP; one writer at a time"},
    {"rocksdb", "RocksDB-OTDB", make_rocksdb_peer, "librocksdb-dev was not found when configuring",
     "OptimisticTransactionDB on tmpfs; WAL off, no sync; queues in a column family with a "
     "1 MiB write buffer, SingleDelete, head hint (iterate_lower_bound)"},
    {"sqlite", "SQLite", make_sqlite_peer, "libsqlite3-dev was not found when configuring",
     "tmpfs; journal_mode=WAL, synchronous=OFF; BEGIN IMMEDIATE"},
    {"wiredtiger", "WiredTiger", make_wiredtiger_peer,
     "libwiredtiger-dev was not found when configuring",
     "in_memory=true (no log, no checkpoints); snapshot isolation; session and cursors per "
     "thread; head hint (search_near)"},
    {"mutex_std", "mutex+std", make_std_peer, "",
     "one std::mutex around std::deque/multimap/map: the ceiling (no durability, no MVCC, "
     "readers serialized)"},
};
constexpr std::size_t kNumPeers = sizeof(kPeers) / sizeof(kPeers[0]);

enum class Kind { pairs, prodcons, pq_pairs, point_set, point_get, churn };

struct Workload {
  const char* id;
  const char* title;
  Kind kind;
  int clients;
  const char* unit;
};

const Workload kWorkloads[] = {
    {"queue-pairs-1", "queue enqueue+dequeue pairs", Kind::pairs, 1, "pairs/s"},
    {"queue-pairs-8", "queue enqueue+dequeue pairs", Kind::pairs, 8, "pairs/s"},
    {"queue-prodcons-8", "queue producers/consumers 4+4", Kind::prodcons, 8, "items/s"},
    {"pq-pairs-1", "priority-queue push+pop_min pairs", Kind::pq_pairs, 1, "pairs/s"},
    {"point-set-1", "point-set transactions", Kind::point_set, 1, "txn/s"},
    {"point-get-ro-1", "point-get read-only transactions", Kind::point_get, 1, "gets/s"},
    {"point-get-2", "point gets", Kind::point_get, 2, "gets/s"},
    {"queue-churn-1", "queue churn, constant live set of 10 k, 10 sampled windows", Kind::churn, 1,
     "pairs/s"},
};
constexpr std::size_t kNumWorkloads = sizeof(kWorkloads) / sizeof(kWorkloads[0]);

struct Config {
  double seconds = 3.0;
  int rounds = 3;   // each cell's time is split into this many rounds, engines interleaved
  double turn = 0;  // seconds of each engine's turns within a round; 0: one turn a round
  std::uint64_t keys = 1000000;
  std::string csv;
  std::filesystem::path dir;
  std::vector<bool> peers = std::vector<bool>(kNumPeers, true);
  std::vector<bool> workloads = std::vector<bool>(kNumWorkloads, true);
};

struct Cell {
  std::optional<double> ops;  // ops per second; empty: skipped or failed
  std::string note;           // verification failure or error
  double seconds = 0;         // the time the rate is over
};

// One engine's rounds of one workload: the rate of each, and what failed.
struct Rounds {
  std::vector<double> rates;
  std::string note;
  bool error = false;

  // The cell's figure: the median round (of an even count, the mean of the middle two).
  Cell cell() const {
    if (error || rates.empty()) return Cell{std::nullopt, note};
    return Cell{median(rates), note};
  }
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
};

// Runs body(t, stop) on `threads` threads for `seconds`; returns total ops / window, where an
// operation in flight at the stop counts whole (at most one per thread), and the window.
Cell timed(int threads, double seconds,
           const std::function<std::uint64_t(int, const std::atomic<bool>&)>& body) {
  std::atomic<bool> go{false}, stop{false};
  std::vector<std::uint64_t> ops(static_cast<std::size_t>(threads), 0);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      try {
        ops[static_cast<std::size_t>(t)] = body(t, stop);
      } catch (...) {
        errors[static_cast<std::size_t>(t)] = std::current_exception();
        stop.store(true);
      }
    });
  }
  auto start = Clock::now();
  go.store(true, std::memory_order_release);
  auto deadline = start + std::chrono::duration<double>(seconds);
  while (!stop.load() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop.store(true);
  // The window is up to the stop signal. A client may finish its last operation well after
  // it (one of strata's retry backoffs sleeps up to 1 s, as FoundationDB's do); counting that
  // idle tail as measured time would make many-client cells read far low in short rounds.
  const double window = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& th : pool) th.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  std::uint64_t total = 0;
  for (auto n : ops) total += n;
  return Cell{static_cast<double>(total) / window, "", window};
}

// A 100-byte value whose first 8 bytes carry a unique id (client << 40 | sequence).
std::string make_value(std::uint64_t id) {
  std::string v(kValueBytes, 'v');
  put_be64(v.data(), id);
  return v;
}
std::uint64_t value_id(const std::string& v) { return v.size() >= 8 ? get_be64(v.data()) : 0; }

// What went in and came out, per thread, for the exactly-once check: counts, sums of the
// ids and sums of a 64-bit mix of them (a loss and a duplicate whose ids sum alike still
// differ there). Each thread's account is a cache line of its own: clients of a cell
// update theirs on every operation.
class Ledger {
 public:
  explicit Ledger(int threads) : accounts_(static_cast<std::size_t>(threads)) {}
  void put(int thread, std::uint64_t id) { accounts_[index(thread)].in.add(id); }
  void took(int thread, std::uint64_t id) { accounts_[index(thread)].out.add(id); }
  void missed(int thread) { ++accounts_[index(thread)].misses; }

  static std::uint64_t total(const std::vector<std::uint64_t>& v) {
    std::uint64_t s = 0;
    for (auto x : v) s += x;
    return s;
  }
  // Adds whatever is left in the queue, then checks that in == out.
  std::string verify(const std::function<bool(std::string&)>& drain) {
    Flow in, out;
    std::uint64_t misses = 0;
    for (const Account& a : accounts_) {
      in.merge(a.in);
      out.merge(a.out);
      misses += a.misses;
    }
    std::string value;
    while (drain(value)) out.add(value_id(value));
    std::ostringstream msg;
    if (in.count != out.count || in.sum != out.sum || in.mixed != out.mixed) {
      msg << "LOST/DUPLICATED: in " << in.count << " out " << out.count << "; ";
    }
    if (misses != 0) msg << misses << " empty pops in pairs; ";
    return msg.str();
  }

 private:
  struct Flow {
    std::uint64_t count = 0, sum = 0, mixed = 0;
    void add(std::uint64_t id) {
      ++count;
      sum += id;
      mixed += mix(id);
    }
    void merge(const Flow& f) {
      count += f.count;
      sum += f.sum;
      mixed += f.mixed;
    }
    // SplitMix64's finalizer.
    static std::uint64_t mix(std::uint64_t z) {
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return z ^ (z >> 31);
    }
  };
  struct alignas(64) Account {
    Flow in, out;
    std::uint64_t misses = 0;
  };
  static std::size_t index(int thread) { return static_cast<std::size_t>(thread); }
  std::vector<Account> accounts_;
};

Cell run_pairs(Peer& p, const Workload& w, double seconds, bool priority) {
  p.prepare(w.clients);
  Ledger ledger(w.clients);
  Cell cell = timed(w.clients, seconds, [&](int t, const std::atomic<bool>& stop) {
    std::uint64_t seq = 0;
    std::string out;
    Rng rng(0x51ed + static_cast<std::uint64_t>(t));
    while (!stop.load(std::memory_order_relaxed)) {
      std::uint64_t id = (static_cast<std::uint64_t>(t + 1) << 40) | ++seq;
      std::string value = make_value(id);
      bool got;
      if (priority) {
        p.pq_push(t, static_cast<int>(rng.next() % 100), value);
        got = p.pq_pop_min(t, out);
      } else {
        p.enqueue(t, value);
        got = p.dequeue(t, out);
      }
      ledger.put(t, id);
      if (got) {
        ledger.took(t, value_id(out));
      } else {
        ledger.missed(t);
      }
    }
    return seq;
  });
  cell.note = ledger.verify(
      [&](std::string& out) { return priority ? p.pq_pop_min(0, out) : p.dequeue(0, out); });
  return cell;
}

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

// Churn: a queue holding a constant live set; one client enqueues at the tail and dequeues
// at the head, over ten equal windows. `drift` reports the last window against the first,
// for the rate and for the process's RSS (the target: both within 10 %).
Cell run_churn(Peer& p, double seconds, std::string& drift) {
  constexpr std::uint64_t kLive = 10'000;
  constexpr int kWindows = 10;
  p.prepare(1);
  std::uint64_t id = 1;
  for (std::uint64_t i = 0; i < kLive; ++i) p.enqueue(0, make_value(id++));
  std::vector<double> rate(kWindows);
  std::vector<long> rss(kWindows);
  std::uint64_t total = 0;
  std::string out;
  std::uint64_t next_out = 1;  // one client: the items come out in the order they went in
  for (int window = 0; window < kWindows; ++window) {
    auto start = Clock::now();
    auto end = start + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(seconds / kWindows));
    std::uint64_t pairs = 0;
    while (Clock::now() < end) {
      p.enqueue(0, make_value(id++));
      if (!p.dequeue(0, out)) return Cell{0.0, "the queue ran empty during churn"};
      if (value_id(out) != next_out++) {
        return Cell{0.0, "LOST/DUPLICATED/REORDERED: dequeued item " +
                             std::to_string(value_id(out)) + ", expected " +
                             std::to_string(next_out - 1) + "; "};
      }
      ++pairs;
    }
    rate[window] =
        static_cast<double>(pairs) / std::chrono::duration<double>(Clock::now() - start).count();
    rss[window] = rss_kib();
    total += pairs;
  }
  std::ostringstream d;
  d << std::fixed << std::setprecision(1) << "rate " << (rate[kWindows - 1] / rate[0] - 1) * 100
    << " %, RSS "
    << (static_cast<double>(rss[kWindows - 1]) / static_cast<double>(rss[0]) - 1) * 100
    << " % (last window vs first)";
  drift = d.str();
  return Cell{static_cast<double>(total) / seconds, "", seconds};
}

// Producers wait while 2,000 items are in flight (bench/backlog.hpp), asleep rather than
// spinning. The cell's rate moves with the host more than with any engine: the vCPUs'
// cache-line round trip (core_latency.hpp) is one factor, not the only one.
Cell run_prodcons(Peer& p, const Workload& w, double seconds) {
  constexpr std::int64_t kMaxInFlight = 2000;  // the backlog producers wait beyond
  const int producers = w.clients / 2;
  p.prepare(w.clients);
  Ledger ledger(w.clients);
  bench::Backlog backlog(kMaxInFlight);
  Cell cell = timed(w.clients, seconds, [&](int t, const std::atomic<bool>& stop) {
    std::uint64_t done = 0;
    std::string out;
    if (t < producers) {
      while (!stop.load(std::memory_order_relaxed)) {
        if (!backlog.enter([&] { return stop.load(std::memory_order_relaxed); })) break;
        std::uint64_t id = (static_cast<std::uint64_t>(t + 1) << 40) | ++done;
        p.enqueue(t, make_value(id));
        ledger.put(t, id);
      }
      return std::uint64_t{0};  // throughput counts delivered items
    }
    while (!stop.load(std::memory_order_relaxed)) {
      if (!p.dequeue(t, out)) {
        std::this_thread::yield();
        continue;
      }
      backlog.leave();
      ++done;
      ledger.took(t, value_id(out));
    }
    return done;
  });
  cell.note = ledger.verify([&](std::string& out) { return p.dequeue(0, out); });
  return cell;
}

// Client t draws its keys from rngs[t], and leaves it where it stopped: a round's turns
// go on with one sequence of keys.
Cell run_point(Peer& p, const Workload& w, double seconds, std::uint64_t keys,
               std::vector<Rng>& rngs) {
  p.prepare(w.clients);
  const std::string value = make_value(7);
  std::vector<std::uint64_t> misses(static_cast<std::size_t>(w.clients), 0);
  Cell cell = timed(w.clients, seconds, [&](int t, const std::atomic<bool>& stop) {
    Rng rng = rngs[static_cast<std::size_t>(t)];  // a copy: the threads' states share a line
    std::uint64_t n = 0;
    std::string out;
    std::string key;
    while (!stop.load(std::memory_order_relaxed)) {
      write_point_key(key, rng.next() % keys);
      if (w.kind == Kind::point_set) {
        p.set(t, key, value);
      } else if (!p.get(t, key, out) || out.size() != kValueBytes) {
        ++misses[static_cast<std::size_t>(t)];
      }
      ++n;
    }
    rngs[static_cast<std::size_t>(t)] = rng;
    return n;
  });
  std::uint64_t missed = Ledger::total(misses);
  if (missed) cell.note = std::to_string(missed) + " gets missed a loaded key; ";
  return cell;
}

std::string human(double v) {
  char buf[32];
  if (v >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2f M", v / 1e6);
  } else if (v >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.1f k", v / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  }
  return buf;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Marks the names in `list` (comma-separated) in `selected`, or refuses the list.
void select_names(const std::string& flag, const std::string& list, std::vector<bool>& selected,
                  const std::function<std::string(std::size_t)>& name_of) {
  selected.assign(selected.size(), false);
  const std::vector<std::string> names = split(list);
  if (names.empty()) throw CLI::ValidationError(flag + " needs at least one name");
  for (const auto& name : names) {
    bool found = false;
    for (std::size_t k = 0; k < selected.size(); ++k) {
      if (name == name_of(k)) selected[k] = found = true;
    }
    if (!found) {
      std::string why = "unknown name in " + flag;
      why += ": ";
      why += name;
      throw CLI::ValidationError(why);
    }
  }
}

// Parses the flags into cfg; exits 0 after --help or --version, 2 on a bad flag.
void parse(int argc, char** argv, Config& cfg) {
  CLI::App app("The same workloads against strata and its peers, side by side.", "strata-peers");
  bench::set_up(app);
  std::string peers_list, workloads_list;
  bool high_contention = false;
  std::string workloads_help = "comma list of workload ids (default all):";
  for (const auto& w : kWorkloads) {
    workloads_help += std::string("\n  ") + w.id + "  (" + w.title + ", " +
                      std::to_string(w.clients) + " clients)";
  }
  app.add_option("--seconds", cfg.seconds, "duration of each cell per engine (default 3)")
      ->type_name("S")
      ->transform(bench::number_in(0.001, 86400.0));
  app.add_option("--rounds", cfg.rounds,
                 "split each cell into N rounds, each with a rate per engine: a cell's figure "
                 "is the median round, and its ratio the median of the rounds' ratios "
                 "(default 3)")
      ->type_name("N")
      ->transform(bench::number_in(1, 1000));
  app.add_option("--turn", cfg.turn,
                 "within a round, the engines take turns of at most S seconds (order reversed "
                 "every other turn), so that a change in the machine's speed that comes and "
                 "goes within seconds falls on every engine alike; an engine's rate in the "
                 "round is its operations over its time in all its turns. Each turn runs the "
                 "cell anew (its threads, an empty queue, the checks) and starts with caches "
                 "the other engines used; the engines' counters are not printed (default: "
                 "one turn a round)")
      ->type_name("S")
      ->transform(bench::number_in(0.01, 86400.0));
  app.add_option("--csv", cfg.csv, "also write the results as CSV (for bench/peers/plot.gp)")
      ->type_name("FILE");
  app.add_option("--peers", peers_list,
                 "comma list of: strata,lmdb,rocksdb,sqlite,wiredtiger,mutex_std (default all)")
      ->type_name("LIST");
  app.add_option("--workloads", workloads_list, workloads_help)->type_name("LIST");
  app.add_option("--keys", cfg.keys, "key space of the point workloads (default 1000000)")
      ->type_name("N")
      ->transform(bench::number_in<std::uint64_t>(1, 1'000'000'000));
  app.add_option("--dir", cfg.dir, "where peers keep their files (default /dev/shm, a tmpfs)")
      ->type_name("DIR");
  app.add_flag("--high-contention", high_contention,
               "strata's Queue and PriorityQueue in their high-contention mode");
  bench::parse_or_exit(app, argc, argv, [&] {
    if (app.count("--peers")) {
      select_names("--peers", peers_list, cfg.peers, [](std::size_t k) { return kPeers[k].name; });
    }
    if (app.count("--workloads")) {
      select_names("--workloads", workloads_list, cfg.workloads,
                   [](std::size_t k) { return kWorkloads[k].id; });
    }
  });
  if (high_contention) set_strata_high_contention(true);
}

}  // namespace
}  // namespace peers

static int program_main(int argc, char** argv) {
  using namespace peers;
  Config cfg;
  parse(argc, argv, cfg);
  if (cfg.dir.empty()) {
    cfg.dir = std::filesystem::is_directory("/dev/shm") ? std::filesystem::path("/dev/shm")
                                                        : std::filesystem::temp_directory_path();
  }
  cfg.dir /= "strata-peers-" + std::to_string(::getpid());
  std::error_code dir_error;
  std::filesystem::create_directories(cfg.dir, dir_error);
  if (dir_error) {
    std::cerr << "strata-peers: cannot create " << cfg.dir.string() << ": " << dir_error.message()
              << "\n";
    return 2;
  }

  // Which peers are built.
  std::vector<bool> active(kNumPeers, false);
  for (std::size_t k = 0; k < kNumPeers; ++k) {
    if (!cfg.peers[k]) continue;
    auto probe = kPeers[k].make(cfg.dir);
    if (probe) {
      active[k] = true;
    } else {
      std::cout << "skipping " << kPeers[k].label << ": not built (" << kPeers[k].missing << ")\n";
    }
  }
  std::cout << "strata-peers: " << cfg.seconds << " s per cell, files in " << cfg.dir.string()
            << ", strata's queues in " << (strata_high_contention() ? "high-contention" : "simple")
            << " mode\n";
  for (std::size_t k = 0; k < kNumPeers; ++k) {
    if (active[k]) std::cout << "  " << kPeers[k].label << ": " << kPeers[k].settings << "\n";
  }

  // Every engine's rounds of every workload; the table is made from them at the end.
  std::vector<std::vector<Rounds>> rounds(kNumWorkloads, std::vector<Rounds>(kNumPeers));
  bool failed = false;
  // Workload-major order, and within a workload the engines take turns round by round, so
  // every engine sees each workload at about the same time and a change in the machine's
  // speed (a virtual machine's can move a lot from second to second) falls on all of them.
  // The two point-get cells share one loaded instance per engine.
  for (std::size_t wi = 0; wi < kNumWorkloads; ++wi) {
    const Workload& w = kWorkloads[wi];
    if (!cfg.workloads[wi]) continue;
    if (w.kind == Kind::point_get && wi > 0 && kWorkloads[wi - 1].kind == Kind::point_get &&
        cfg.workloads[wi - 1]) {
      continue;  // ran together with the previous cell
    }
    std::vector<std::size_t> group{wi};
    if (w.kind == Kind::point_get) {
      for (std::size_t j = wi + 1; j < kNumWorkloads && kWorkloads[j].kind == Kind::point_get;
           ++j) {
        if (cfg.workloads[j]) group.push_back(j);
      }
    }
    auto fail = [&](std::size_t k, const std::exception& e) {
      std::cout << "  " << w.id << " " << kPeers[k].label << ": ERROR " << e.what() << std::endl;
      for (std::size_t g : group) {
        rounds[g][k].error = true;
        rounds[g][k].note = std::string("error: ") + e.what();
      }
      failed = true;
    };
    // One fresh instance per engine for the whole cell. Churn's engines run one at a time,
    // each alone in the process, so its RSS drift is that engine's own.
    const bool one_at_a_time = w.kind == Kind::churn;
    std::vector<std::unique_ptr<Peer>> instance(kNumPeers);
    auto open = [&](std::size_t k) {
      try {
        instance[k] = kPeers[k].make(cfg.dir);
        if (w.kind == Kind::point_get) {
          auto t0 = Clock::now();
          instance[k]->load(cfg.keys, make_value(7));
          instance[k]->counters();
          std::cout << "  " << kPeers[k].label << ": loaded " << cfg.keys << " keys in "
                    << std::chrono::duration<double>(Clock::now() - t0).count() << " s\n";
        }
      } catch (const std::exception& e) {
        instance[k].reset();
        fail(k, e);
      }
    };
    for (std::size_t k = 0; k < kNumPeers; ++k) {
      if (active[k] && !one_at_a_time) open(k);
    }
    // Churn measures drift over one continuous run, so it is not split.
    const int n_rounds = one_at_a_time ? 1 : cfg.rounds;
    const double slice = cfg.seconds / n_rounds;
    const int n_turns = one_at_a_time || cfg.turn <= 0
                            ? 1
                            : static_cast<int>(std::max(1.0, std::ceil(slice / cfg.turn - 1e-9)));
    const double turn = slice / n_turns;
    // The point cells' key sequences, per workload of the group, engine and client: each
    // round starts them over from the same seeds, and its turns go on with them.
    std::vector<std::vector<std::vector<Rng>>> key_rngs(group.size(),
                                                        std::vector<std::vector<Rng>>(kNumPeers));
    for (int round = 0; round < n_rounds; ++round) {
      // Which of the host's vCPU placements this round runs on (core_latency.hpp).
      const double trip_ns = bench::cache_line_round_trip_ns(200'000);
      if (trip_ns >= 0) {
        char line[96];
        std::snprintf(line, sizeof line,
                      "  round %d: cache-line round trip between the CPUs %.0f ns", round + 1,
                      trip_ns);
        std::cout << line << std::endl;
      }
      for (std::size_t gi = 0; gi < group.size(); ++gi) {
        const Workload& gw = kWorkloads[group[gi]];
        for (auto& rngs : key_rngs[gi]) {
          rngs.clear();
          for (int t = 0; t < gw.clients; ++t) {
            rngs.emplace_back(0xc0ffee + static_cast<std::uint64_t>(t) * 7919);
          }
        }
      }
      // Each engine's operations, seconds and verification notes in this round, per
      // workload of the group.
      std::vector<std::vector<double>> ops(group.size(), std::vector<double>(kNumPeers, 0.0));
      std::vector<std::vector<double>> secs(group.size(), std::vector<double>(kNumPeers, 0.0));
      std::vector<std::vector<std::string>> notes(group.size(),
                                                  std::vector<std::string>(kNumPeers));
      // Reports engine k's round of workload `gi` of the group; `counters` (the peer's since
      // its last call) only with one turn a round, where they are the cell's own.
      auto report = [&](std::size_t gi, std::size_t k, double rate, const std::string& counters) {
        const std::size_t g = group[gi];
        const Workload& gw = kWorkloads[g];
        const std::string& note = notes[gi][k];
        std::cout << "  " << gw.id << " " << kPeers[k].label;
        if (n_rounds > 1) std::cout << " [" << round + 1 << "/" << n_rounds << "]";
        std::cout << ": " << human(rate) << " " << gw.unit
                  << (note.empty() ? "" : "  VERIFY FAILED: ") << note;
        if (!counters.empty()) std::cout << "  (" << counters << ")";
        std::cout << std::endl;
        if (!note.empty()) failed = true;
        rounds[g][k].rates.push_back(rate);
        rounds[g][k].note += note;
      };
      for (int t = 0; t < n_turns; ++t) {
        for (std::size_t step = 0; step < kNumPeers; ++step) {
          const std::size_t k = (round + t) % 2 == 0 ? step : kNumPeers - 1 - step;
          if (one_at_a_time && active[k]) open(k);
          Peer* peer = instance[k].get();
          if (peer == nullptr) continue;
          try {
            for (std::size_t gi = 0; gi < group.size(); ++gi) {
              const Workload& gw = kWorkloads[group[gi]];
              Cell cell;
              switch (gw.kind) {
                case Kind::pairs:
                  cell = run_pairs(*peer, gw, turn, false);
                  break;
                case Kind::pq_pairs:
                  cell = run_pairs(*peer, gw, turn, true);
                  break;
                case Kind::prodcons:
                  cell = run_prodcons(*peer, gw, turn);
                  break;
                case Kind::point_set:
                case Kind::point_get:
                  cell = run_point(*peer, gw, turn, cfg.keys, key_rngs[gi][k]);
                  break;
                case Kind::churn: {
                  std::string drift;
                  cell = run_churn(*peer, slice * 3, drift);
                  if (!drift.empty())
                    std::cout << "  " << gw.id << " " << kPeers[k].label << ": " << drift << "\n";
                  break;
                }
              }
              ops[gi][k] += *cell.ops * cell.seconds;
              secs[gi][k] += cell.seconds;
              notes[gi][k] += cell.note;
              const std::string counters = peer->counters();
              if (n_turns == 1) report(gi, k, *cell.ops, counters);
            }
          } catch (const std::exception& e) {
            instance[k].reset();
            fail(k, e);
          }
          if (one_at_a_time) instance[k].reset();
        }
      }
      if (n_turns == 1) continue;
      // Several turns: each engine's rate over all its turns, once the round is over.
      for (std::size_t step = 0; step < kNumPeers; ++step) {
        const std::size_t k = round % 2 == 0 ? step : kNumPeers - 1 - step;
        if (!active[k] || rounds[group.front()][k].error) continue;
        for (std::size_t gi = 0; gi < group.size(); ++gi) {
          report(gi, k, secs[gi][k] > 0 ? ops[gi][k] / secs[gi][k] : 0.0, "");
        }
      }
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(cfg.dir, ec);

  // The table: ops/s per engine, then strata/peer.
  std::ostringstream head, rule;
  head << "| workload | clients | unit |";
  rule << "|---|---|---|";
  for (std::size_t k = 0; k < kNumPeers; ++k) {
    if (!active[k]) continue;
    head << " " << kPeers[k].label << " |";
    rule << "---|";
  }
  for (std::size_t k = 1; k < kNumPeers; ++k) {
    if (!active[k] || !active[0]) continue;
    head << " strata/" << kPeers[k].label << " |";
    rule << "---|";
  }
  std::cout << "\n";
  if (cfg.rounds > 1) {
    std::cout << "(each figure is the median of its " << cfg.rounds
              << " rounds; a ratio is the median of the rounds' ratios, in brackets the lowest "
                 "and highest)\n";
  }
  std::cout << head.str() << "\n" << rule.str() << "\n";
  std::ofstream csv;
  if (!cfg.csv.empty()) {
    csv.open(cfg.csv);
    if (!csv) {
      std::cerr << "strata-peers: cannot write " << cfg.csv << "\n";
      return 2;
    }
    // Settings as comment lines (gnuplot skips them), then one row per workload: per engine
    // the median, lowest and highest round; per peer strata/peer likewise, round by round.
    for (const auto& p : kPeers) csv << "# " << p.name << ": " << p.settings << "\n";
    csv << "workload,clients,unit";
    for (const auto& p : kPeers)
      csv << "," << p.name << "," << p.name << "_min," << p.name << "_max";
    for (std::size_t k = 1; k < kNumPeers; ++k) {
      const std::string r = std::string("strata/") + kPeers[k].name;
      csv << "," << r << "," << r << "_min," << r << "_max";
    }
    csv << "\n";
  }
  // Rates as whole ops/s, ratios to four significant digits.
  auto csv_number = [&](std::optional<double> v, bool ratio) {
    csv << ",";
    if (!v) {
      csv << "NaN";
    } else if (ratio) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4g", *v);
      csv << buf;
    } else {
      csv << std::llround(*v);
    }
  };
  for (std::size_t wi = 0; wi < kNumWorkloads; ++wi) {
    if (!cfg.workloads[wi]) continue;
    const Workload& w = kWorkloads[wi];
    std::vector<Cell> row(kNumPeers);
    for (std::size_t k = 0; k < kNumPeers; ++k) row[k] = rounds[wi][k].cell();
    std::cout << "| " << w.title << " | " << w.clients << " | " << w.unit << " |";
    for (std::size_t k = 0; k < kNumPeers; ++k) {
      if (!active[k]) continue;
      std::cout << " " << (row[k].ops ? human(*row[k].ops) : std::string("failed")) << " |";
    }
    // strata/peer round by round: median, lowest, highest.
    std::vector<std::optional<double>> ratio(kNumPeers), ratio_lo(kNumPeers), ratio_hi(kNumPeers);
    for (std::size_t k = 1; k < kNumPeers; ++k) {
      std::vector<double> per_round;
      if (row[0].ops && row[k].ops) {
        const auto& mine = rounds[wi][0].rates;
        const auto& theirs = rounds[wi][k].rates;
        for (std::size_t r = 0; r < mine.size() && r < theirs.size(); ++r) {
          if (theirs[r] > 0) per_round.push_back(mine[r] / theirs[r]);
        }
      }
      if (!per_round.empty()) {
        ratio[k] = Rounds::median(per_round);
        auto [lo, hi] = std::minmax_element(per_round.begin(), per_round.end());
        ratio_lo[k] = *lo;
        ratio_hi[k] = *hi;
      }
      if (!active[k] || !active[0]) continue;
      char buf[64];
      if (!ratio[k]) {
        std::snprintf(buf, sizeof buf, " - |");
      } else if (per_round.size() > 1) {
        std::snprintf(buf, sizeof buf, " %.3gx (%.3g-%.3g) |", *ratio[k], *ratio_lo[k],
                      *ratio_hi[k]);
      } else {
        std::snprintf(buf, sizeof buf, " %.3gx |", *ratio[k]);
      }
      std::cout << buf;
    }
    std::cout << "\n";
    if (csv.is_open()) {
      csv << w.id << "," << w.clients << "," << w.unit;
      for (std::size_t k = 0; k < kNumPeers; ++k) {
        const auto& rates = rounds[wi][k].rates;
        const bool ok = row[k].ops.has_value();
        csv_number(row[k].ops, false);
        csv_number(ok ? std::optional<double>(*std::min_element(rates.begin(), rates.end()))
                      : std::nullopt,
                   false);
        csv_number(ok ? std::optional<double>(*std::max_element(rates.begin(), rates.end()))
                      : std::nullopt,
                   false);
      }
      for (std::size_t k = 1; k < kNumPeers; ++k) {
        csv_number(ratio[k], true);
        csv_number(ratio_lo[k], true);
        csv_number(ratio_hi[k], true);
      }
      csv << "\n";
    }
  }
  if (csv.is_open()) std::cout << "\nwrote " << cfg.csv << "\n";
  if (failed) {
    std::cout << "\nsome cells failed verification or raised errors (see above)\n";
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  return bench::run_main("strata-peers", [&] { return program_main(argc, argv); });
}
