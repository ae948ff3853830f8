// engine/versionstamp.hpp: the 10-byte stamp of a commit and the offsets that place it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "strata/types.hpp"

namespace strata::engine {

inline constexpr std::size_t kVersionstampSize = 10;

// 8-byte big-endian commit version, then the 2-byte big-endian order in the batch.
std::string make_versionstamp(Version version, std::uint16_t batch_index);

// Splits a versionstamp operand (template + 4-byte little-endian offset) into the template
// and the offset. Throws client_invalid_operation (2000) when the operand is shorter than
// 4 bytes or the offset leaves no room for 10 bytes. `what` names the operand ("key").
std::pair<std::string_view, std::uint32_t> split_stamp_operand(std::string_view operand,
                                                               std::string_view what);

// `tmpl` with the 10 bytes at `offset` replaced by `stamp`.
std::string apply_stamp(std::string_view tmpl, std::uint32_t offset, std::string_view stamp);
// The same into `out`: with tmpl.size() bytes of capacity there, nothing allocates.
void apply_stamp_into(std::string& out, std::string_view tmpl, std::uint32_t offset,
                      std::string_view stamp);

}  // namespace strata::engine
