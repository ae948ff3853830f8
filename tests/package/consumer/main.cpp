// A consumer program: links strata::strata and runs one transaction.
#include <cstdio>

#include <strata/strata.hpp>

int main() {
  auto db = strata::Database::open();
  db.run([](strata::Transaction& tr) { tr.set("hello", "world"); });
  auto value = db.run([](strata::Transaction& tr) { return tr.get("hello"); });
  if (!value || *value != "world") return 1;
  std::puts("consumer ok");
  return 0;
}
