// Fuzzes the WAL segment scanner (durability/wal_reader.hpp): any bytes either throw
// Error(corrupt_data) or scan to records that are exactly the input's prefix re-encoded,
// and a torn tail is reported at an offset whose prefix scans clean to the same records.
// Each record's payload is decoded as a mutation batch (durability/mutation_batch.hpp):
// it either throws Error(corrupt_data) or yields fields that lie inside it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "strata/error.hpp"

#include "base/coding.hpp"
#include "base/crc32c.hpp"
#include "durability/mutation_batch.hpp"
#include "durability/wal_format.hpp"
#include "durability/wal_reader.hpp"

namespace {

namespace dur = strata::durability;

void check(bool ok) {
  if (!ok) std::abort();
}

// Decodes `payload` as the engine's replay would; every field lies inside it.
void decode(std::string_view payload) {
  auto inside = [&](std::string_view field) {
    check(field.empty() || (field.data() >= payload.data() &&
                            field.data() + field.size() <= payload.data() + payload.size()));
  };
  dur::MutationSink sink;
  sink.set = [&](std::string_view k, std::string_view v) {
    inside(k);
    inside(v);
  };
  sink.clear = inside;
  sink.clear_range = sink.set;
  sink.atomic = [&](std::string_view k, strata::MutationType, std::string_view p) {
    inside(k);
    inside(p);
  };
  try {
    dur::decode_mutation_batch(payload, "fuzz", sink);
  } catch (const strata::Error& e) {
    check(e.error_code() == strata::ErrorCode::corrupt_data);
  }
}

struct Scanned {
  bool threw = false;
  dur::SegmentScan scan;
  std::string reencoded;  // Header and records, encoded again.
};

Scanned scan(std::string_view data, strata::Version name_version, bool is_last) {
  Scanned s;
  dur::wal::append_file_header(s.reencoded, name_version);
  try {
    s.scan = dur::scan_wal_segment(
        data, "fuzz.log", name_version, is_last, std::nullopt, [&](const dur::WalRecord& r) {
          check(r.prev_version < r.version);
          check(r.offset + dur::wal::kRecordHeaderSize + r.payload.size() <= data.size());
          dur::wal::append_record(s.reencoded, r.version, r.prev_version, r.payload, r.after_sync);
          decode(r.payload);
        });
    // The header as read: every format version the reader accepts is re-encoded as itself.
    if (data.size() >= dur::wal::kFileHeaderSize) {
      std::memcpy(s.reencoded.data() + 8, data.data() + 8, 4);
      strata::base::encode_fixed32(
          s.reencoded.data() + 20,
          strata::base::crc32c::mask(strata::base::crc32c::value(s.reencoded.data(), 20)));
    }
  } catch (const strata::Error& e) {
    check(e.error_code() == strata::ErrorCode::corrupt_data);
    check(std::string_view(e.what()).find("fuzz.log at offset ") != std::string_view::npos);
    s.threw = true;
  }
  return s;
}

// Recomputes the header checksum and the checksum of every record whose framing fits, so
// the fuzzer also explores checksum-valid but hostile logs (versions, chains, lengths).
void fix_checksums(std::string& d) {
  namespace crc = strata::base::crc32c;
  using strata::base::decode_fixed32;
  if (d.size() < dur::wal::kFileHeaderSize) return;
  strata::base::encode_fixed32(d.data() + 20, crc::mask(crc::value(d.data(), 20)));
  std::size_t at = dur::wal::kFileHeaderSize;
  while (d.size() - at >= dur::wal::kRecordHeaderSize) {
    // (Bit 31 is format 2's after_sync mark, not length.)
    const std::uint32_t length =
        decode_fixed32(d.data() + at + dur::wal::kRecordLengthOffset) & ~dur::wal::kAfterSync;
    if (d.size() - at - dur::wal::kRecordHeaderSize < length) break;
    const std::string_view payload(d.data() + at + dur::wal::kRecordHeaderSize, length);
    strata::base::encode_fixed32(d.data() + at + dur::wal::kRecordCrcOffset,
                                 dur::wal::record_checksum(d.data() + at, payload));
    at += dur::wal::kRecordHeaderSize + length;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  // The first byte chooses the mode: odd = make all checksums valid first.
  if (size == 0) return 0;
  std::string input(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  if ((bytes[0] & 1) != 0) fix_checksums(input);
  size = input.size();
  // An exact-size copy, so AddressSanitizer catches any read past the end.
  const std::vector<char> buffer(input.begin(), input.end());
  const std::string_view data(buffer.data(), buffer.size());
  // Take the name's version from the header field so the scan gets past the header.
  const auto name_version =
      size >= 20 ? static_cast<strata::Version>(strata::base::decode_fixed64(data.data() + 12)) : 0;

  const Scanned last = scan(data, name_version, /*is_last=*/true);
  const Scanned older = scan(data, name_version, /*is_last=*/false);
  if (last.threw) {
    check(older.threw);  // Damage that is not a torn tail is damage anywhere.
    return 0;
  }
  check(last.scan.valid_bytes <= size);
  if (last.scan.valid_bytes > 0) {
    // Every valid byte is the canonical encoding of what was delivered.
    check(last.reencoded == data.substr(0, last.scan.valid_bytes));
  }
  if (last.scan.end == dur::WalEnd::clean) {
    check(!older.threw && older.scan.records == last.scan.records);
    check(last.scan.valid_bytes == size);
  } else if (last.scan.valid_bytes == 0) {
    check(older.threw && last.scan.records == 0);  // Nothing valid, not even a header.
  } else {
    check(older.threw);
    const Scanned cut = scan(data.substr(0, last.scan.valid_bytes), name_version, true);
    check(!cut.threw && cut.scan.end == dur::WalEnd::clean);
    check(cut.scan.records == last.scan.records);
  }
  return 0;
}
