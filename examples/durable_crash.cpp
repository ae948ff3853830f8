// A durable database, and what survives a crash. A child process opens a database in a new
// directory and moves money between two accounts, one transfer per transaction, telling
// its parent over a pipe each time a commit returns. Once 200 have, the parent kills it
// with SIGKILL (most likely in the middle of a commit), then opens the directory itself.
//
// With Durability::fsync (the default) every commit that returned survives a crash and a
// power loss; Durability::buffered survives a crash of the process. A transaction is never
// half there: both accounts and the transfer's record change together, or none of them.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <tuple>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <strata/strata.hpp>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

constexpr std::int64_t kTotal = 1'000'000;  // money in the two accounts together

// The child: transfers one unit from "a" to "b" per transaction, forever; after each commit
// returns, writes the transfer's number to `report`.
[[noreturn]] void run_transfers(const std::filesystem::path& dir, int report) {
  try {
    strata::Database db = strata::Database::open({.path = dir});
    db.run([](strata::Transaction& tr) {
      tr.set("account/a", std::to_string(kTotal));
      tr.set("account/b", "0");
    });
    for (std::int64_t n = 1;; ++n) {
      db.run([n](strata::Transaction& tr) {
        std::int64_t a = std::stoll(tr.get("account/a").value());
        std::int64_t b = std::stoll(tr.get("account/b").value());
        tr.set("account/a", std::to_string(a - 1));
        tr.set("account/b", std::to_string(b + 1));
        tr.set(strata::Tuple{"transfer", n}.pack(), "1 from a to b");
      });
      if (write(report, &n, sizeof n) != sizeof n) _exit(1);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child: %s\n", e.what());
    _exit(1);
  }
}

}  // namespace

int main() {
  char dir_template[] = "/tmp/strata-example-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return 1;
  const std::filesystem::path dir = std::filesystem::path(dir_template) / "db";

  int fds[2];
  if (pipe(fds) != 0) return 1;
  std::fflush(stdout);  // nothing buffered for the child to print again
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    run_transfers(dir, fds[1]);
  }
  close(fds[1]);

  // Wait for 200 reports, kill the child, then read the reports it wrote before it died.
  std::int64_t last_reported = 0, n = 0;
  while (last_reported < 200 && read(fds[0], &n, sizeof n) == sizeof n) last_reported = n;
  kill(child, SIGKILL);
  while (read(fds[0], &n, sizeof n) == sizeof n) last_reported = n;
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("child killed by SIGKILL: %s\n",
              WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? "yes" : "no");

  // The kernel may release a killed process's lock on the directory a moment after the
  // process is reaped: wait for that release itself (Database::open would throw
  // database_locked).
  const int lock = open((dir / "LOCK").c_str(), O_RDONLY);
  if (lock >= 0) {
    flock(lock, LOCK_EX);
    close(lock);
  }

  {
    // Recovery replays the log: the database as it was after some prefix of the commits.
    strata::Database db = strata::Database::open({.path = dir});
    auto [a, b, transfers] = db.run([](strata::Transaction& tr) {
      strata::KeyRange all = strata::Subspace(strata::Tuple{"transfer"}).range();
      return std::tuple(std::stoll(tr.get("account/a").value()),
                        std::stoll(tr.get("account/b").value()),
                        static_cast<std::int64_t>(tr.get_range(all).size()));
    });
    std::printf("every commit that returned is there: %s\n",
                transfers >= last_reported ? "yes" : "no");
    std::printf("no transaction half there (a + b = %lld, b = transfers): %s\n",
                static_cast<long long>(kTotal), a + b == kTotal && b == transfers ? "yes" : "no");
  }  // the last handle closes the database (with a checkpoint)
  std::filesystem::remove_all(dir_template);
}

// Output:
//   child killed by SIGKILL: yes
//   every commit that returned is there: yes
//   no transaction half there (a + b = 1000000, b = transfers): yes
