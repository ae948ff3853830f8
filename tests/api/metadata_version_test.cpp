// FoundationDB's metadata version key, "\xff/metadataVersion": the one system key every
// transaction may read, watch and add as a read conflict; written only by a versionstamped
// value with the stamp at offset 0.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/strata.hpp"

#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using namespace std::chrono_literals;
using testing::ThrowsCode;

constexpr std::string_view kKey = "\xff/metadataVersion";
const std::string kOperand(14, '\0');  // ten stamp bytes, then offset 0 (little-endian)
const std::string kKeyEnd = std::string(kKey) + '\0';

// Bumps the metadata version; returns the commit's versionstamp.
std::string bump(Database& db) {
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::set_versionstamped_value, kKey, kOperand);
  tr.commit();
  return tr.versionstamp();
}

std::optional<std::string> metadata_version(Database& db) {
  Transaction tr = db.create_transaction();
  return tr.get(kKey);
}

TEST(MetadataVersion, IsAbsentUntilWrittenThenEachWritersVersionstamp) {
  Database db = testing::open_database();
  EXPECT_EQ(metadata_version(db), std::nullopt);
  const std::string first = bump(db);
  EXPECT_EQ(metadata_version(db), first);
  const std::string second = bump(db);
  EXPECT_GT(second, first);
  EXPECT_EQ(metadata_version(db), second);
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.snapshot().get(kKey), second);
}

TEST(MetadataVersion, AnyOtherWriteIsRefused) {
  STRATA_SKIP_ON_CLUSTER(
      "\\xff/metadataVersion outlives each test on the shared cluster, and no transaction may "
      "clear it");
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.set(kKey, "x"); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { tr.atomic_op(MutationType::add, kKey, std::string(8, '\1')); },
              ThrowsCode(ErrorCode::client_invalid_operation));
  // A stamp anywhere else in the value, or with bytes of its own, is not the fixed operand.
  std::string elsewhere = std::string(12, '\0') + std::string("\x02\0\0\0", 4);
  EXPECT_THAT([&] { tr.atomic_op(MutationType::set_versionstamped_value, kKey, elsewhere); },
              ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { tr.clear(kKey); }, ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT([&] { tr.clear_range(kKey, kKeyEnd); },
              ThrowsCode(ErrorCode::key_outside_legal_range));
  // Its neighbours stay system keys.
  EXPECT_THAT([&] { (void)tr.get("\xff/metadataVersiom"); },
              ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT([&] { (void)tr.get(kKeyEnd); }, ThrowsCode(ErrorCode::key_outside_legal_range));
  tr.commit();
  EXPECT_EQ(metadata_version(db), std::nullopt);
}

TEST(MetadataVersion, IsUnreadableInTheTransactionThatWritesIt) {
  Database db = testing::open_database();
  bump(db);
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::set_versionstamped_value, kKey, kOperand);
  EXPECT_THAT([&] { (void)tr.get(kKey); }, ThrowsCode(ErrorCode::accessed_unreadable));
}

// Reading it is what lets a layer trust its cache: a bump between the read and the
// commit fails the commit.
TEST(MetadataVersion, AReadConflictsWithABump) {
  Database db = testing::open_database();
  bump(db);
  Transaction reader = db.create_transaction();
  (void)reader.get(kKey);
  reader.set("data", "derived from the cached metadata");
  bump(db);
  EXPECT_THAT([&] { reader.commit(); }, ThrowsCode(ErrorCode::not_committed));

  Transaction snapshot_reader = db.create_transaction();
  (void)snapshot_reader.snapshot().get(kKey);
  snapshot_reader.set("data", "x");
  bump(db);
  EXPECT_NO_THROW(snapshot_reader.commit());  // a snapshot read adds no conflict
}

TEST(MetadataVersion, ItsExactRangeIsAReadConflictRangeAndNothingWider) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  (void)tr.read_version();  // the conflicts are checked from here
  tr.add_read_conflict_range(kKey, kKeyEnd);
  tr.add_read_conflict_key(kKey);
  EXPECT_THAT([&] { tr.add_read_conflict_range(kKey, std::string(kKey) + "\x01"); },
              ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT([&] { tr.add_write_conflict_range(kKey, kKeyEnd); },
              ThrowsCode(ErrorCode::key_outside_legal_range));
  tr.set("data", "x");
  bump(db);
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::not_committed));
}

TEST(MetadataVersion, AWatchFiresOnABump) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch(kKey);
  tr.commit();
  EXPECT_FALSE(w.wait_for(0ms));
  std::thread bumper([&] { bump(db); });
  w.wait();  // returns only once fired
  bumper.join();
}

TEST(MetadataVersion, IsNotInARangeReadOfTheUserKeys) {
  Database db = testing::open_database();
  bump(db);
  Transaction tr = db.create_transaction();
  EXPECT_TRUE(tr.get_range("", "\xff").empty());
}

}  // namespace
}  // namespace strata
