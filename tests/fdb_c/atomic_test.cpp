// fdb_transaction_atomic_op with FoundationDB's op codes: the worked examples of
// FoundationDB's fdbclient/include/fdbclient/Atomic.h, versionstamped keys and values
// (api-common.rst.inc, SET_VERSIONSTAMPED_KEY/VALUE), and the errors.
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

std::string b(std::initializer_list<int> bytes) {
  std::string s;
  for (int c : bytes) s += static_cast<char>(c);
  return s;
}

class Atomics : public FdbTest {
 protected:
  // Stores `existing` (or nothing) at a key, commits `op(param)` on it in a second
  // transaction, and returns what a third one reads.
  std::optional<std::string> apply(const std::optional<std::string>& existing, FDBMutationType op,
                                   const std::string& param) {
    std::string key = k("x");
    EXPECT_EQ(run([&](const Tr& tr) {
                if (existing)
                  set(tr, key, *existing);
                else
                  clear(tr, key);
                return 0;
              }),
              0);
    Tr tr = make_tr();
    atomic(tr, key, param, op);
    EXPECT_EQ(commit(tr), 0);
    Value v = read(key);
    EXPECT_EQ(v.error, 0);
    if (!v.present) return std::nullopt;
    return v.value;
  }
};

#define EXPECT_ATOMIC(existing, op, param, result)                           \
  do {                                                                       \
    std::optional<std::string> got = apply(existing, op, param);             \
    std::optional<std::string> want = result;                                \
    EXPECT_EQ(got.has_value(), want.has_value()) << #op << " " << #existing; \
    if (got && want) {                                                       \
      EXPECT_EQ(hex(*got), hex(*want)) << #op << " " << #existing;           \
    }                                                                        \
  } while (0)

const std::optional<std::string> kAbsent = std::nullopt;

TEST_F(Atomics, Add) {
  EXPECT_ATOMIC(kAbsent, FDB_MUTATION_TYPE_ADD, b({1, 0}), b({1, 0}));
  EXPECT_ATOMIC(b({0xff}), FDB_MUTATION_TYPE_ADD, b({1, 0}), b({0, 1}));
  EXPECT_ATOMIC(b({1, 2, 3}), FDB_MUTATION_TYPE_ADD, b({1}), b({2}));
  EXPECT_ATOMIC(b({0xff, 0xff}), FDB_MUTATION_TYPE_ADD, b({1, 0}), b({0, 0}));
  EXPECT_ATOMIC(std::string(), FDB_MUTATION_TYPE_ADD, b({5}), b({5}));
  EXPECT_ATOMIC(b({5}), FDB_MUTATION_TYPE_ADD, std::string(), std::string());
  // Two's complement: adding -1 to 10.
  EXPECT_ATOMIC(le64(10), FDB_MUTATION_TYPE_ADD, le64(-1), le64(9));
}

TEST_F(Atomics, BitAnd) {
  EXPECT_ATOMIC(kAbsent, FDB_MUTATION_TYPE_BIT_AND, b({0x0f}), b({0x0f}));
  EXPECT_ATOMIC(b({0xff, 0x0f}), FDB_MUTATION_TYPE_BIT_AND, b({0x0f}), b({0x0f}));
  EXPECT_ATOMIC(b({0x0f}), FDB_MUTATION_TYPE_BIT_AND, b({0xff, 0xff}), b({0x0f, 0}));
  EXPECT_ATOMIC(std::string(), FDB_MUTATION_TYPE_BIT_AND, b({0xff}), b({0}));
  EXPECT_EQ(FDB_MUTATION_TYPE_AND, FDB_MUTATION_TYPE_BIT_AND);
}

TEST_F(Atomics, BitOrAndXor) {
  EXPECT_ATOMIC(b({1}), FDB_MUTATION_TYPE_BIT_OR, b({0x10, 0x10}), b({0x11, 0x10}));
  EXPECT_ATOMIC(b({1, 2, 3}), FDB_MUTATION_TYPE_BIT_OR, b({0x10}), b({0x11}));
  EXPECT_ATOMIC(kAbsent, FDB_MUTATION_TYPE_BIT_OR, b({7}), b({7}));
  EXPECT_ATOMIC(b({0x0f, 0x0f}), FDB_MUTATION_TYPE_BIT_XOR, b({0xff}), b({0xf0}));
  EXPECT_ATOMIC(kAbsent, FDB_MUTATION_TYPE_BIT_XOR, b({7}), b({7}));
}

TEST_F(Atomics, AppendIfFits) {
  EXPECT_ATOMIC(kAbsent, FDB_MUTATION_TYPE_APPEND_IF_FITS, "xy", "xy");
  EXPECT_ATOMIC(std::string("ab"), FDB_MUTATION_TYPE_APPEND_IF_FITS, "cd", "abcd");
  EXPECT_ATOMIC(std::string("ab"), FDB_MUTATION_TYPE_APPEND_IF_FITS, "", "ab");
  // Past 100,000 bytes the value is left as it was, without an error.
  std::string big(99999, 'v');
  EXPECT_ATOMIC(big, FDB_MUTATION_TYPE_APPEND_IF_FITS, "ab", big);
  EXPECT_ATOMIC(big, FDB_MUTATION_TYPE_APPEND_IF_FITS, "a", big + "a");
}

TEST_F(Atomics, MaxAndMin) {
  EXPECT_ATOMIC(b({0, 1}), FDB_MUTATION_TYPE_MAX, b({0xff}), b({0xff}));
  EXPECT_ATOMIC(b({5}), FDB_MUTATION_TYPE_MAX, b({3, 0}), b({5, 0}));
  EXPECT_ATOMIC(kAbsent, FDB_MUTATION_TYPE_MAX, b({3}), b({3}));
  EXPECT_ATOMIC(b({5}), FDB_MUTATION_TYPE_MIN, b({3, 0}), b({3, 0}));
  EXPECT_ATOMIC(std::string(), FDB_MUTATION_TYPE_MIN, b({7}), b({0}));
  EXPECT_ATOMIC(b({0, 1}), FDB_MUTATION_TYPE_MIN, b({0xff}), b({0}));
  EXPECT_ATOMIC(kAbsent, FDB_MUTATION_TYPE_MIN, b({3}), b({3}));
}

TEST_F(Atomics, ByteMinAndByteMax) {
  EXPECT_ATOMIC(std::string("abc"), FDB_MUTATION_TYPE_BYTE_MIN, "abd", "abc");
  EXPECT_ATOMIC(std::string("ab"), FDB_MUTATION_TYPE_BYTE_MIN, "abc", "ab");
  EXPECT_ATOMIC(kAbsent, FDB_MUTATION_TYPE_BYTE_MIN, "q", "q");
  EXPECT_ATOMIC(std::string(), FDB_MUTATION_TYPE_BYTE_MAX, "a", "a");
  EXPECT_ATOMIC(std::string("abc"), FDB_MUTATION_TYPE_BYTE_MAX, "abd", "abd");
  EXPECT_ATOMIC(kAbsent, FDB_MUTATION_TYPE_BYTE_MAX, "q", "q");
}

TEST_F(Atomics, CompareAndClear) {
  EXPECT_ATOMIC(std::string("x"), FDB_MUTATION_TYPE_COMPARE_AND_CLEAR, "x", kAbsent);
  EXPECT_ATOMIC(std::string("x"), FDB_MUTATION_TYPE_COMPARE_AND_CLEAR, "y", std::string("x"));
  EXPECT_ATOMIC(kAbsent, FDB_MUTATION_TYPE_COMPARE_AND_CLEAR, "x", kAbsent);
}

TEST_F(Atomics, CounterPattern) {
  for (int i = 0; i < 3; ++i) {
    Tr tr = make_tr();
    atomic(tr, k("n"), le32(1), FDB_MUTATION_TYPE_ADD);
    ASSERT_EQ(commit(tr), 0);
  }
  EXPECT_EQ(from_le(read(k("n")).value), 3);
  Tr tr = make_tr();
  atomic(tr, k("n"), le32(static_cast<uint32_t>(-3)), FDB_MUTATION_TYPE_ADD);
  atomic(tr, k("n"), le32(0), FDB_MUTATION_TYPE_COMPARE_AND_CLEAR);
  ASSERT_EQ(commit(tr), 0);
  EXPECT_FALSE(read(k("n")).present);
}

TEST_F(Atomics, ReadAfterAtomicInTheSameTransaction) {
  ASSERT_EQ(write(k("n"), le64(40)), 0);
  Tr tr = make_tr();
  atomic(tr, k("n"), le64(2), FDB_MUTATION_TYPE_ADD);
  Value v = get(tr, k("n"));
  ASSERT_EQ(v.error, 0);
  EXPECT_EQ(from_le(v.value), 42);
  // Over a value the transaction set itself: computed at once.
  set(tr, k("m"), le64(1));
  atomic(tr, k("m"), le64(1), FDB_MUTATION_TYPE_ADD);
  atomic(tr, k("m"), le64(5), FDB_MUTATION_TYPE_MAX);
  EXPECT_EQ(from_le(get(tr, k("m")).value), 5);
  ASSERT_EQ(commit(tr), 0);
  EXPECT_EQ(from_le(read(k("n")).value), 42);
  EXPECT_EQ(from_le(read(k("m")).value), 5);
}

TEST_F(Atomics, AtomicOpsAddNoReadConflict) {
  ASSERT_EQ(write(k("n"), le64(1)), 0);
  Tr tr = make_tr();
  ASSERT_GT(read_version(tr), 0);
  atomic(tr, k("n"), le64(1), FDB_MUTATION_TYPE_ADD);
  ASSERT_EQ(write(k("n"), le64(100)), 0);
  EXPECT_EQ(commit(tr), 0);
  EXPECT_EQ(from_le(read(k("n")).value), 101);
}

TEST_F(Atomics, AtomicOpsMakeOtherReadersConflict) {
  Tr reader = make_tr();
  ASSERT_EQ(get(reader, k("n")).error, 0);
  Tr tr = make_tr();
  atomic(tr, k("n"), le64(1), FDB_MUTATION_TYPE_ADD);
  ASSERT_EQ(commit(tr), 0);
  set(reader, k("z"), "x");
  EXPECT_EQ(commit(reader), 1020);
}

TEST_F(Atomics, UnknownOpCodeIsInvalidMutationType) {
  for (int op : {0, 1, 3, 5, 10, 11, 99}) {
    Tr tr = make_tr();
    atomic(tr, k("n"), le64(1), op);
    EXPECT_EQ(commit(tr), 2018) << "op " << op;
  }
  EXPECT_FALSE(read(k("n")).present);
}

TEST_F(Atomics, UnknownOpCodeFailsTheNextRead) {
  Tr tr = make_tr();
  atomic(tr, k("n"), le64(1), 99);
  EXPECT_EQ(get(tr, k("other")).error, 2018);
}

TEST_F(Atomics, OversizedKeyOrOperand) {
  {
    Tr tr = make_tr();
    atomic(tr, k(std::string(10001, 'k')), le64(1), FDB_MUTATION_TYPE_ADD);
    EXPECT_EQ(commit(tr), 2102);
  }
  {
    Tr tr = make_tr();
    atomic(tr, k("n"), std::string(100001, 'v'), FDB_MUTATION_TYPE_APPEND_IF_FITS);
    EXPECT_EQ(commit(tr), 2103);
  }
  {
    Tr tr = make_tr();
    atomic(tr, "\xff/n", le64(1), FDB_MUTATION_TYPE_ADD);
    EXPECT_EQ(commit(tr), 2004);
  }
}

// ---- Versionstamps ----------------------------------------------------------------------------

TEST_F(Atomics, VersionstampedKey) {
  std::string head = k("vs/");
  std::string key = head + std::string(10, '\0') + "z" + le32(static_cast<uint32_t>(head.size()));
  Tr tr = make_tr();
  atomic(tr, key, "value", FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_EQ(commit(tr), 0);
  ASSERT_TRUE(wait_ready_for(vs));
  Key stamp = key_of(vs.get());
  ASSERT_EQ(stamp.error, 0);
  ASSERT_EQ(stamp.key.size(), 10u);

  Tr check = make_tr();
  Range r = get_range(check, head, head + "\xff");
  ASSERT_EQ(r.error, 0);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(hex(r.rows[0].first), hex(head + stamp.key + "z"));
  EXPECT_EQ(r.rows[0].second, "value");
}

TEST_F(Atomics, VersionstampedValue) {
  std::string param = "ab" + std::string(10, '\0') + "cd" + le32(2);
  Tr tr = make_tr();
  atomic(tr, k("v"), param, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_EQ(commit(tr), 0);
  ASSERT_TRUE(wait_ready_for(vs));
  Key stamp = key_of(vs.get());
  ASSERT_EQ(stamp.error, 0);
  EXPECT_EQ(hex(read(k("v")).value), hex("ab" + stamp.key + "cd"));
  EXPECT_EQ(from_be(stamp.key.substr(0, 8)), committed_version(tr));
}

TEST_F(Atomics, VersionstampedValueKeyIsUnreadableInItsTransaction) {
  std::string param = std::string(10, '\0') + le32(0);
  Tr tr = make_tr();
  atomic(tr, k("v"), param, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
  EXPECT_EQ(get(tr, k("v")).error, 1036);
}

TEST_F(Atomics, BadVersionstampOffsetIsClientInvalidOperation) {
  {
    Tr tr = make_tr();  // offset past the end of the key
    std::string key = k("vs/") + std::string(10, '\0') + le32(1000);
    atomic(tr, key, "v", FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
    EXPECT_EQ(commit(tr), 2000);
  }
  {
    Tr tr = make_tr();  // shorter than the 4-byte offset
    atomic(tr, "ab", "v", FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
    EXPECT_EQ(commit(tr), 2000);
  }
  {
    Tr tr = make_tr();  // value offset leaves fewer than 10 bytes
    atomic(tr, k("v"), std::string(5, '\0') + le32(0), FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    EXPECT_EQ(commit(tr), 2000);
  }
  Tr check = make_tr();
  EXPECT_TRUE(get_range(check, prefix(), prefix_end()).rows.empty());
}

// FoundationDB's codes 18 (MinV2) and 19 (AndV2), the semantics its client gives MIN and
// BIT_AND from API 510 on, are taken as they are, as its client takes them.
TEST_F(Atomics, TheCodesOfMinV2AndAndV2AreMinAndBitAnd) {
  EXPECT_ATOMIC(b({0x0f}), static_cast<FDBMutationType>(19), b({0xff}), b({0x0f}));
  EXPECT_ATOMIC(kAbsent, static_cast<FDBMutationType>(19), b({0x07}), b({0x07}));
  EXPECT_ATOMIC(b({0x09}), static_cast<FDBMutationType>(18), b({0x07}), b({0x07}));
  EXPECT_ATOMIC(kAbsent, static_cast<FDBMutationType>(18), b({0x07}), b({0x07}));
}

// An atomic operation whose code names none is refused after the key's checks, as
// FoundationDB's ReadYourWritesTransaction::atomicOp (fdbclient/ReadYourWrites.cpp)
// refuses a key outside the legal range (2004) before the type (invalid_mutation_type,
// 2018).
TEST_F(Atomics, AnAtomicOperationOutsideTheLegalRangeIsRefusedForItsKeyFirst) {
  Tr outside = make_tr();
  atomic(outside, std::string("\xff\xff/x"), "", FDBMutationType(99));
  EXPECT_EQ(commit(outside), 2004);
  Tr inside = make_tr();
  atomic(inside, k("x"), "", FDBMutationType(99));
  EXPECT_EQ(commit(inside), 2018);
}

}  // namespace
}  // namespace fdbc_test
