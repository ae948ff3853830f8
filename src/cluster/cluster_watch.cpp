// A strata::Watch over a FoundationDB watch future.
#include "cluster/cluster_watch.hpp"

#include <thread>
#include <utility>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace strata::cluster {

struct ClusterWatch::State {
  enum class Status { pending, fired, cancelled, failed };

  State(const FdbApi& a, FDBFuture* f) : api(a), future(f) {}
  ~State() {
    if (!network_stopped()) api.future_destroy(future);
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Moves a pending watch to `s` (no-op once final): under the lock, the status and error
  // are set and the listeners taken; then the listeners run, on this thread, outside the
  // lock, and only then is the watch settled and its waiters woken, so a waiter returns
  // once every listener registered before the watch finished has run. A listener finds the
  // outcome already visible to its own thread (wait_for(0) tells it, and wait() returns),
  // and one added meanwhile runs at once in on_ready. A listener that throws skips those
  // after it; the watch settles all the same.
  void finish(Status s, fdb_error_t e = 0) {
    std::vector<std::function<void()>> run;
    {
      base::MutexLock lock(mu);
      if (status != Status::pending) return;
      status = s;
      error = e;
      finisher = std::this_thread::get_id();
      run.swap(listeners);
    }
    struct Settle {
      explicit Settle(State& s) : state(s) {}
      Settle(const Settle&) = delete;
      Settle& operator=(const Settle&) = delete;
      ~Settle() {
        {
          base::MutexLock lock(state.mu);
          state.settled = true;
        }
        state.cv.notify_all();
      }
      State& state;
    } settle(*this);
    for (auto& listener : run) listener();
  }

  // Whether the calling thread may read the outcome: once settled, or, on the thread
  // running the listeners, once final.
  bool readable() const REQUIRES(mu) {
    return settled || (status != Status::pending && finisher == std::this_thread::get_id());
  }

  const FdbApi& api;
  FDBFuture* const future;
  base::Mutex mu;
  base::CondVar cv;
  Status status GUARDED_BY(mu) = Status::pending;
  fdb_error_t error GUARDED_BY(mu) = 0;
  bool settled GUARDED_BY(mu) = false;      // final, and the listeners have run
  std::thread::id finisher GUARDED_BY(mu);  // the thread that ran the listeners
  std::vector<std::function<void()>> listeners GUARDED_BY(mu);
};

namespace {

constexpr fdb_error_t kOperationCancelled = 1101;

// The future's callback: `parameter` is a heap copy of the state's shared_ptr, the
// callback's reference, released here. FoundationDB calls it from its C code, which an
// exception may not unwind through: noexcept, so a throwing on_ready listener (which the
// public contract forbids) ends in std::terminate here.
void on_watch_ready(FDBFuture* f, void* parameter) noexcept {
  std::unique_ptr<std::shared_ptr<ClusterWatch::State>> held(
      static_cast<std::shared_ptr<ClusterWatch::State>*>(parameter));
  ClusterWatch::State& state = **held;
  const fdb_error_t e = state.api.future_get_error(f);
  using Status = ClusterWatch::State::Status;
  if (e == 0) {
    state.finish(Status::fired);
  } else if (e == kOperationCancelled) {
    state.finish(Status::cancelled);
  } else {
    state.finish(Status::failed, e);
  }
}

}  // namespace

std::shared_ptr<ClusterWatch> ClusterWatch::make(const FdbApi& api, FDBFuture* future) {
  std::shared_ptr<State> state;
  try {
    state = std::make_shared<State>(api, future);
  } catch (...) {
    api.future_destroy(future);  // taken even when this throws
    throw;
  }
  auto held = std::make_unique<std::shared_ptr<State>>(state);
  if (const fdb_error_t e = api.future_set_callback(future, &on_watch_ready, held.get())) {
    state->finish(State::Status::failed, e);
  } else {
    (void)held.release();  // the callback's now
  }
  return std::shared_ptr<ClusterWatch>(new ClusterWatch(std::move(state)));
}

ClusterWatch::~ClusterWatch() { cancel(); }

void ClusterWatch::fail(fdb_error_t code) { state_->finish(State::Status::failed, code); }

bool ClusterWatch::wait_until(std::optional<std::chrono::steady_clock::time_point> deadline) {
  State& s = *state_;
  base::MutexLock lock(s.mu);
  while (!s.readable()) {
    if (!deadline) {
      // A final watch answers anywhere; a pending one would need the network to finish.
      if (s.status == State::Status::pending) check_may_block("Watch::wait");
      s.cv.wait(lock);
    } else if (!s.cv.wait_until(lock, *deadline)) {
      // Timed out: pending is a timeout; final (its listeners still running) is the outcome.
      if (s.status == State::Status::pending) return false;
      break;
    }
  }
  switch (s.status) {
    case State::Status::fired:
      return true;
    case State::Status::failed:
      throw fdb_error(s.api, s.error, "watch");
    default:
      return false;
  }
}

void ClusterWatch::cancel() {
  // Waiters return at once; FoundationDB's future is cancelled too, which frees its watch
  // on the cluster (its callback then finds the state final), even when a listener run
  // here throws. Not once the network has stopped: nothing runs on the cluster's side then.
  auto cancel_future = [&] {
    if (!network_stopped()) state_->api.future_cancel(state_->future);
  };
  try {
    state_->finish(State::Status::cancelled);
  } catch (...) {
    cancel_future();
    throw;
  }
  cancel_future();
}

void ClusterWatch::on_ready(std::function<void()> callback) {
  State& s = *state_;
  {
    base::MutexLock lock(s.mu);
    if (s.status == State::Status::pending) {
      s.listeners.push_back(std::move(callback));
      return;
    }
  }
  callback();
}

}  // namespace strata::cluster
