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
    # The API reference: Doxygen over include/strata/, any warning an error (a second or two).
    echo "=== docs"
    cmake --build --preset release --target docs
    # The library's and the benchmarks' sources against .clang-tidy (headers under include/,
    # src/ and bench/ with them); the extra args quiet clang about GCC-only flags in the
    # compile commands, and the grep drops clang-tidy's count of the system headers' warnings
    # it did not show.
    echo "=== clang-tidy"
    git ls-files 'src/*.cpp' 'bench/*.cpp' |
      xargs -P "$jobs" -n 4 clang-tidy -p build/release --quiet \
        --warnings-as-errors='*' --extra-arg=-Wno-unknown-warning-option \
        --extra-arg=-Wno-ignored-optimization-argument 2> >(grep -v 'warnings generated' >&2)
  fi
done
if [ -d tests/fuzz ] && command -v clang++ >/dev/null; then
  echo "=== fuzz"
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j "$jobs"
  # Each fuzzer is one single-threaded process, so they run $jobs at a time, each for the
  # full FUZZ_SECONDS; their reports are shown in order once a batch is done.
  fuzz_seconds=${FUZZ_SECONDS:-60}
  fuzzers=()
  for f in build/fuzz/tests/fuzz/fuzz_*; do
    if [ -x "$f" ]; then fuzzers+=("$f"); fi
  done
  for ((i = 0; i < ${#fuzzers[@]}; i += jobs)); do
    batch=("${fuzzers[@]:i:jobs}")
    pids=()
    for f in "${batch[@]}"; do
      name=$(basename "$f")
      corpus=()
      if [ -d "tests/fuzz/corpus/$name" ]; then corpus=("tests/fuzz/corpus/$name"); fi
      mkdir -p "build/fuzz/corpus/$name"
      "$f" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
        "build/fuzz/corpus/$name" "${corpus[@]}" >"build/fuzz/$name.log" 2>&1 &
      pids+=($!)
    done
    failed=0
    for k in "${!batch[@]}"; do
      name=$(basename "${batch[k]}")
      echo "--- $name for $fuzz_seconds s"
      if wait "${pids[k]}"; then
        tail -n 5 "build/fuzz/$name.log"
      else
        tail -n 60 "build/fuzz/$name.log"
        echo "$name failed (log: build/fuzz/$name.log)"
        failed=1
      fi
    done
    [ "$failed" -eq 0 ] || exit 1
  done
fi
echo "all tests passed"
