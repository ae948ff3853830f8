// Fuzzes the checkpoint reader (durability/checkpoint_reader.hpp): any bytes either throw
// Error(corrupt_data) naming the file, or verify to entries in strictly increasing key
// order within the format limits, which the writer encodes again and the reader reads back
// unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/error.hpp"

#include "base/coding.hpp"
#include "base/crc32c.hpp"
#include "base/file_system.hpp"
#include "durability/checkpoint_format.hpp"
#include "durability/checkpoint_reader.hpp"
#include "durability/checkpoint_writer.hpp"

namespace {

namespace dur = strata::durability;
using Entries = std::vector<std::pair<std::string, std::string>>;

void check(bool ok) {
  if (!ok) std::abort();
}

// A file held in memory; reads return exact-size strings.
class MemoryFile final : public strata::base::ReadableFile, public strata::base::WritableFile {
 public:
  explicit MemoryFile(std::string data = {}) : data_(std::move(data)) {}
  std::string read(std::uint64_t offset, std::size_t n) override {
    if (offset >= data_.size()) return {};
    return data_.substr(static_cast<std::size_t>(offset), n);
  }
  std::string read_all() override { return data_; }
  std::uint64_t size() const override { return data_.size(); }
  void append(std::string_view d) override { data_.append(d); }
  void sync() override {}
  void close() override {}

 private:
  std::string data_;
};

// Recomputes every checksum the structure has, so the fuzzer also explores inputs that
// are checksum-valid but hostile (lengths, counts, LZ4 data, entry framing).
void fix_checksums(std::string& d) {
  namespace crc = strata::base::crc32c;
  using strata::base::decode_fixed32;
  using strata::base::encode_fixed32;
  if (d.size() < dur::checkpoint::kFileHeaderSize + dur::checkpoint::kFooterSize) return;
  encode_fixed32(d.data() + 20, crc::mask(crc::value(d.data(), 20)));
  const std::size_t body_end = d.size() - dur::checkpoint::kFooterSize;
  std::size_t at = dur::checkpoint::kFileHeaderSize;
  while (body_end - at >= dur::checkpoint::kBlockHeaderSize) {
    const std::uint32_t stored = decode_fixed32(d.data() + at + 1);
    if (body_end - at - dur::checkpoint::kBlockHeaderSize < stored) break;
    std::uint32_t c = crc::value(d.data() + at, 9);
    c = crc::extend(c, d.data() + at + dur::checkpoint::kBlockHeaderSize, stored);
    encode_fixed32(d.data() + at + 9, crc::mask(c));
    at += dur::checkpoint::kBlockHeaderSize + stored;
  }
  encode_fixed32(d.data() + body_end + 32, crc::mask(crc::value(d.data(), body_end)));
  encode_fixed32(d.data() + body_end + 36, crc::mask(crc::value(d.data() + body_end, 36)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  // The first byte chooses the mode: odd = make all checksums valid first.
  if (size == 0) return 0;
  std::string input(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  if ((bytes[0] & 1) != 0) fix_checksums(input);
  size = input.size();
  MemoryFile file(std::move(input));
  Entries entries;
  dur::CheckpointInfo info;
  try {
    info = dur::read_checkpoint(file, "fuzz.ckpt", std::nullopt,
                                [&](std::string_view k, std::string_view v) {
                                  check(k.size() <= dur::checkpoint::kMaxKeyBytes);
                                  check(v.size() <= dur::checkpoint::kMaxValueBytes);
                                  check(entries.empty() || entries.back().first < k);
                                  entries.emplace_back(k, v);
                                });
  } catch (const strata::Error& e) {
    check(e.error_code() == strata::ErrorCode::corrupt_data);
    check(std::string_view(e.what()).find("fuzz.ckpt at offset ") != std::string_view::npos);
    return 0;
  }
  check(info.entries == entries.size());
  check(info.file_bytes == size);

  MemoryFile copy;
  dur::CheckpointBuilder builder(copy, info.version);
  for (const auto& [k, v] : entries) builder.add(k, v);
  builder.finish();
  Entries again;
  const auto info2 = dur::read_checkpoint(
      copy, "copy.ckpt", info.version,
      [&](std::string_view k, std::string_view v) { again.emplace_back(k, v); });
  check(again == entries && info2.version == info.version);
  return 0;
}
