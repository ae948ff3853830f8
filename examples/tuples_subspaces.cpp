// Tuples and subspaces: keys built from typed parts that sort as the parts do, and key
// prefixes that keep one kind of record together. The bytes are FoundationDB's tuple
// encoding, so the same keys work with FoundationDB's bindings.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <strata/strata.hpp>

using strata::Tuple;

// The bytes of a key, printable ones as they are, others as \xNN.
std::string printable(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

int main() {
  // A tuple packs to bytes whose order is the tuple order: integers by value (2 before 10,
  // where the strings "10" < "2"), strings by their bytes.
  std::string two = Tuple{"temp", 2}.pack();
  std::string ten = Tuple{"temp", 10}.pack();
  std::printf("(\"temp\", 2) packs to %s\n", printable(two).c_str());
  std::printf("2 sorts before 10: %s\n", two < ten ? "yes" : "no");
  Tuple back = Tuple::unpack(ten);
  std::printf("unpacked: %s, %lld\n", back[0].get<std::string>().c_str(),
              static_cast<long long>(back[1].get<std::int64_t>()));  // integers: std::int64_t

  // Elements of different types order by type first: every integer before every double.
  std::printf("(100,) before (2.5,): %s\n", Tuple{100} < Tuple{2.5} ? "yes" : "no");

  // A subspace is a prefix; [] and subspace() nest. Inside it, keys are prefix + pack(t).
  strata::Subspace app(Tuple{"app"});
  strata::Subspace orders = app["orders"];
  std::printf("orders' prefix: %s\n", printable(orders.key()).c_str());

  strata::Database db = strata::Database::open();
  db.run([&](strata::Transaction& tr) {
    tr.set(orders.pack(Tuple{"alice", 1}), "book");
    tr.set(orders.pack(Tuple{"alice", 2}), "lamp");
    tr.set(orders.pack(Tuple{"bob", 1}), "pen");
    tr.set(app["settings"].pack(Tuple{"theme"}), "dark");
  });
  // range(t) holds every key that extends t: here alice's orders, and nothing of bob's or of
  // the settings.
  auto alices =
      db.run([&](strata::Transaction& tr) { return tr.get_range(orders.range(Tuple{"alice"})); });
  for (const strata::KeyValue& row : alices) {
    Tuple key = orders.unpack(row.key);  // the tuple after the prefix
    std::printf("%s's order %lld: %s\n", key[0].get<std::string>().c_str(),
                static_cast<long long>(key[1].get<std::int64_t>()), row.value.c_str());
  }
  auto everything = db.run([&](strata::Transaction& tr) { return tr.get_range(app.range()); });
  std::printf("keys under (\"app\",): %zu\n", everything.size());
  std::string theme_key = app["settings"].pack(Tuple{"theme"});
  std::printf("orders contains the theme key: %s\n", orders.contains(theme_key) ? "yes" : "no");
}

// Output:
//   ("temp", 2) packs to \x02temp\x00\x15\x02
//   2 sorts before 10: yes
//   unpacked: temp, 10
//   (100,) before (2.5,): yes
//   orders' prefix: \x02app\x00\x02orders\x00
//   alice's order 1: book
//   alice's order 2: lamp
//   keys under ("app",): 4
//   orders contains the theme key: no
