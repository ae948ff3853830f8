// utf8.hpp: strict UTF-8 validation for unicode-string elements (code 0x02).
#pragma once

#include <cstddef>
#include <string_view>

namespace strata::tuple_detail {

// The index of the first byte that does not start a well-formed UTF-8 sequence, or
// std::string_view::npos when all of `s` is valid. Rejects overlong forms, UTF-16
// surrogates (U+D800..U+DFFF), code points above U+10FFFF and truncated sequences,
// as Python's UTF-8 codec does.
std::size_t find_invalid_utf8(std::string_view s);

}  // namespace strata::tuple_detail
