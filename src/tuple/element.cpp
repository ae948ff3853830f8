// Element construction, type names, and the comparison that follows packed-byte order:
// first by type code (all integers share one rank), then by value within a type.
#include <bit>
#include <memory>
#include <string>
#include <variant>

#include "strata/error.hpp"
#include "strata/tuple.hpp"

#include "tuple/tuple_codec.hpp"

namespace strata {

namespace {

// The rank of each variant alternative in byte order; integers share the rank of 0x14,
// and false/true get their own codes below.
constexpr std::uint8_t kRankOfIndex[] = {
    tuple_detail::kCodeNull,    tuple_detail::kCodeBytes,   tuple_detail::kCodeString,
    tuple_detail::kCodeIntZero, tuple_detail::kCodeIntZero, tuple_detail::kCodeIntZero,
    tuple_detail::kCodeFloat,   tuple_detail::kCodeDouble,  tuple_detail::kCodeFalse,
    tuple_detail::kCodeUuid,    tuple_detail::kCodeNested,  tuple_detail::kCodeVersionstamp,
};
static_assert(std::size(kRankOfIndex) == std::variant_size_v<Element::Value>);

std::uint8_t rank(const Element::Value& v) {
  if (const bool* b = std::get_if<bool>(&v)) {
    return *b ? tuple_detail::kCodeTrue : tuple_detail::kCodeFalse;
  }
  return kRankOfIndex[v.index()];
}

// Integers of any stored type, by numeric value.
std::strong_ordering compare_integers(const Element::Value& a, const Element::Value& b) {
  const auto* ai = std::get_if<std::int64_t>(&a);
  const auto* bi = std::get_if<std::int64_t>(&b);
  const auto* au = std::get_if<std::uint64_t>(&a);
  const auto* bu = std::get_if<std::uint64_t>(&b);
  if (ai && bi) return *ai <=> *bi;
  if (au && bu) return *au <=> *bu;
  if (ai && bu) return *ai < 0 ? std::strong_ordering::less : std::uint64_t(*ai) <=> *bu;
  if (au && bi) return *bi < 0 ? std::strong_ordering::greater : *au <=> std::uint64_t(*bi);
  // At least one BigInt: widen the other (rare; allocation is acceptable).
  auto widen = [](const Element::Value& v) {
    if (const auto* i = std::get_if<std::int64_t>(&v)) return BigInt(*i);
    if (const auto* u = std::get_if<std::uint64_t>(&v)) {
      char buf[8];
      std::uint64_t n = *u;
      for (int k = 7; k >= 0; --k, n >>= 8) buf[k] = static_cast<char>(n & 0xff);
      return BigInt::from_magnitude(false, std::string_view(buf, 8));
    }
    return std::get<BigInt>(v);
  };
  return widen(a) <=> widen(b);
}

std::strong_ordering compare_same_rank(const Element::Value& a, const Element::Value& b) {
  switch (rank(a)) {
    case tuple_detail::kCodeBytes:
      return std::get<Bytes>(a) <=> std::get<Bytes>(b);
    case tuple_detail::kCodeString:
      return std::get<std::string>(a) <=> std::get<std::string>(b);
    case tuple_detail::kCodeNested:
      return *std::get<Element::NestedPtr>(a) <=> *std::get<Element::NestedPtr>(b);
    case tuple_detail::kCodeIntZero:
      return compare_integers(a, b);
    case tuple_detail::kCodeFloat:
      return tuple_detail::float_order_bits(std::bit_cast<std::uint32_t>(std::get<float>(a))) <=>
             tuple_detail::float_order_bits(std::bit_cast<std::uint32_t>(std::get<float>(b)));
    case tuple_detail::kCodeDouble:
      return tuple_detail::double_order_bits(std::bit_cast<std::uint64_t>(std::get<double>(a))) <=>
             tuple_detail::double_order_bits(std::bit_cast<std::uint64_t>(std::get<double>(b)));
    case tuple_detail::kCodeUuid:
      return std::get<Uuid>(a) <=> std::get<Uuid>(b);
    case tuple_detail::kCodeVersionstamp:
      return std::get<Versionstamp>(a) <=> std::get<Versionstamp>(b);
    default:  // null, false, true: one value each
      return std::strong_ordering::equal;
  }
}

}  // namespace

bool Versionstamp::complete() const {
  for (std::uint8_t b : tr) {
    if (b != 0xff) return true;
  }
  return false;
}

Versionstamp Versionstamp::incomplete(std::uint16_t user) {
  Versionstamp v;
  v.user = user;
  return v;
}

Element::Element(const char* s) {
  if (s == nullptr) throw Error(ErrorCode::invalid_argument, "null const char* element");
  value_ = std::string(s);
}

Element::Element(Tuple t) : value_(std::make_shared<const Tuple>(std::move(t))) {}

std::string_view Element::type_name() const {
  static constexpr std::string_view kNames[] = {"null",   "bytes",  "string", "int64",
                                                "uint64", "bigint", "float",  "double",
                                                "bool",   "uuid",   "tuple",  "versionstamp"};
  static_assert(std::size(kNames) == std::variant_size_v<Value>);
  return kNames[value_.index()];
}

void Element::throw_wrong_type(std::string_view wanted) const {
  throw Error(ErrorCode::invalid_argument, "Element::get<" + std::string(wanted) +
                                               ">() on an element holding " +
                                               std::string(type_name()));
}

bool operator==(const Element& a, const Element& b) { return (a <=> b) == 0; }

std::strong_ordering operator<=>(const Element& a, const Element& b) {
  const std::uint8_t ra = rank(a.value_);
  const std::uint8_t rb = rank(b.value_);
  if (ra != rb) return ra <=> rb;
  return compare_same_rank(a.value_, b.value_);
}

}  // namespace strata
