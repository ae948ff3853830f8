// strata-group-commit-model: the grouped commit pipeline under Durability::fsync with the
// engine taken out, to find what this machine allows 64 committers at best.
//
// Committers and the leader follow engine/commit_pipeline.cpp: a committer queues its
// request; the first to find no leader leads, taking every queued request as one batch;
// the leader does `--apply-us` of busy work per request (the engine's resolve and apply),
// writes 130 bytes per request over a pre-zeroed file, fdatasyncs it, marks the batch done
// and wakes it with one FUTEX_WAKE on the word of its batch's parity; it leads up to 64
// batches, then hands the leadership to the first waiter. Each committer does `--txn-us`
// of busy work (its next transaction) between commits. With `--apply-us 0` the model
// shows what the sync and the threads' sleeps and wake-ups alone allow.
//
//   strata-group-commit-model [--committers N] [--seconds S] [--apply-us U] [--txn-us U]
//                             [--dir DIR]
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/futex.hpp"
#include "cli.hpp"
#include <fcntl.h>
#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;
using strata::base::futex_wait;
using strata::base::futex_wake_all;

constexpr int kMaxRounds = 64;
constexpr std::size_t kRecordBytes = 130;  // a 16-byte key, a 100-byte value, framing
constexpr std::size_t kFileBytes = std::size_t{256} << 20;

void busy_for(double micros) {
  const auto until = Clock::now() + std::chrono::duration<double, std::micro>(micros);
  while (Clock::now() < until) {
  }
}

struct Request {
  std::atomic<int> state{0};  // 0 waiting, 1 leads, 2 done
  std::uint32_t ticket = 0;
};

class Model {
 public:
  Model(int fd, double apply_us) : fd_(fd), apply_us_(apply_us) {}

  void commit(Request& r) {
    r.state.store(0, std::memory_order_relaxed);
    std::unique_lock lock(mu_);
    queue_.push_back(&r);
    r.ticket = taken_;
    if (leader_) {
      lock.unlock();
      std::atomic<std::int32_t>& word = finished_[r.ticket & 1];
      int state = 0;
      for (;;) {
        const std::int32_t seen = word.load(std::memory_order_acquire);
        state = r.state.load(std::memory_order_acquire);
        if (state != 0) break;
        futex_wait(word, seen);
      }
      if (state == 2) return;
      lock.lock();
    }
    leader_ = true;
    std::vector<Request*> batch;
    for (int round = 0;; ++round) {
      batch.swap(queue_);
      const std::uint32_t ticket = taken_++;
      lock.unlock();
      process(batch);
      for (Request* q : batch) {
        if (q != &r) q->state.store(2, std::memory_order_release);
      }
      finished_[ticket & 1].fetch_add(1, std::memory_order_release);
      futex_wake_all(finished_[ticket & 1]);
      commits_.fetch_add(batch.size(), std::memory_order_relaxed);
      batches_.fetch_add(1, std::memory_order_relaxed);
      batch.clear();
      lock.lock();
      if (queue_.empty()) {
        leader_ = false;
        return;
      }
      if (round + 1 == kMaxRounds) {
        Request* next = queue_.front();
        next->state.store(1, std::memory_order_release);
        finished_[next->ticket & 1].fetch_add(1, std::memory_order_release);
        futex_wake_all(finished_[next->ticket & 1]);
        return;
      }
    }
  }

  std::uint64_t commits() const { return commits_.load(); }
  std::uint64_t batches() const { return batches_.load(); }

 private:
  void process(const std::vector<Request*>& batch) {
    busy_for(apply_us_ * static_cast<double>(batch.size()));
    const std::size_t bytes = kRecordBytes * batch.size();
    if (offset_ + bytes > kFileBytes) offset_ = 0;
    buffer_.resize(bytes, 'r');
    if (::pwrite(fd_, buffer_.data(), bytes, static_cast<off_t>(offset_)) !=
            static_cast<ssize_t>(bytes) ||
        ::fdatasync(fd_) != 0) {
      std::perror("strata-group-commit-model: write");
      std::exit(1);
    }
    offset_ += bytes;
  }

  const int fd_;
  const double apply_us_;
  std::mutex mu_;
  std::vector<Request*> queue_;  // guarded by mu_
  bool leader_ = false;          // guarded by mu_
  std::uint32_t taken_ = 0;      // guarded by mu_
  std::atomic<std::int32_t> finished_[2] = {0, 0};
  std::atomic<std::uint64_t> commits_{0}, batches_{0};
  std::size_t offset_ = 0;  // leader only
  std::string buffer_;      // leader only
};

constexpr const char* kDescription =
    "The grouped commit pipeline under fsync with the engine's work replaced by busy\n"
    "loops; the log file is made (256 MB of zeros, then overwritten) in DIR.";

}  // namespace

static int program_main(int argc, char** argv) {
  int committers = 64;
  double seconds = 3;
  double apply_us = 1.8;
  double txn_us = 1.5;
  std::string dir_text = std::filesystem::temp_directory_path().string();
  CLI::App app(kDescription, "strata-group-commit-model");
  bench::set_up(app);
  app.add_option("--committers", committers, "committer threads (default 64)")
      ->type_name("N")
      ->transform(bench::number_in(1, 4096));
  app.add_option("--seconds", seconds, "length of the run (default 3)")
      ->type_name("S")
      ->transform(bench::number_in(0.1, 3600.0));
  app.add_option("--apply-us", apply_us, "busy work per request on the leader (default 1.8)")
      ->type_name("U")
      ->transform(bench::number_in(0.0, 10000.0));
  app.add_option("--txn-us", txn_us, "busy work per commit on each committer (default 1.5)")
      ->type_name("U")
      ->transform(bench::number_in(0.0, 10000.0));
  app.add_option("--dir", dir_text, "where the log file is made (default the temporary directory)")
      ->type_name("DIR");
  bench::parse_or_exit(app, argc, argv);
  const std::filesystem::path dir = dir_text;

  // Pre-zeroed and synced, so that a sync after an overwrite journals no size change (as
  // the log's grow-ahead arranges).
  const std::filesystem::path file =
      dir / ("strata-group-commit-model-" + std::to_string(getpid()));
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::perror(file.c_str());
    return 1;
  }
  const std::string zeros(std::size_t{1} << 20, '\0');
  for (std::size_t done = 0; done < kFileBytes; done += zeros.size()) {
    if (::write(fd, zeros.data(), zeros.size()) != static_cast<ssize_t>(zeros.size())) {
      std::perror(file.c_str());
      return 1;
    }
  }
  ::fsync(fd);

  Model model(fd, apply_us);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(committers));
  const auto start = Clock::now();
  for (int t = 0; t < committers; ++t) {
    threads.emplace_back([&] {
      Request r;
      while (!stop.load(std::memory_order_relaxed)) {
        busy_for(txn_us);
        model.commit(r);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  ::close(fd);
  std::filesystem::remove(file);
  std::printf("%d committers, apply %.2f us, txn %.2f us: %.1f k commits/s, %.1f per batch\n",
              committers, apply_us, txn_us, static_cast<double>(model.commits()) / elapsed / 1e3,
              static_cast<double>(model.commits()) /
                  static_cast<double>(std::max<std::uint64_t>(model.batches(), 1)));
  return 0;
}

int main(int argc, char** argv) {
  return bench::run_main("strata-group-commit-model", [&] { return program_main(argc, argv); });
}
