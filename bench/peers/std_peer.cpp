// bench/peers/std_peer.cpp: the in-process ceiling: std::deque (queue), std::multimap
// (priority queue) and std::map (point operations), all under one std::mutex.
#include <deque>
#include <map>
#include <mutex>

#include "peer.hpp"

namespace peers {
namespace {

class StdPeer final : public Peer {
 public:
  void prepare(int) override {}

  void enqueue(int, std::string_view value) override {
    std::lock_guard lock(mu_);
    queue_.emplace_back(value);
  }
  bool dequeue(int, std::string& out) override {
    std::lock_guard lock(mu_);
    if (queue_.empty()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    return true;
  }

  void pq_push(int, int priority, std::string_view value) override {
    std::lock_guard lock(mu_);
    pqueue_.emplace(priority, std::string(value));
  }
  bool pq_pop_min(int, std::string& out) override {
    std::lock_guard lock(mu_);
    if (pqueue_.empty()) return false;
    auto it = pqueue_.begin();
    out = std::move(it->second);
    pqueue_.erase(it);
    return true;
  }

  void set(int, std::string_view key, std::string_view value) override {
    std::lock_guard lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) {
      map_.emplace(std::string(key), std::string(value));
    } else {
      it->second.assign(value);
    }
  }
  bool get(int, std::string_view key, std::string& out) override {
    std::lock_guard lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    out = it->second;
    return true;
  }
  void load(std::uint64_t n, std::string_view value) override {
    std::lock_guard lock(mu_);
    for (std::uint64_t i = 0; i < n; ++i) map_.emplace(point_key(i), std::string(value));
  }

 private:
  std::mutex mu_;
  std::deque<std::string> queue_;
  std::multimap<int, std::string> pqueue_;
  std::map<std::string, std::string, std::less<>> map_;
};

}  // namespace

std::unique_ptr<Peer> make_std_peer(const std::filesystem::path&) {
  return std::make_unique<StdPeer>();
}

}  // namespace peers
