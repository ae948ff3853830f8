// Tuple: append, pack/unpack through tuple_codec, and element-wise ordering (which equals
// packed-byte order because every element encoding is self-delimiting and no element
// starts with 0xFF; see docs/tuple.md).
#include "strata/tuple.hpp"

#include <algorithm>
#include <string>

#include "tuple/tuple_codec.hpp"

namespace strata {

Tuple& Tuple::append(Element e) {
  elements_.push_back(std::move(e));
  return *this;
}

std::string Tuple::pack() const {
  std::string out;
  out.reserve(tuple_detail::estimate_packed_size(*this));
  tuple_detail::pack_into(out, *this, tuple_detail::StampMode::reject);
  return out;
}

std::string Tuple::pack_with_versionstamp() const {
  std::string out;
  out.reserve(tuple_detail::estimate_packed_size(*this));
  tuple_detail::pack_into(out, *this, tuple_detail::StampMode::append_offset);
  return out;
}

Tuple Tuple::unpack(std::string_view bytes) { return tuple_detail::unpack_from(bytes, 0); }

bool operator==(const Tuple& a, const Tuple& b) { return a.elements_ == b.elements_; }

std::strong_ordering operator<=>(const Tuple& a, const Tuple& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (auto c = a.elements_[i] <=> b.elements_[i]; c != 0) return c;
  }
  return a.size() <=> b.size();
}

}  // namespace strata
