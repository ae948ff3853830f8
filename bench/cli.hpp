// bench/cli.hpp: the benchmark programs' command lines, through CLI11.
//
// A number is taken whole or refused: "12x", "-5", "0x10", "" and values out of range all
// get "<flag>: takes a [whole ]number from <min> to <max>, not '<text>'". Every program
// has --help and --version, and a refused command line exits 2 with the reason.
//
// Thread safety: call from main() only (parse_or_exit may exit the process).
#pragma once

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "build_info.hpp"
#include <CLI/CLI.hpp>

namespace bench {

// The whole of `text` as a T, or false (no sign on an unsigned T, no leading space or
// '+', no trailing characters, no hexadecimal).
template <class T>
bool parse_whole(std::string_view text, T& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

// Accepts a number in [min, max] and hands CLI11 its plain decimal form (CLI11 itself
// would read "010" as octal and accept "0x10"). Attach it with ->transform(): ->check()
// runs a validator on a copy, and the octal reading would come back.
template <class T>
CLI::Validator number_in(T min, T max) {
  std::ostringstream range;
  range << (std::is_integral_v<T> ? "whole " : "") << "number from " << min << " to " << max;
  const std::string what = range.str();
  return CLI::Validator(
      [min, max, what](std::string& text) -> std::string {
        T value{};
        if (!parse_whole(text, value) || !(value >= min) || !(value <= max)) {
          return "takes a " + what + ", not '" + text + "'";
        }
        char buffer[64];
        const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
        text.assign(buffer, end);
        return {};
      },
      what);
}

// Accepts one of `names`: "<flag>: takes a, b or c, not '<text>'".
inline CLI::Validator one_of(std::vector<std::string> names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return CLI::Validator(
      [names, list](std::string& text) -> std::string {
        for (const std::string& n : names) {
          if (text == n) return {};
        }
        return "takes " + list + ", not '" + text + "'";
      },
      list);
}

// Sets up `app` (named after its program) the way every program here wants it: a repeated
// option takes its last value, --version prints version_line(), options' names get room.
inline void set_up(CLI::App& app) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_version_flag("--version", version_line(app.get_name()));
  app.get_formatter()->column_width(26);
}

// Each line of `text` refilled into lines of at most `width` characters (CLI11 prints an
// option's description on one line however long).
inline std::string wrap(const std::string& text, std::size_t width = 72) {
  std::istringstream lines(text);
  std::string out;
  for (std::string paragraph; std::getline(lines, paragraph);) {
    if (!out.empty()) out += "\n";
    std::istringstream words(paragraph);
    std::size_t line = 0;  // characters on out's last line
    for (std::string word; words >> word;) {
      if (line > 0 && line + 1 + word.size() > width) {
        out += "\n";
        line = 0;
      }
      out += (line > 0 ? " " : "") + word;
      line += (line > 0 ? 1 : 0) + word.size();
    }
  }
  return out;
}

// Parses argv, then runs `check` (which throws CLI::ValidationError for a combination of
// options it refuses). --help and --version print to stdout and exit 0; anything refused
// prints "<program>: <why>" to stderr and exits 2.
inline void parse_or_exit(CLI::App& app, int argc, char** argv,
                          const std::function<void()>& check = {}) {
  for (CLI::Option* option : app.get_options())
    option->description(wrap(option->get_description()));
  if (!app.get_description().ends_with('\n')) app.description(app.get_description() + "\n");
  try {
    app.parse(argc, argv);
    if (check) check();
  } catch (const CLI::Success& e) {  // --help, --version
    std::exit(app.exit(e));
  } catch (const CLI::Error& e) {
    std::cerr << app.get_name() << ": " << e.what() << "\nrun '" << app.get_name()
              << " --help' for the options\n";
    std::exit(2);
  }
}

// Runs a program's body and returns its exit code; an exception that escapes the body is
// reported as "<program>: <what>" with exit code 1, not left to std::terminate.
template <class Body>
int run_main(const char* program, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: an unknown exception\n", program);
  }
  return 1;
}

}  // namespace bench
