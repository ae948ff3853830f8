#!/usr/bin/env bash
# Builds strata with GCC's profile-guided optimisation (docs/decisions/0020):
#   1. the pgo-train preset: the library, libfdb_c.so, strata-stress and strata-peers,
#      instrumented;
#   2. training runs that write profiles to build/pgo-data: strata-stress's default mix
#      (queues, priority queues, key-value transactions, both recipe modes) in memory, on
#      disk and through the C API, and strata-peers' strata cells (queue and priority-queue pairs, point sets
#      and gets);
#   3. the pgo preset: everything (library, tools, tests, libfdb_c.so) optimised with them.
# Afterwards: build/pgo/bench/strata-stress, build/pgo/bench/strata-peers, ...;
# `ctest --preset pgo` runs the tests on that build. About twice a release build's time.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build/pgo-data
cmake --preset pgo-train >/dev/null
cmake --build --preset pgo-train --target strata-stress strata-peers
train_dir=$(mktemp -d)
trap 'rm -rf "$train_dir"' EXIT
build/pgo-train/bench/strata-stress --seconds 1 >/dev/null
build/pgo-train/bench/strata-stress --seconds 0.5 --path "$train_dir/db" >/dev/null
build/pgo-train/bench/strata-stress --seconds 0.5 --api c >/dev/null
build/pgo-train/bench/strata-peers --peers strata --seconds 1 --rounds 1 >/dev/null
cmake --preset pgo >/dev/null
cmake --build --preset pgo
