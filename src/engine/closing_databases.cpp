#include "engine/closing_databases.hpp"

#include <system_error>
#include <unordered_map>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace strata::engine::closing_databases {
namespace {

struct Registry {
  base::Mutex mu;
  base::CondVar done;
  std::unordered_map<std::string, int> closing GUARDED_BY(mu);  // key -> closes under way
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: detached closes may outlive main()
  return *r;
}

}  // namespace

std::string key_of(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(dir, ec);
  if (ec) {
    p = std::filesystem::absolute(dir, ec).lexically_normal();
    if (ec) p = dir.lexically_normal();
  }
  return p.string();
}

void begin(const std::string& key) {
  Registry& r = registry();
  base::MutexLock lock(r.mu);
  ++r.closing[key];
}

void end(const std::string& key) {
  Registry& r = registry();
  {
    base::MutexLock lock(r.mu);
    auto it = r.closing.find(key);
    if (it != r.closing.end() && --it->second == 0) r.closing.erase(it);
  }
  r.done.notify_all();
}

void wait_for(const std::string& key) {
  Registry& r = registry();
  base::MutexLock lock(r.mu);
  while (r.closing.contains(key)) r.done.wait(lock);
}

}  // namespace strata::engine::closing_databases
