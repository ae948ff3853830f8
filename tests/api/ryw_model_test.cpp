// Read-your-writes against a std::map model (FoundationDB's RyowCorrectness): random
// set / clear / clear_range / get / get_range (random limits, both directions, snapshot
// and serializable) inside one transaction over a pre-populated store. Every read must
// equal the model (store + own writes); after commit the whole store must equal it, and
// after a reset the store must be unchanged.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include "api/api_test_util.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using apitest::Store;

// Keys are `prefix` + 1-3 symbols of a 6-symbol alphabet (258 keys), so ranges overlap a
// lot. The second alphabet has bytes on both sides of 0x80 and a NUL, behind a prefix
// longer than 8 bytes: keys must order as unsigned bytes, however they are compared.
struct KeySpace {
  std::string prefix;
  std::string alphabet;
};
const KeySpace kLetters{"", "abcdef"};
const KeySpace kHighBytes{"a/long/shared/prefix/", std::string("\x00\x01\x7f\x80\xfe!", 6)};

class RywModel {
 public:
  RywModel(std::uint32_t seed, KeySpace space) : rng_(seed), space_(std::move(space)) {}

  std::string key() {
    std::string k = space_.prefix;
    int len = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < len; ++i) k.push_back(space_.alphabet[rng_() % space_.alphabet.size()]);
    return k;
  }
  std::string value() { return "v" + std::to_string(rng_() % 100000); }
  int below(int n) { return static_cast<int>(rng_() % static_cast<unsigned>(n)); }

  // Rows of `model` in [begin, end) with the given options, as get_range returns them.
  static std::vector<KeyValue> range(const Store& model, const std::string& begin,
                                     const std::string& end, RangeOptions o) {
    std::vector<KeyValue> rows;
    if (begin >= end) return rows;
    auto lo = model.lower_bound(begin), hi = model.lower_bound(end);
    auto full = [&] { return o.limit > 0 && rows.size() == static_cast<std::size_t>(o.limit); };
    if (!o.reverse) {
      for (auto it = lo; it != hi && !full(); ++it) rows.push_back({it->first, it->second});
    } else {
      for (auto it = hi; it != lo && !full();) {
        --it;
        rows.push_back({it->first, it->second});
      }
    }
    return rows;
  }

 private:
  std::mt19937 rng_;
  KeySpace space_;
};

// Printable bytes as they are, others as \\xNN.
std::string printable(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string describe(const std::vector<KeyValue>& rows) {
  std::ostringstream out;
  for (const KeyValue& kv : rows) out << printable(kv.key) << "=" << kv.value << " ";
  return out.str();
}

// Runs `iterations` transactions of random operations, each checked against the model.
void run_ryw_model(std::uint32_t seed, int iterations, const KeySpace& space) {
  RywModel gen(seed, space);
  Database db = testing::open_database();
  Store store;
  while (store.size() < 200) store[gen.key()] = gen.value();
  apitest::put_all(db, store);

  std::string into;  // reused by every get into a string
  for (int iter = 0; iter < iterations; ++iter) {
    Transaction tr = db.create_transaction();
    Store model = store;
    std::ostringstream log;  // the operations so far, for a failing iteration
    int ops = 5 + gen.below(40);
    for (int op = 0; op < ops; ++op) {
      int kind = gen.below(100);
      bool snapshot = gen.below(2) == 0;
      if (kind < 25) {
        std::string k = gen.key(), v = gen.value();
        log << "set(" << printable(k) << ") ";
        tr.set(k, v);
        model[k] = v;
      } else if (kind < 35) {
        std::string k = gen.key();
        log << "clear(" << printable(k) << ") ";
        tr.clear(k);
        model.erase(k);
      } else if (kind < 45) {
        std::string b = gen.key(), e = gen.key();
        if (b > e) std::swap(b, e);
        log << "clear_range(" << printable(b) << "," << printable(e) << ") ";
        tr.clear_range(b, e);
        model.erase(model.lower_bound(b), model.lower_bound(e));
      } else if (kind < 65) {
        std::string k = gen.key();
        log << "get(" << printable(k) << (snapshot ? ",snap" : "") << ") ";
        std::optional<std::string> got = snapshot ? tr.snapshot().get(k) : tr.get(k);
        auto it = model.find(k);
        std::optional<std::string> want;
        if (it != model.end()) want = it->second;
        ASSERT_EQ(got, want) << "seed " << seed << " iteration " << iter << ": " << log.str();
        // The same read into a reused string.
        bool present = snapshot ? tr.snapshot().get(k, into) : tr.get(k, into);
        ASSERT_EQ(present, want.has_value()) << "seed " << seed << " iteration " << iter;
        ASSERT_EQ(into, want.value_or("")) << "seed " << seed << " iteration " << iter;
      } else {
        std::string b = gen.key(), e = gen.key();
        if (gen.below(4) != 0 && b > e) std::swap(b, e);  // sometimes inverted: empty
        if (gen.below(10) == 0) b = "";
        if (gen.below(10) == 0) e = "\xff";
        RangeOptions o{.limit = gen.below(3) == 0 ? 0 : gen.below(12),
                       .reverse = gen.below(2) == 0};
        log << "get_range(" << printable(b) << "," << printable(e) << ",limit " << o.limit
            << (o.reverse ? ",reverse" : "") << (snapshot ? ",snap" : "") << ") ";
        std::vector<KeyValue> got =
            snapshot ? tr.snapshot().get_range(b, e, o) : tr.get_range(b, e, o);
        std::vector<KeyValue> want = RywModel::range(model, b, e, o);
        ASSERT_EQ(got, want) << "seed " << seed << " iteration " << iter << ": " << log.str()
                             << "\n got:  " << describe(got) << "\n want: " << describe(want);
        std::vector<KeyValue> seen;  // the same read, visited
        auto copy = [&](std::string_view k, std::string_view v) {
          seen.push_back({std::string(k), std::string(v)});
        };
        snapshot ? tr.snapshot().visit_range(b, e, o, copy) : tr.visit_range(b, e, o, copy);
        ASSERT_EQ(seen, want) << "seed " << seed << " iteration " << iter << ": " << log.str()
                              << "\n visited: " << describe(seen);
      }
    }
    if (gen.below(5) == 0) {
      tr.reset();  // abandoned: the store must not change
    } else {
      tr.commit();
      store = std::move(model);
    }
    ASSERT_EQ(apitest::dump(db), store)
        << "seed " << seed << " iteration " << iter << " " << log.str();
  }
}

TEST(RywModel, RandomOperationsMatchMapModel) {
  run_ryw_model(20240601, apitest::scaled(3000, 400), kLetters);
}

TEST(RywModel, RandomOperationsMatchMapModelSecondSeed) {
  run_ryw_model(7, apitest::scaled(1500, 200), kLetters);
}

TEST(RywModel, RandomOperationsOnLongBinaryKeysMatchMapModel) {
  run_ryw_model(99, apitest::scaled(2000, 300), kHighBytes);
}

}  // namespace
}  // namespace strata
