// Atomic operations and versionstamps through the public API.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/strata.hpp"

#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using testing::ThrowsCode;
using testing::ThrowsCodeWith;

std::string le64(std::uint64_t v) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &v, 8);
  return s;
}
std::uint64_t from_le(std::string_view s) {
  std::uint64_t v = 0;
  std::memcpy(&v, s.data(), std::min<std::size_t>(8, s.size()));
  return v;
}

// FoundationDB's counters are 8-byte little-endian two's complement (its documentation of
// the ADD mutation: "little-endian integer", overflow wrapping).
TEST(Int64Operand, IsEightBytesLittleEndian) {
  EXPECT_EQ(int64_operand(1), std::string("\x01\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(int64_operand(-2), std::string("\xfe\xff\xff\xff\xff\xff\xff\xff", 8));
  EXPECT_EQ(int64_operand(0x0102030405060708), std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  for (std::int64_t v :
       {std::int64_t{0}, std::int64_t{-1}, std::numeric_limits<std::int64_t>::min(),
        std::numeric_limits<std::int64_t>::max()}) {
    EXPECT_EQ(int64_value(int64_operand(v)), v);
  }
}

TEST(Int64Operand, ShorterValuesAreZeroExtendedAndLongerOnesRefused) {
  EXPECT_EQ(int64_value(""), 0);
  EXPECT_EQ(int64_value(std::string("\xff", 1)), 255);
  EXPECT_EQ(int64_value(std::string("\x01\x02", 2)), 0x0201);
  EXPECT_THAT([] { (void)int64_value(std::string(9, '\0')); },
              ThrowsCodeWith(ErrorCode::invalid_argument, "8 bytes"));
}

TEST(AtomicOps, AtomicAddKeepsACounter) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) { tr.atomic_add("n", 5); });
  db.run([](Transaction& tr) { tr.atomic_add("n", -7); });
  EXPECT_EQ(db.run([](Transaction& tr) { return int64_value(*tr.get("n")); }), -2);
  db.run([](Transaction& tr) { tr.atomic_add("n", std::numeric_limits<std::int64_t>::max()); });
  db.run([](Transaction& tr) { tr.atomic_add("n", 3); });  // wraps, as FoundationDB's add
  EXPECT_EQ(db.run([](Transaction& tr) { return int64_value(*tr.get("n")); }),
            std::numeric_limits<std::int64_t>::min());
}

TEST(AtomicOps, ReadAfterAtomicOpAppliesItToTheStoredValue) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) { tr.set("n", le64(5)); });
  db.run([](Transaction& tr) {
    tr.atomic_op(MutationType::add, "n", le64(2));
    tr.atomic_op(MutationType::add, "n", le64(3));
    EXPECT_EQ(from_le(*tr.get("n")), 10u);
  });
  EXPECT_EQ(from_le(*db.run([](Transaction& tr) { return tr.get("n"); })), 10u);
}

TEST(AtomicOps, ReadOfAPendingAtomicOpAddsAReadConflict) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::add, "n", le64(1));
  (void)tr.get("n");  // depends on the stored value
  db.run([](Transaction& other) { other.set("n", le64(100)); });
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::not_committed));
}

TEST(AtomicOps, BlindAtomicOpsNeverConflict) {
  Database db = testing::open_database();
  Transaction a = db.create_transaction();
  Transaction b = db.create_transaction();
  (void)a.read_version();
  (void)b.read_version();
  a.atomic_op(MutationType::add, "n", le64(1));
  b.atomic_op(MutationType::add, "n", le64(1));
  a.commit();
  EXPECT_NO_THROW(b.commit());
  EXPECT_EQ(from_le(*db.run([](Transaction& tr) { return tr.get("n"); })), 2u);
}

TEST(AtomicOps, AtomicOpAfterSetFoldsIntoTheKnownValue) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) {
    tr.set("k", "ab");
    tr.atomic_op(MutationType::append_if_fits, "k", "cd");
    EXPECT_EQ(tr.get("k"), "abcd");
  });
  EXPECT_EQ(db.run([](Transaction& tr) { return tr.get("k"); }), "abcd");
}

TEST(AtomicOps, CompareAndClearRemovesTheKeyOnMatch) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) { tr.set("c", le64(0)); });
  db.run([](Transaction& tr) { tr.atomic_op(MutationType::compare_and_clear, "c", le64(0)); });
  EXPECT_EQ(db.run([](Transaction& tr) { return tr.get("c"); }), std::nullopt);
}

TEST(AtomicOps, OversizeOperandIsRejected) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.atomic_op(MutationType::add, "k", std::string(100'001, 'x')); },
              ThrowsCode(ErrorCode::value_too_large));
}

// FoundationDB's Increment workload: two blind adds per transaction, one in each half of
// the key space. The halves' sums stay equal, and no transaction ever conflicts.
TEST(AtomicOps, IncrementWorkloadBalancesAndNeverConflicts) {
  Database db = testing::open_database();
  constexpr int kThreads = 8, kTxns = 1000, kKeys = 20;
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      Transaction tr = db.create_transaction();
      for (int i = 0; i < kTxns; ++i) {
        for (;;) {
          try {
            tr.atomic_op(MutationType::add, "a" + std::to_string(rng() % kKeys), le64(1));
            tr.atomic_op(MutationType::add, "b" + std::to_string(rng() % kKeys), le64(1));
            tr.commit();
            tr.reset();
            break;
          } catch (const Error& e) {
            if (e.code() == 1020) conflicts.fetch_add(1);
            tr.on_error(e);
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  auto sum = [&](std::string_view prefix) {
    std::uint64_t s = 0;
    std::string end(prefix);
    end.back()++;
    for (const auto& kv : db.run([&](Transaction& tr) { return tr.get_range(prefix, end); })) {
      s += from_le(kv.value);
    }
    return s;
  };
  EXPECT_EQ(sum("a"), std::uint64_t{kThreads} * kTxns);
  EXPECT_EQ(sum("b"), sum("a"));
  EXPECT_EQ(conflicts.load(), 0);
}

// ---- Versionstamps ------------------------------------------------------------------

std::string stamped_key(std::string_view prefix) {
  std::string k(prefix);
  std::uint32_t offset = static_cast<std::uint32_t>(k.size());
  k.append(10, '\0');
  for (int i = 0; i < 4; ++i) k.push_back(static_cast<char>((offset >> (8 * i)) & 0xff));
  return k;
}

TEST(Versionstamp, KeyGetsTheCommitsStamp) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::set_versionstamped_key, stamped_key("log/"), "v");
  tr.commit();
  std::string stamp = tr.versionstamp();
  ASSERT_EQ(stamp.size(), 10u);
  std::uint64_t version = 0;
  for (int i = 0; i < 8; ++i) version = (version << 8) | static_cast<unsigned char>(stamp[i]);
  EXPECT_EQ(static_cast<Version>(version), tr.committed_version());
  EXPECT_EQ(db.run([&](Transaction& r) { return r.get("log/" + stamp); }), "v");
}

TEST(Versionstamp, ValueGetsTheCommitsStamp) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  std::string param = "id:" + std::string(10, '\0') + std::string("\x03\x00\x00\x00", 4);
  tr.atomic_op(MutationType::set_versionstamped_value, "k", param);
  tr.commit();
  EXPECT_EQ(db.run([](Transaction& r) { return r.get("k"); }), "id:" + tr.versionstamp());
}

TEST(Versionstamp, StampedKeysFromConcurrentCommitsSortInCommitOrder) {
  Database db = testing::open_database();
  constexpr int kThreads = 8, kEach = 300;
  std::vector<std::vector<std::pair<std::string, std::string>>> stamps(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Transaction tr = db.create_transaction();
        std::string value = std::to_string(t) + "/" + std::to_string(i);
        tr.atomic_op(MutationType::set_versionstamped_key, stamped_key("s/"), value);
        tr.commit();
        stamps[t].emplace_back(tr.versionstamp(), value);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<std::pair<std::string, std::string>> all;
  for (auto& v : stamps) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(std::adjacent_find(all.begin(), all.end(),
                               [](auto& a, auto& b) { return a.first == b.first; }),
            all.end())
      << "two commits got the same versionstamp";
  auto rows = db.run([](Transaction& tr) { return tr.get_range("s/", "s0"); });
  ASSERT_EQ(rows.size(), all.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].key, "s/" + all[i].first);
    EXPECT_EQ(rows[i].value, all[i].second);
  }
}

TEST(Versionstamp, OffsetThatLeavesNoRoomIsRejected) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  std::string bad = "abc" + std::string("\x00\x00\x00\x00", 4);  // 10 bytes at 0 don't fit
  EXPECT_THAT([&] { tr.atomic_op(MutationType::set_versionstamped_key, bad, "v"); },
              ThrowsCodeWith(ErrorCode::client_invalid_operation, "no room"));
  EXPECT_THAT([&] { tr.atomic_op(MutationType::set_versionstamped_value, "k", "ab"); },
              ThrowsCodeWith(ErrorCode::client_invalid_operation, "no 4-byte offset"));
}

TEST(Versionstamp, PendingStampedKeysAndValuesAreUnreadable) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::set_versionstamped_key, stamped_key("s/"), "v");
  EXPECT_THAT([&] { (void)tr.get_range("s/", "s0"); }, ThrowsCode(ErrorCode::accessed_unreadable));
  EXPECT_NO_THROW((void)tr.get("a"));
  tr.atomic_op(MutationType::set_versionstamped_value, "k",
               std::string(10, '\0') + std::string("\x00\x00\x00\x00", 4));
  EXPECT_THAT([&] { (void)tr.get("k"); }, ThrowsCode(ErrorCode::accessed_unreadable));
}

// FoundationDB sends a transaction's mutations in the order they were made, so an atomic
// operation after set_versionstamped_value works on the stamped value, and the key stays
// unreadable (FoundationDB: fdbclient/WriteMap.h, "mutate"): the stamped value is not dropped.
TEST(Versionstamp, AtomicOpAfterAStampedValueWorksOnTheStampedValue) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) { tr.set("k", "old"); });
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::set_versionstamped_value, "k",
               "id:" + std::string(10, '\0') + std::string("\x03\x00\x00\x00", 4));
  tr.atomic_op(MutationType::append_if_fits, "k", "!");
  EXPECT_THAT([&] { (void)tr.get("k"); }, ThrowsCode(ErrorCode::accessed_unreadable));
  EXPECT_THAT([&] { (void)tr.get_range("a", "z"); }, ThrowsCode(ErrorCode::accessed_unreadable));
  tr.commit();
  EXPECT_EQ(db.run([](Transaction& r) { return r.get("k"); }), "id:" + tr.versionstamp() + "!");
}

// A clear made after set_versionstamped_key clears the stamped key when the stamp puts it
// inside the cleared range (FoundationDB applies a transaction's mutations in order), and
// makes the cleared range readable again (FoundationDB: fdbclient/WriteMap.h, "clear").
TEST(Versionstamp, ClearRangeAfterAStampedKeyClearsIt) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) { tr.set("s/old", "x"); });
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::set_versionstamped_key, stamped_key("s/"), "v");
  tr.clear_range("s/", "s0");
  EXPECT_TRUE(tr.get_range("s/", "s0").empty());
  tr.commit();
  EXPECT_TRUE(db.run([](Transaction& r) { return r.get_range("s/", "s0"); }).empty());

  // A clear before the stamped key leaves it.
  Transaction before = db.create_transaction();
  before.clear_range("s/", "s0");
  before.atomic_op(MutationType::set_versionstamped_key, stamped_key("s/"), "kept");
  before.commit();

  // Clears of part of the keys a stamp may make: the stamped key goes only when its stamp
  // lands inside one.
  Transaction part = db.create_transaction();
  std::string rv(8, '\0');  // the read version, big-endian as in a stamp
  for (int i = 0; i < 8; ++i) {
    rv[i] = static_cast<char>(static_cast<std::uint64_t>(part.read_version()) >> (56 - 8 * i));
  }
  const std::string top(8, '\xff');  // above every version a commit reaches
  part.atomic_op(MutationType::set_versionstamped_key, stamped_key("p/"), "gone");
  part.atomic_op(MutationType::set_versionstamped_key, stamped_key("q/"), "kept");
  part.clear_range("p/", "p/" + top);
  part.clear_range("q/", "q/" + rv);
  part.clear_range("q/" + top, "q0");
  EXPECT_TRUE(part.get_range("p/", "p/" + top).empty());
  EXPECT_THAT([&] { (void)part.get_range("q/", "q0"); },
              ThrowsCode(ErrorCode::accessed_unreadable));
  part.commit();
  auto rows = db.run([](Transaction& r) { return r.get_range("", "\xff"); });
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "q/" + part.versionstamp());
  EXPECT_EQ(rows[1].key, "s/" + before.versionstamp());
  EXPECT_EQ(rows[1].value, "kept");
}

// Once a versionstamp may write a key, the key stays unreadable for the rest of the
// transaction, even after a set of it; a clear makes it readable again (FoundationDB:
// fdbclient/WriteMap.h, "Unreadable keys"; WriteMap "mutate" and "clear").
TEST(Versionstamp, AKeyAStampMayWriteStaysUnreadableAfterASetButNotAfterAClear) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::set_versionstamped_value, "k",
               std::string(10, '\0') + std::string("\x00\x00\x00\x00", 4));
  tr.set("k", "plain");
  EXPECT_THAT([&] { (void)tr.get("k"); }, ThrowsCode(ErrorCode::accessed_unreadable));
  EXPECT_THAT([&] { (void)tr.get_range("k", "l"); }, ThrowsCode(ErrorCode::accessed_unreadable));
  tr.atomic_op(MutationType::set_versionstamped_key, stamped_key("s/"), "v");
  const std::string top = "s/" + std::string(10, '\xff');  // the highest key the stamp may make
  tr.set(top, "x");
  EXPECT_THAT([&] { (void)tr.get(top); }, ThrowsCode(ErrorCode::accessed_unreadable));
  tr.clear("k");
  EXPECT_EQ(tr.get("k"), std::nullopt);
  tr.commit();
  EXPECT_EQ(db.run([](Transaction& r) { return r.get("k"); }), std::nullopt);
  EXPECT_EQ(db.run([&](Transaction& r) { return r.get(top); }), "x");
}

TEST(Versionstamp, BeforeCommitAndForReadOnlyTransactionsIsAnError) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { (void)tr.versionstamp(); }, ThrowsCode(ErrorCode::client_invalid_operation));
  (void)tr.get("x");
  tr.commit();
  EXPECT_THAT([&] { (void)tr.versionstamp(); }, ThrowsCode(ErrorCode::no_commit_version));
}

// FoundationDB counts a versionstamped key's offset bytes against the key limit: the key
// as passed, not the template, must fit in 10,000 bytes.
TEST(Versionstamp, AStampedKeysOffsetCountsAgainstTheKeyLimit) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  const std::string key = stamped_key(std::string(9'990, 'k'));  // template of 10,000 bytes
  ASSERT_EQ(key.size(), 10'004u);
  EXPECT_THAT([&] { tr.atomic_op(MutationType::set_versionstamped_key, key, "v"); },
              ThrowsCode(ErrorCode::key_too_large));
}

// FoundationDB's order of checks: the key's place (2004), the type, the key's size (2102),
// the operand's size (2103), then a stamp's offset (2000).
TEST(AtomicOps, ErrorsComeInFoundationDBsOrder) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT(
      [&] { tr.atomic_op(MutationType::add, std::string(10'001, 'k'), std::string(100'001, 'x')); },
      ThrowsCode(ErrorCode::key_too_large));
  EXPECT_THAT(
      [&] {
        tr.atomic_op(MutationType::set_versionstamped_key,
                     std::string("\xff\x01\x02\x03\x00\x00\x00\x00", 8), "v");
      },
      ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT([&] { tr.atomic_op(static_cast<MutationType>(99), std::string(10'001, 'k'), "x"); },
              ThrowsCode(ErrorCode::invalid_mutation_type));
  EXPECT_THAT(
      [&] { tr.atomic_op(MutationType::set_versionstamped_value, "k", std::string(100'001, 'x')); },
      ThrowsCode(ErrorCode::value_too_large));
}

// Before the transaction has a read version, a stamped key makes unreadable every key its
// stamp could make from the zero stamp up, as FoundationDB's (getVersionstampKeyRange).
TEST(Versionstamp, AStampedKeyBeforeAnyReadIsUnreadableFromTheZeroStamp) {
  Database db = testing::open_database();
  const std::string low = "q/" + std::string(10, '\0');
  db.run([&](Transaction& tr) { tr.set(low, "stored"); });
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::set_versionstamped_key, stamped_key("q/"), "v");
  EXPECT_THAT([&] { (void)tr.get(low); }, ThrowsCode(ErrorCode::accessed_unreadable));
  EXPECT_EQ(tr.get("q."), std::nullopt);  // below the template: readable
}

// With read-your-writes, FoundationDB keeps a stamped key's operation at its lowest key
// (the stamp above the read version, or zeros, and the offset bytes) and sends the
// transaction's clears before it: a later clear removes the operation when it covers that
// key, not when it covers the key the stamp makes. Without read-your-writes the operations
// go in order, so a later clear removes the key it covers.
TEST(Versionstamp, ALaterClearRemovesAStampedKeyAsFoundationDBsWriteMapDoes) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) { tr.set("x", "1"); });  // a read version of at least 1
  // Above the lowest key "q/" 00x10 <offset>, below every stamp a commit can make.
  const std::string above_lowest = "q/" + std::string(7, '\0') + "\x01";
  Transaction kept = db.create_transaction();
  kept.atomic_op(MutationType::set_versionstamped_key, stamped_key("q/"), "v");
  kept.clear_range(above_lowest, "q0");
  kept.commit();
  EXPECT_EQ(db.run([&](Transaction& r) { return r.get("q/" + kept.versionstamp()); }), "v");

  Transaction removed = db.create_transaction();
  removed.atomic_op(MutationType::set_versionstamped_key, stamped_key("r/"), "v");
  removed.clear_range("r/", "r/" + std::string(10, '\0') + "\x03");  // the lowest key only
  removed.commit();
  EXPECT_EQ(db.run([&](Transaction& r) { return r.get("r/" + removed.versionstamp()); }),
            std::nullopt);

  Transaction in_order = db.create_transaction();
  in_order.set_read_your_writes(false);
  in_order.atomic_op(MutationType::set_versionstamped_key, stamped_key("s/"), "v");
  in_order.clear_range("s/" + std::string(7, '\0') + "\x01", "s0");
  in_order.commit();
  EXPECT_EQ(db.run([&](Transaction& r) { return r.get("s/" + in_order.versionstamp()); }),
            std::nullopt);
}

}  // namespace
}  // namespace strata
