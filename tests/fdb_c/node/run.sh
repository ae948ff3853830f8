#!/usr/bin/env bash
# Node.js interoperability test for strata's libfdb_c.so.
#
#   tests/fdb_c/node/run.sh LIBDIR
#
# LIBDIR is the directory holding the built libfdb_c.so. The script installs the npm
# package `foundationdb` 2.0.1 and mocha (versions pinned by package.json and
# package-lock.json in this directory) into a cache directory, points the package's
# prebuilt native module at LIBDIR through LD_LIBRARY_PATH, and runs
#   1. the package's own shipped mocha suite (dist/test/*.js, API version 630);
#   2. our tests, tests/fdb_c/node/*.test.js (API version 720).
# Each suite runs in its own node process under a time limit: node must exit by itself
# when the suite is done (no future left pending), so a hang fails the test.
#
# Exit status: 0 all passed; 77 skipped (node/npm absent, no prebuilt module for this
# platform, or the npm registry unreachable); anything else is a failure.
#
# Environment:
#   STRATA_NODE_CACHE    where the npm packages are installed
#                        (default: ${XDG_CACHE_HOME:-$HOME/.cache}/strata-node)
#   STRATA_NODE_TIMEOUT  seconds each suite may take, exit included (default 300)
set -euo pipefail

skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAILED: $*" >&2
  exit 1
}

[[ $# -eq 1 ]] || fail "usage: $0 LIBDIR (the directory holding libfdb_c.so)"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  skip "node and npm not found; the FoundationDB bindings interop test needs them"
fi
[[ -f "$1/libfdb_c.so" ]] || fail "$1/libfdb_c.so does not exist (build the fdb_c target first)"
LIBDIR=$(cd "$1" && pwd -P)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
if ((NODE_MAJOR < 14)); then
  skip "node $(node --version) is too old; the FoundationDB bindings interop test needs node >= 14"
fi
PLATFORM=$(node -p 'process.platform + "-" + process.arch')

CACHE=${STRATA_NODE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/strata-node}
TIMEOUT=${STRATA_NODE_TIMEOUT:-300}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd -P)

# ---- install (once per package.json/package-lock.json; serialized between runs) ----------
exec 9>"$CACHE/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
fi
STAMP=$(cat "$HERE/package.json" "$HERE/package-lock.json" | cksum | cut -d' ' -f1)
if [[ "$(cat "$CACHE/.installed" 2>/dev/null || true)" != "$STAMP" ||
      ! -f "$CACHE/node_modules/foundationdb/package.json" ||
      ! -f "$CACHE/node_modules/mocha/bin/mocha.js" ]]; then
  echo "Installing foundationdb and mocha into $CACHE (npm ci --ignore-scripts)"
  rm -rf "$CACHE/node_modules" "$CACHE/.installed"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$CACHE/"
  # --ignore-scripts: the package's install script (node-gyp-build) would load the prebuilt
  # module, which needs a libfdb_c.so on the default library path, and then try to compile.
  if ! (cd "$CACHE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
          --fetch-retries=1 --fetch-timeout=60000) >"$CACHE/npm-install.log" 2>&1; then
    cat "$CACHE/npm-install.log"
    if grep -Eqi 'ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENETUNREACH|EHOSTUNREACH|ENETDOWN|network|offline|proxy' \
         "$CACHE/npm-install.log"; then
      skip "npm could not reach its registry to install foundationdb@2.0.1 and mocha; the FoundationDB bindings interop test needs them (installed once into $CACHE)"
    fi
    fail "npm ci failed in $CACHE (log above)"
  fi
  echo "$STAMP" >"$CACHE/.installed"
fi
exec 9>&-

PKG="$CACHE/node_modules/foundationdb"
MOCHA="$CACHE/node_modules/mocha/bin/mocha.js"
FDB_VERSION=$(node -p "require('$PKG/package.json').version")
[[ "$FDB_VERSION" == "2.0.1" ]] || fail "expected foundationdb 2.0.1 in $PKG, found $FDB_VERSION"
[[ -f "$PKG/prebuilds/$PLATFORM/node.napi.node" ]] ||
  skip "the npm package foundationdb 2.0.1 ships no prebuilt module for $PLATFORM"

# ---- environment of the node processes --------------------------------------------------------
export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NODE_PATH="$CACHE/node_modules"   # lets our tests (in the source tree) require them
export STRATA_FDB_C_LIBDIR="$LIBDIR"     # preflight.js checks the library loaded is ours
# The in-memory database of each node process: no state shared between runs.
unset STRATA_FDB_PATH

STATUS=0
run() { # run NAME DIR CMD...: runs CMD in DIR under the time limit; records a failure
  local name=$1 dir=$2 rc=0
  shift 2
  echo
  echo "=== $name"
  (cd "$dir" && timeout --kill-after=10 "$TIMEOUT" "$@") || rc=$?
  if ((rc == 124 || rc == 137)); then
    echo "FAILED: $name: node did not exit within ${TIMEOUT}s (a pending future or a hang)" >&2
    STATUS=1
  elif ((rc != 0)); then
    echo "FAILED: $name (exit status $rc)" >&2
    STATUS=1
  else
    echo "PASSED: $name"
  fi
}

# Preflight: the module loads, and loads strata's libfdb_c.so, not another one.
run "preflight (libfdb_c.so from $LIBDIR)" "$HERE" node "$HERE/preflight.js"
if ((STATUS != 0)); then
  exit 1
fi

MOCHA_OPTS=(--reporter spec --forbid-only --timeout 60000)
run "foundationdb 2.0.1: its own mocha suite (dist/test/*.js, API 630)" "$PKG" \
  node "$MOCHA" "${MOCHA_OPTS[@]}" "$PKG"/dist/test/*.js
run "strata's tests (tests/fdb_c/node/*.test.js, API 720)" "$HERE" \
  node "$MOCHA" "${MOCHA_OPTS[@]}" --forbid-pending "$HERE"/*.test.js

echo
if ((STATUS == 0)); then
  echo "fdb_c node interop: all suites passed"
else
  echo "fdb_c node interop: FAILED" >&2
fi
exit "$STATUS"
