// Fuzzes Tuple::unpack: any input either throws Error(invalid_tuple) or decodes to a tuple
// whose canonical packing decodes to an equal tuple, and whose order and equality against
// the previous input agree with the packed bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "strata/error.hpp"
#include "strata/tuple.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  strata::Tuple t;
  try {
    t = strata::Tuple::unpack(input);
  } catch (const strata::Error& e) {
    check(e.error_code() == strata::ErrorCode::invalid_tuple);
    return 0;
  }
  std::string packed;
  try {
    packed = t.pack();
  } catch (const strata::Error& e) {  // an incomplete versionstamp decodes but cannot pack
    check(e.error_code() == strata::ErrorCode::invalid_argument);
    return 0;
  }
  const strata::Tuple again = strata::Tuple::unpack(packed);
  check(again == t);
  check(again.pack() == packed);
  // Order and equality agree with the canonical bytes, against the previous decoded input.
  static strata::Tuple previous;
  static std::string previous_packed;
  const int by_bytes = packed.compare(previous_packed);
  const auto by_tuple = t <=> previous;
  check((by_bytes < 0) == (by_tuple < 0) && (by_bytes > 0) == (by_tuple > 0));
  check((t == previous) == (packed == previous_packed));
  previous = t;
  previous_packed = packed;
  return 0;
}
