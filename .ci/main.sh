#!/usr/bin/env bash
# The main job: build the release preset and run the stress benchmark (in memory, ~21 s).
# Extra arguments go to the stress tool (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target strata-stress
exec build/release/bench/strata-stress "$@"
