// Subspace and strinc (FoundationDB's subspace_impl.py semantics on raw bytes).
#include "strata/subspace.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "strata/error.hpp"

#include "tuple/tuple_codec.hpp"

namespace strata {

namespace {

// Up to 32 bytes as hex ("02 51 00"), then "... (N bytes)" when longer.
std::string hex_preview(std::string_view bytes) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(bytes.size(), 32);
  for (std::size_t i = 0; i < shown; ++i) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(bytes[i]));
    if (i != 0) out += ' ';
    out += buf;
  }
  if (bytes.size() > shown) out += " ... (" + std::to_string(bytes.size()) + " bytes)";
  if (bytes.empty()) out = "(empty)";
  return out;
}

}  // namespace

Subspace::Subspace() = default;

Subspace::Subspace(const Tuple& prefix, std::string_view raw_prefix) : prefix_(raw_prefix) {
  tuple_detail::pack_into(prefix_, prefix, tuple_detail::StampMode::reject);
}

// One element appended to the prefix, with no Tuple in between (a priority-queue push
// makes one of these per call).
Subspace Subspace::operator[](const Element& e) const {
  Subspace out;
  out.prefix_ = prefix_;
  tuple_detail::append_element(out.prefix_, e);
  return out;
}

Subspace Subspace::subspace(const Tuple& t) const { return Subspace(t, prefix_); }

std::string Subspace::pack(const Tuple& t) const {
  std::string out;
  out.reserve(prefix_.size() + tuple_detail::estimate_packed_size(t));
  out.append(prefix_);
  tuple_detail::pack_into(out, t, tuple_detail::StampMode::reject);
  return out;
}

std::string Subspace::pack_with_versionstamp(const Tuple& t) const {
  std::string out;
  out.reserve(prefix_.size() + tuple_detail::estimate_packed_size(t));
  out.append(prefix_);
  tuple_detail::pack_into(out, t, tuple_detail::StampMode::append_offset);
  return out;
}

Tuple Subspace::unpack(std::string_view key) const {
  if (!contains(key)) {
    throw Error(ErrorCode::key_not_in_subspace, "key " + hex_preview(key) +
                                                    " does not start with the subspace prefix " +
                                                    hex_preview(prefix_));
  }
  key.remove_prefix(prefix_.size());
  return tuple_detail::unpack_from(key, prefix_.size());
}

KeyRange Subspace::range(const Tuple& t) const {
  KeyRange r;
  if (t.empty()) {  // the common range(): the prefix itself, without packing anything
    r.begin.reserve(prefix_.size() + 1);
    r.begin.append(prefix_);
  } else {
    r.begin = pack(t);
  }
  r.end.reserve(r.begin.size() + 1);
  r.end.append(r.begin);
  r.begin.push_back('\x00');
  r.end.push_back('\xff');
  return r;
}

bool Subspace::contains(std::string_view key) const { return key.starts_with(prefix_); }

std::string strinc(std::string_view key) {
  const std::size_t keep = key.find_last_not_of('\xff');
  if (keep == std::string_view::npos) {
    throw Error(ErrorCode::invalid_argument,
                "strinc of " + hex_preview(key) + ": the key is empty or all 0xff bytes");
  }
  std::string out(key.substr(0, keep + 1));
  out.back() = static_cast<char>(static_cast<unsigned char>(out.back()) + 1);
  return out;
}

}  // namespace strata
