// bench/args.hpp: the numbers on the benchmark programs' command lines.
//
// A flag's value is taken whole or refused: "12x", "-5", "" and values out of range all get
// the one message, "<flag> takes a [whole ]number from <min> to <max>, not '<text>'", and
// each program prints it its own way (with its usage, exit code 2).
//
// Thread safety: pure functions.
#pragma once

#include <charconv>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

namespace bench {

// The whole of `text` as a T in [min, max]; nullopt for anything else (no sign on an
// unsigned T, no leading space or '+', no trailing characters).
template <class T>
std::optional<T> parse_number(std::string_view text, T min, T max) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= min) || !(value <= max)) {
    return std::nullopt;
  }
  return value;
}

// Why `text` was refused as the value of `flag`.
template <class T>
std::string number_refused(std::string_view flag, std::string_view text, T min, T max) {
  std::ostringstream why;
  why << flag << " takes a " << (std::is_integral_v<T> ? "whole " : "") << "number from " << min
      << " to " << max << ", not '" << text << "'";
  return why.str();
}

}  // namespace bench
