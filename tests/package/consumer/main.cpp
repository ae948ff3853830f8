// A consumer program: links strata and runs one transaction, then reports the version it
// was compiled against.
#include <cstdio>

#include <strata/strata.hpp>

int main() {
  auto db = strata::Database::open();
  db.run([](strata::Transaction& tr) { tr.set("hello", "world"); });
  auto value = db.run([](strata::Transaction& tr) { return tr.get("hello"); });
  if (!value || *value != "world") return 1;
  static_assert(STRATA_VERSION ==
                STRATA_VERSION_MAJOR * 10000 + STRATA_VERSION_MINOR * 100 + STRATA_VERSION_PATCH);
  std::printf("consumer ok\nstrata %s\n", STRATA_VERSION_STRING);
  return 0;
}
