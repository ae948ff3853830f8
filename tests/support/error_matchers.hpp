// GoogleMock helpers for strata::Error: a test names the exact code it expects.
#pragma once

#include <gmock/gmock.h>

#include "strata/error.hpp"

namespace strata::testing {

// EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::not_committed));
inline auto ThrowsCode(ErrorCode code) {
  return ::testing::Throws<Error>(::testing::Property(&Error::code, static_cast<int>(code)));
}

// Matches an Error whose message contains `text` (the offending input named by what()).
inline auto ThrowsCodeWith(ErrorCode code, const std::string& text) {
  return ::testing::Throws<Error>(
      ::testing::AllOf(::testing::Property(&Error::code, static_cast<int>(code)),
                       ::testing::Property(&Error::what, ::testing::HasSubstr(text))));
}

}  // namespace strata::testing
