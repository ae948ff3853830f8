// The lock contracts are checked, not only written: this file compiles with clang's
// -Wthread-safety -Werror=thread-safety as the library does, and fails to when
// STRATA_BREAK_CONTRACT is defined (a guarded member read without its lock, as a
// forgotten lock in the library would be). tests/CMakeLists.txt compiles it both ways.
#include "base/mutex.hpp"

namespace {

class Counter {
 public:
  void add(int n) {
    strata::base::MutexLock lock(mu_);
    value_ += n;
  }
  int read() const {
#if defined(STRATA_BREAK_CONTRACT)
    return value_;
#else
    strata::base::MutexLock lock(mu_);
    return value_;
#endif
  }

 private:
  mutable strata::base::Mutex mu_;
  int value_ GUARDED_BY(mu_) = 0;
};

}  // namespace

int main() {
  Counter c;
  c.add(1);
  return c.read() == 1 ? 0 : 1;
}
