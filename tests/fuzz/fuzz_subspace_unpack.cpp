// Fuzzes Subspace::unpack and range: the first input byte picks a raw-prefix length (taken
// from the key itself). Outside keys throw key_not_in_subspace, malformed ones invalid_tuple;
// a decoded tuple re-packs inside the subspace and its range lies within contains().
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "strata/error.hpp"
#include "strata/subspace.hpp"
#include "strata/tuple.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t prefix_len = data[0] % 4;
  const strata::Subspace space(strata::Tuple{}, rest.substr(0, prefix_len));
  // Mostly keys under the prefix; with the top bit set, shifted by one byte (mostly outside).
  const std::string_view key = (data[0] & 0x80) && !rest.empty() ? rest.substr(1) : rest;
  strata::Tuple t;
  try {
    t = space.unpack(key);
  } catch (const strata::Error& e) {
    check(e.error_code() == (space.contains(key) ? strata::ErrorCode::invalid_tuple
                                                 : strata::ErrorCode::key_not_in_subspace));
    return 0;
  }
  check(space.contains(key));
  try {
    const std::string packed = space.pack(t);
    check(space.unpack(packed) == t);
    const strata::KeyRange r = space.range(t);
    check(space.contains(r.begin) && space.contains(r.end));
    check(r.begin > packed && r.end > r.begin);
  } catch (const strata::Error& e) {
    check(e.error_code() == strata::ErrorCode::invalid_argument);
  }
  return 0;
}
