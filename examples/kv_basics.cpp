// Key-value basics: a transaction retried by Database::run, reads, a range read page by
// page, what a conflict looks like, and errors with FoundationDB's numbers.
#include <cstdio>
#include <optional>
#include <string>

#include <strata/strata.hpp>

int main() {
  strata::Database db = strata::Database::open();  // in memory

  // Database::run commits the lambda's writes, and runs it again on a conflict (1020), so
  // it should do nothing but use its transaction.
  db.run([](strata::Transaction& tr) {
    tr.set("fruit/apple", "red");
    tr.set("fruit/banana", "yellow");
    tr.set("fruit/cherry", "dark red");
    tr.set("fruit/kiwi", "green");
    tr.set("fruit/lime", "green");
  });
  std::optional<std::string> apple =
      db.run([](strata::Transaction& tr) { return tr.get("fruit/apple"); });
  std::optional<std::string> grape =
      db.run([](strata::Transaction& tr) { return tr.get("fruit/grape"); });
  std::printf("apple: %s, grape: %s\n", apple->c_str(), grape ? grape->c_str() : "(absent)");

  // A range read of at most two rows at a time, in one transaction (a read-only one needs
  // no commit). `more` says a limit ended the read: the next page starts just after the
  // last key read (the key with "\0" appended).
  strata::Transaction reader = db.create_transaction();
  std::string begin = "fruit/", end = "fruit0";  // every key that starts with "fruit/"
  for (int page = 1;; ++page) {
    strata::RangeResult rows = reader.get_range(begin, end, {.limit = 2});
    for (const strata::KeyValue& row : rows) {
      std::printf("page %d: %s = %s\n", page, row.key.c_str(), row.value.c_str());
    }
    if (!rows.more) break;
    begin = rows.back().key + '\0';
  }

  // Two transactions read and write the same key: the one that commits second fails with
  // not_committed (1020). Database::run would retry it; by hand, on_error() does.
  strata::Transaction first = db.create_transaction();
  strata::Transaction second = db.create_transaction();
  first.set("fruit/apple", first.get("fruit/apple").value() + ", crisp");
  second.set("fruit/apple", second.get("fruit/apple").value() + ", sweet");
  first.commit();
  try {
    second.commit();
  } catch (const strata::Error& e) {
    std::printf("second commit: error %d, %s\n", e.code(),
                std::string(strata::error_name(e.error_code())).c_str());
    second.on_error(e);  // resets it (after a short backoff) for another attempt
    second.set("fruit/apple", second.get("fruit/apple").value() + ", sweet");
    second.commit();
  }
  std::printf("apple: %s\n",
              db.run([](strata::Transaction& tr) { return *tr.get("fruit/apple"); }).c_str());

  // Misuse throws strata::Error with FoundationDB's number: keys are at most 10,000 bytes.
  try {
    db.run([](strata::Transaction& tr) { tr.set(std::string(10'001, 'k'), "v"); });
  } catch (const strata::Error& e) {
    std::printf("a long key: error %d (%s), retryable: %s\n", e.code(),
                std::string(strata::error_name(e.error_code())).c_str(),
                e.retryable() ? "yes" : "no");
  }

  db.run([](strata::Transaction& tr) { tr.clear_range("fruit/", "fruit0"); });
  std::printf("after clear_range: %zu fruit\n", db.run([](strata::Transaction& tr) {
    return tr.get_range("fruit/", "fruit0").size();
  }));
}

// Output:
//   apple: red, grape: (absent)
//   page 1: fruit/apple = red
//   page 1: fruit/banana = yellow
//   page 2: fruit/cherry = dark red
//   page 2: fruit/kiwi = green
//   page 3: fruit/lime = green
//   second commit: error 1020, not_committed
//   apple: red, crisp, sweet
//   a long key: error 2102 (key_too_large), retryable: no
//   after clear_range: 0 fruit
