// Helpers for the tuple tests: hex, the vectors.txt literal grammar, exact-type tuple
// comparison, printing, and a seeded random tuple generator.
#pragma once

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "strata/tuple.hpp"

namespace strata {

// GoogleTest printers, in the vectors.txt grammar ("(int64:1, bytes:00ff, (null))").
std::string describe(const Element& e);
std::string describe(const Tuple& t);
inline void PrintTo(const Element& e, std::ostream* os) { *os << describe(e); }
inline void PrintTo(const Tuple& t, std::ostream* os) { *os << describe(t); }

}  // namespace strata

namespace strata::tuple_test {

// "0251 00" -> bytes; spaces are ignored. Throws std::invalid_argument on bad hex.
std::string from_hex(std::string_view hex);
std::string to_hex(std::string_view bytes);

// The integer element unpack() gives for this decimal value: int64_t if it fits, else
// uint64_t if it fits, else BigInt.
Element canonical_int(const BigInt& value);

// Parses one tuple literal of vectors.txt. Throws std::invalid_argument on bad syntax.
Tuple parse_tuple_literal(std::string_view text);

struct Vector {
  int line;
  std::string literal;
  Tuple tuple;
  std::string bytes;
};
struct InvalidEntry {
  int line;
  std::string bytes;
  std::string category;
};
// Read tests/tuple/data/*.txt (STRATA_TUPLE_DATA_DIR). Fail the calling test on I/O errors.
std::vector<Vector> load_vectors();
std::vector<InvalidEntry> load_invalid();

// True iff both tuples hold the same C++ types with identical values/bits, recursively.
::testing::AssertionResult identical(const Tuple& expected, const Tuple& actual);

// Random tuples over every element type, nesting up to `max_depth`; complete versionstamps
// only. Values come from small pools so that prefixes and ties are common.
class RandomTuples {
 public:
  explicit RandomTuples(std::uint64_t seed) : rng_(seed) {}
  Tuple tuple(int max_depth, std::size_t max_size = 4);
  Element element(int max_depth);

 private:
  std::uint64_t below(std::uint64_t n) { return rng_() % n; }
  Element integer();
  std::string byte_string(bool utf8);

  std::mt19937_64 rng_;
};

}  // namespace strata::tuple_test
