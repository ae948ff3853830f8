#!/usr/bin/env bash
# Builds and runs every test: the release build, then ASan+UBSan and TSan, then the fuzzers
# for a bounded time. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh
jobs=$(nproc)
for preset in release asan tsan; do
  echo "=== $preset: build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "=== $preset: test"
  ctest --preset "$preset"
  if [ "$preset" = release ]; then
    # The library's sources against .clang-tidy (headers under include/ and src/ with them);
    # the extra args quiet clang about GCC-only flags in the compile commands, and the grep
    # drops clang-tidy's count of the system headers' warnings it did not show.
    echo "=== clang-tidy"
    git ls-files 'src/*.cpp' | xargs -P "$jobs" -n 4 clang-tidy -p build/release --quiet \
      --warnings-as-errors='*' --extra-arg=-Wno-unknown-warning-option \
      --extra-arg=-Wno-ignored-optimization-argument 2> >(grep -v 'warnings generated' >&2)
  fi
done
if [ -d tests/fuzz ] && command -v clang++ >/dev/null; then
  echo "=== fuzz"
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j "$jobs"
  for f in build/fuzz/tests/fuzz/fuzz_*; do
    [ -x "$f" ] || continue
    corpus="tests/fuzz/corpus/$(basename "$f")"
    mkdir -p "build/fuzz/corpus/$(basename "$f")"
    echo "--- $(basename "$f") for ${FUZZ_SECONDS:-60} s"
    "$f" -max_total_time="${FUZZ_SECONDS:-60}" -print_final_stats=1 \
      "build/fuzz/corpus/$(basename "$f")" ${corpus:+$( [ -d "$corpus" ] && echo "$corpus")} 2>&1 | tail -n 5
  done
fi
echo "all tests passed"
