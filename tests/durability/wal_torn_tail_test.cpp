// Torn tails versus corruption: a record cut at any byte, or with a bad checksum, at the
// end of the newest segment is cut off, and so is damage in an unsynced write that a power
// loss persisted out of order; damage anywhere else is corrupt_data naming the file and
// offset, never silent loss.
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/coding.hpp"
#include "base/crc32c.hpp"
#include "durability/wal_format.hpp"
#include "durability/wal_writer.hpp"
#include "support/error_matchers.hpp"
#include "support/fault_file_system.hpp"
#include "wal_test_util.hpp"

namespace dur = strata::durability;
using strata::ErrorCode;
using strata::Version;
using strata::testing::FaultFileSystem;
using strata::testing::payload_for;
using strata::testing::read_log;
using strata::testing::Record;
using strata::testing::recover_log;
using strata::testing::ThrowsCode;
using strata::testing::ThrowsCodeWith;
using strata::testing::wal_segments;

namespace {

constexpr std::size_t header = dur::wal::kRecordHeaderSize;

// Rewrites the header of the segment at `path` (first version 1) with format version `format` and a
// valid checksum.
void set_format_version(FaultFileSystem& fs, const std::filesystem::path& path,
                        std::uint8_t format) {
  const std::string data = fs.contents(path);
  std::string header_bytes;
  dur::wal::append_file_header(header_bytes, 1);
  header_bytes[8] = static_cast<char>(format);
  const std::uint32_t crc = strata::base::crc32c::value(header_bytes.data(), 20);
  strata::base::encode_fixed32(header_bytes.data() + 20, strata::base::crc32c::mask(crc));
  fs.set_contents(path, header_bytes + data.substr(dur::wal::kFileHeaderSize));
}

class WalTornTailTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_.create_dir(dir_); }

  // Writes versions first..last into one segment, flushed and synced one by one (each
  // record after the first marked after_sync), or with `one_group` all at once (none
  // marked); returns the records.
  std::vector<Record> write(Version first, Version last, Version prev, bool one_group = false) {
    std::vector<Record> records;
    dur::WalWriter writer(fs_, dir_, prev);
    for (Version v = first; v <= last; ++v) {
      records.emplace_back(v, payload_for(v, 10));
      writer.append(v, records.back().second);
      if (!one_group) writer.flush(true);
    }
    writer.flush(true);
    writer.close();
    return records;
  }
  std::vector<Record> write_one_group(Version first, Version last, Version prev) {
    return write(first, last, prev, /*one_group=*/true);
  }
  std::filesystem::path segment(Version first) const { return dir_ / dur::wal_file_name(first); }
  // Offset of record `index` (0-based) in a segment of payload_for(v, 10) records.
  static std::size_t offset_of(const std::vector<Record>& records, std::size_t index) {
    std::size_t at = dur::wal::kFileHeaderSize;
    for (std::size_t i = 0; i < index; ++i) at += header + records[i].second.size();
    return at;
  }

  FaultFileSystem fs_;
  const std::filesystem::path dir_ = "/db";
};

TEST_F(WalTornTailTest, EveryCutOfTheLastRecordKeepsExactlyTheCompleteRecords) {
  const auto records = write(1, 8, 0);
  const std::string full = fs_.contents(segment(1));
  const std::size_t last_start = offset_of(records, 7);
  ASSERT_EQ(full.size(), last_start + header + records[7].second.size());
  for (std::size_t cut = last_start; cut <= full.size(); ++cut) {
    fs_.set_contents(segment(1), full.substr(0, cut));
    Version last = -1;
    const auto got = recover_log(fs_, dir_, &last);
    const std::size_t complete = cut == full.size() ? 8 : 7;
    ASSERT_EQ(got, std::vector<Record>(records.begin(), records.begin() + complete)) << cut;
    EXPECT_EQ(last, static_cast<Version>(complete));
    // The torn bytes are gone from the file, so appending after recovery is clean.
    EXPECT_EQ(fs_.contents(segment(1)).size(), complete == 8 ? full.size() : last_start) << cut;
  }
}

TEST_F(WalTornTailTest, AppendsAfterATruncatedTailReadBackCleanly) {
  const auto records = write(1, 4, 0);
  const std::string full = fs_.contents(segment(1));
  fs_.set_contents(segment(1), full.substr(0, full.size() - 3));
  Version last = 0;
  EXPECT_EQ(recover_log(fs_, dir_, &last).size(), 3u);
  auto more = write(10, 12, last);
  dur::WalReadResult result;
  const auto got = read_log(fs_, dir_, 0, &result);
  EXPECT_EQ(result.end, dur::WalEnd::clean);
  EXPECT_EQ(got.size(), 6u);
  EXPECT_EQ(got.back(), more.back());
}

TEST_F(WalTornTailTest, EveryCutOfTheOnlyRecordOrHeaderRemovesOrKeepsTheSegment) {
  const auto records = write(1, 1, 0);
  const std::string full = fs_.contents(segment(1));
  for (std::size_t cut = 0; cut < full.size(); ++cut) {
    fs_.set_contents(segment(1), full.substr(0, cut));
    Version last = -1;
    EXPECT_TRUE(recover_log(fs_, dir_, &last).empty()) << cut;
    EXPECT_EQ(last, 0);
    EXPECT_FALSE(fs_.exists(segment(1))) << "a segment with no record is removed, cut " << cut;
  }
}

TEST_F(WalTornTailTest, ChecksumMismatchInTheFinalRecordIsATornTail) {
  const auto records = write(1, 5, 0);
  std::string data = fs_.contents(segment(1));
  data[data.size() - 2] ^= 0x40;
  fs_.set_contents(segment(1), data);
  EXPECT_EQ(recover_log(fs_, dir_).size(), 4u);
}

TEST_F(WalTornTailTest, ZeroFilledTailAfterACrashIsATornTail) {
  write(1, 5, 0);
  fs_.set_contents(segment(1), fs_.contents(segment(1)) + std::string(4096, '\0'));
  EXPECT_EQ(recover_log(fs_, dir_).size(), 5u);
  dur::WalReadResult result;
  EXPECT_EQ(read_log(fs_, dir_, 0, &result).size(), 5u);
  EXPECT_EQ(result.end, dur::WalEnd::clean);
}

TEST_F(WalTornTailTest, FlippedByteAnywhereInAMiddleRecordIsCorruptionNamingTheFile) {
  const auto records = write(1, 10, 0);
  const std::string good = fs_.contents(segment(1));
  const std::size_t begin = offset_of(records, 4);
  const std::size_t end = offset_of(records, 5);
  const std::string name = dur::wal_file_name(1);
  for (std::size_t at = begin; at < end; ++at) {
    std::string bad = good;
    bad[at] ^= 0x01;
    fs_.set_contents(segment(1), bad);
    EXPECT_THAT([&] { recover_log(fs_, dir_); }, ThrowsCodeWith(ErrorCode::corrupt_data, name))
        << "byte " << at;
    EXPECT_EQ(fs_.contents(segment(1)), bad) << "recovery must not modify a corrupt log";
  }
  // The message names the offset of the damaged record.
  std::string bad = good;
  bad[begin + header + 1] ^= 0x01;
  fs_.set_contents(segment(1), bad);
  EXPECT_THAT([&] { recover_log(fs_, dir_); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "at offset " + std::to_string(begin)));
}

// A power loss may keep a later page of an unsynced write and lose an earlier one. Versions
// 1-3 are synced one by one; 4-6 go out in one unsynced group, then 7 in another: lost
// bytes anywhere in them (zeros, as a file system leaves unwritten blocks) are a torn tail
// even with valid records after them, since none of those was written after a sync. The
// log is cut at the damage; nothing synced is lost, and the next opening appends cleanly.
TEST_F(WalTornTailTest, AnUnsyncedWritePersistedOutOfOrderIsATornTail) {
  std::vector<Record> records;
  {
    dur::WalWriter writer(fs_, dir_, 0);
    for (Version v = 1; v <= 7; ++v) {
      records.emplace_back(v, payload_for(v, 10));
      writer.append(v, records.back().second);
      if (v <= 3 || v >= 6) writer.flush(/*sync=*/v <= 3);
    }
  }
  const std::string full = fs_.contents(segment(1));
  ASSERT_EQ(full.size(), offset_of(records, 7));
  for (std::size_t lost = 3; lost < 7; ++lost) {
    std::string bad = full;
    const std::size_t begin = offset_of(records, lost);
    bad.replace(begin, 8, 8, '\0');  // zeros over the record's magic
    fs_.set_contents(segment(1), bad);
    Version last = 0;
    EXPECT_EQ(
        recover_log(fs_, dir_, &last),
        std::vector<Record>(records.begin(), records.begin() + static_cast<std::ptrdiff_t>(lost)))
        << "lost record " << lost + 1;
    EXPECT_EQ(last, static_cast<Version>(lost));
    EXPECT_EQ(fs_.contents(segment(1)).size(), begin);
  }
}

// The same damage in a synced record is corruption: the record after it was written once
// the damaged bytes were durable (it is marked after_sync), so no crash explains them.
// The rule against a model of the disk: groups of records of random sizes, some synced,
// then some flushed but not synced, then a power loss that keeps any of the unsynced pages.
// Recovery always opens the log and finds a prefix of what was written that holds every
// synced record.
TEST(WalPowerLoss, KeepingAnyOfTheUnsyncedPagesLosesNoSyncedRecordAndIsNeverCorruption) {
  const std::filesystem::path dir = "/db";
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    FaultFileSystem fs;
    fs.create_dir(dir);
    std::vector<Record> written;
    std::size_t synced = 0;
    {
      dur::WalWriter writer(fs, dir, 0);
      const auto synced_groups = rng() % 4;
      const auto unsynced_groups = 1 + rng() % 3;
      for (std::uint64_t group = 0; group < synced_groups + unsynced_groups; ++group) {
        for (auto n = 1 + rng() % 4; n > 0; --n) {
          const auto v = static_cast<Version>(written.size() + 1);
          written.emplace_back(v, payload_for(v, rng() % 3000));
          writer.append(v, written.back().second);
        }
        const bool sync = group < synced_groups;
        writer.flush(sync);
        if (sync) synced = written.size();
      }
      fs.drop_unsynced_pages(seed);
    }  // (the writer's file is stale now; closing it fails quietly)
    std::vector<Record> recovered;
    ASSERT_NO_THROW(recovered = recover_log(fs, dir));
    ASSERT_GE(recovered.size(), synced);
    ASSERT_LE(recovered.size(), written.size());
    EXPECT_TRUE(std::equal(recovered.begin(), recovered.end(), written.begin()));
  }
}

TEST_F(WalTornTailTest, DamageFollowedByARecordWrittenAfterItsSyncIsCorruption) {
  const auto records = write(1, 5, 0);
  std::string bad = fs_.contents(segment(1));
  const std::size_t begin = offset_of(records, 2);
  bad.replace(begin, 8, 8, '\0');  // zeros over the record's magic
  fs_.set_contents(segment(1), bad);
  EXPECT_THAT(
      [&] { recover_log(fs_, dir_); },
      ThrowsCodeWith(ErrorCode::corrupt_data,
                     "at offset " + std::to_string(begin) +
                         ": bad record magic, followed by a valid record at offset " +
                         std::to_string(offset_of(records, 3)) + " written after it was synced"));
}

// Format 1 records carry no mark, so there any valid record after damage is corruption: the
// same bytes (one unsynced group, no record marked) are a torn tail as format 2 and
// corruption as format 1, whether the damage is in a record or in the header (a flipped
// magic byte leaves the format readable).
TEST_F(WalTornTailTest, InAFormatOneSegmentAnyValidRecordAfterDamageMakesItCorruption) {
  const auto records = write_one_group(1, 5, 0);
  std::string bad = fs_.contents(segment(1));
  const std::size_t begin = offset_of(records, 2);
  bad.replace(begin, 8, 8, '\0');  // zeros over the record's magic
  fs_.set_contents(segment(1), bad);
  set_format_version(fs_, segment(1), 1);
  EXPECT_THAT([&] { recover_log(fs_, dir_); },
              ThrowsCodeWith(ErrorCode::corrupt_data,
                             "bad record magic, followed by a valid record at offset " +
                                 std::to_string(offset_of(records, 3))));
  set_format_version(fs_, segment(1), 2);
  EXPECT_EQ(recover_log(fs_, dir_), std::vector<Record>(records.begin(), records.begin() + 2));

  fs_.remove(segment(1));
  write_one_group(1, 5, 0);
  set_format_version(fs_, segment(1), 1);
  std::string header_hit = fs_.contents(segment(1));
  header_hit[2] ^= 0x10;
  fs_.set_contents(segment(1), header_hit);
  EXPECT_THAT(
      [&] { recover_log(fs_, dir_); },
      ThrowsCodeWith(ErrorCode::corrupt_data, "bad file magic, followed by a valid record"));
  // As format 2, or with the header lost whole (a new segment's first write torn out of
  // order), the unmarked records after it are the same unsynced write: the segment goes.
  std::fill(header_hit.begin(), header_hit.begin() + 24, '\0');
  fs_.set_contents(segment(1), header_hit);
  EXPECT_TRUE(recover_log(fs_, dir_).empty());
  EXPECT_FALSE(fs_.exists(segment(1)));
}

TEST_F(WalTornTailTest, DamageAtTheEndOfAnOlderSegmentIsCorruption) {
  write(1, 3, 0);
  write(4, 6, 3);
  const std::string older = fs_.contents(segment(1));
  fs_.set_contents(segment(1), older.substr(0, older.size() - 1));
  EXPECT_THAT([&] { recover_log(fs_, dir_); },
              ThrowsCodeWith(ErrorCode::corrupt_data, dur::wal_file_name(1)));
}

TEST_F(WalTornTailTest, MissingMiddleSegmentIsAVersionGap) {
  write(1, 3, 0);
  write(4, 6, 3);
  write(7, 9, 6);
  fs_.remove(segment(4));
  EXPECT_THAT([&] { recover_log(fs_, dir_); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "version gap"));
}

TEST_F(WalTornTailTest, MissingFirstSegmentWithoutACheckpointIsAVersionGap) {
  write(1, 3, 0);
  write(4, 6, 3);
  fs_.remove(segment(1));
  EXPECT_THAT([&] { recover_log(fs_, dir_); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "records in between are missing"));
}

// An opening after a checkpoint at version 4, a version with no record of its own (the log
// ended at 3), continues the log from 4. Read after that checkpoint the log is whole; read
// from the start it has a gap; and a segment stepping back below the record before it is
// corruption either way.
TEST_F(WalTornTailTest, BelowTheCheckpointASegmentMayContinueFromTheCheckpointsVersion) {
  write(1, 3, 0);
  const auto later = write(5, 6, 4);
  EXPECT_EQ(read_log(fs_, dir_, 4), later);
  EXPECT_THAT([&] { (void)read_log(fs_, dir_, 0); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "version gap"));
  fs_.remove(segment(5));
  write(5, 6, 2);
  EXPECT_THAT([&] { (void)read_log(fs_, dir_, 4); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "but the previous record is version 3"));
}

TEST_F(WalTornTailTest, BadFileHeaderIsCorruptionUnlessItIsAllThereIs) {
  write(1, 3, 0);
  write(4, 6, 3);
  std::string newest = fs_.contents(segment(4));
  newest[2] ^= 0x10;  // File magic of the newest segment; valid records follow it.
  fs_.set_contents(segment(4), newest);
  EXPECT_THAT([&] { recover_log(fs_, dir_); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "followed by a valid record"));
  std::string older = fs_.contents(segment(1));
  newest[2] ^= 0x10;
  fs_.set_contents(segment(4), newest);
  older[13] ^= 0x01;  // first_version in the header of an older segment.
  fs_.set_contents(segment(1), older);
  EXPECT_THAT([&] { recover_log(fs_, dir_); }, ThrowsCode(ErrorCode::corrupt_data));
}

TEST_F(WalTornTailTest, UnsupportedFormatVersionIsReported) {
  write(1, 2, 0);
  set_format_version(fs_, segment(1), 3);
  EXPECT_THAT([&] { recover_log(fs_, dir_); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "unsupported WAL format version 3"));
  set_format_version(fs_, segment(1), 0);
  EXPECT_THAT([&] { recover_log(fs_, dir_); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "unsupported WAL format version 0"));
}

// Version 1 (before atomic operations could be logged) differs only in what payloads may
// hold: its segments are still read.
TEST_F(WalTornTailTest, FormatVersionOneIsStillRead) {
  const auto records = write_one_group(1, 3, 0);  // no record marked after_sync
  set_format_version(fs_, segment(1), 1);
  EXPECT_EQ(recover_log(fs_, dir_), records);
  // Format 1 has no marks: a length with bit 31 set is over the limit there, not a mark.
  // (write() marks records 2 and 3: as format 1 they are a damaged tail after record 1.)
  fs_.remove(segment(1));
  const auto marked = write(1, 3, 0);
  set_format_version(fs_, segment(1), 1);
  EXPECT_EQ(recover_log(fs_, dir_), std::vector<Record>(marked.begin(), marked.begin() + 1));
}

// Damage can look like record headers every few bytes, each marked after_sync and
// claiming a payload up to the end of the file, with a wrong checksum: a value written
// into the log, or a crafted file. The search for a valid record after the damage checks
// each of them and still ends (in time linear in the file, not quadratic), and tells
// whether one of them, however long its payload, is valid.
class WalCraftedTailTest : public WalTornTailTest {
 protected:
  // Versions 1-3 synced, then damage (a broken magic), then `fakes` plausible headers 28
  // bytes apart, then `tail` (which may hold a valid record).
  std::string crafted(std::size_t fakes, const std::string& tail) {
    records_ = write(1, 3, 0);
    std::string data = fs_.contents(segment(1));
    damage_at_ = data.size();
    data += std::string(header, '\xEE');
    const std::size_t end = data.size() + fakes * header + tail.size();
    for (std::size_t i = 0; i < fakes; ++i) {
      char h[header] = {};
      strata::base::encode_fixed32(h, dur::wal::kRecordMagic);
      strata::base::encode_fixed32(h + dur::wal::kRecordCrcOffset, 0x12345678u);
      const std::size_t payload = end - data.size() - header;
      strata::base::encode_fixed32(h + dur::wal::kRecordLengthOffset,
                                   static_cast<std::uint32_t>(payload) | dur::wal::kAfterSync);
      strata::base::encode_fixed64(h + dur::wal::kRecordVersionOffset, 10 + i);
      strata::base::encode_fixed64(h + dur::wal::kRecordPrevOffset, 3);
      data.append(h, header);
    }
    return data + tail;
  }

  std::vector<Record> records_;
  std::size_t damage_at_ = 0;
};

TEST_F(WalCraftedTailTest, ThousandsOfPlausibleHeadersWithBadChecksumsAreATornTail) {
  constexpr std::size_t kFakes = 40'000;  // ~1.1 MB of headers, each claiming the rest
  fs_.set_contents(segment(1), crafted(kFakes, std::string(64 * 1024, 'p')));
  Version last = 0;
  EXPECT_EQ(recover_log(fs_, dir_, &last), records_);
  EXPECT_EQ(last, 3);
  EXPECT_EQ(fs_.contents(segment(1)).size(), damage_at_);
}

TEST_F(WalCraftedTailTest, AValidRecordAmongPlausibleHeadersMakesTheDamageCorruption) {
  constexpr std::size_t kFakes = 40'000;
  for (const std::size_t payload : {0UL, 10UL, 255UL, 100'000UL}) {
    std::string valid;
    dur::wal::append_record(valid, 4, 3, std::string(payload, 'x'), /*after_sync=*/true);
    const std::string data = crafted(kFakes, valid);
    const std::size_t valid_at = data.size() - valid.size();
    fs_.set_contents(segment(1), data);
    EXPECT_THAT([&] { recover_log(fs_, dir_); },
                ThrowsCodeWith(ErrorCode::corrupt_data,
                               "followed by a valid record at offset " + std::to_string(valid_at)))
        << "payload " << payload;
    EXPECT_EQ(fs_.contents(segment(1)), data) << "recovery must not modify a corrupt log";
    fs_.remove(segment(1));
  }
}

TEST_F(WalTornTailTest, ScannerNeverReadsOutsideItsInputOnAnyPrefixOrFlip) {
  const auto records = write(1, 6, 0);
  const std::string good = fs_.contents(segment(1));
  for (std::size_t cut = 0; cut <= good.size(); ++cut) {
    for (const bool is_last : {false, true}) {
      const std::string data = good.substr(0, cut);  // Exact-size buffer for ASan.
      try {
        (void)dur::scan_wal_segment(data, "seg", 1, is_last, std::nullopt,
                                    [](const dur::WalRecord&) {});
      } catch (const strata::Error& e) {
        EXPECT_EQ(e.error_code(), ErrorCode::corrupt_data);
      }
    }
  }
}

}  // namespace
