#!/usr/bin/env bash
# Runs app.js as a user would: `npm install` (the package's native module built against
# strata's <foundationdb/fdb_c.h> and libfdb_c.so), then `node app.js`, and compares what it
# prints with the "// Output:" block at the end of app.js.
#
#   examples/node/run.sh LIBDIR INCLUDEDIR WORKDIR
#
# LIBDIR holds libfdb_c.so, INCLUDEDIR foundationdb/fdb_c.h; the npm install goes to WORKDIR,
# once per package.json. Exit status: 0 passed; 77 skipped (node or npm absent, or the npm
# registry unreachable); anything else failed.
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 LIBDIR INCLUDEDIR WORKDIR" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
LIBDIR=$(cd "$1" && pwd -P)
INCDIR=$(cd "$2" && pwd -P)
mkdir -p "$3"
WORK=$(cd "$3" && pwd -P)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "SKIPPED: node and npm not found"
  exit 77
fi

STAMP=$(cksum <"$HERE/package.json" | cut -d' ' -f1)
if [[ "$(cat "$WORK/.installed" 2>/dev/null || true)" != "$STAMP" ]]; then
  rm -rf "$WORK/node_modules" "$WORK/.installed"
  cp "$HERE/package.json" "$WORK/"
  # The native module's build finds strata's header and library through these; without
  # LD_LIBRARY_PATH the package's prebuilt module cannot load, so it is built here.
  if ! (cd "$WORK" && CPATH="$INCDIR" LIBRARY_PATH="$LIBDIR" npm install --no-audit --no-fund \
          --loglevel=error --fetch-retries=1 --fetch-timeout=60000) >"$WORK/npm-install.log" 2>&1; then
    cat "$WORK/npm-install.log"
    if grep -Eqi 'ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENETUNREACH|EHOSTUNREACH|offline' \
         "$WORK/npm-install.log"; then
      echo "SKIPPED: npm could not reach its registry to install foundationdb"
      exit 77
    fi
    echo "FAILED: npm install (log above)" >&2
    exit 1
  fi
  echo "$STAMP" >"$WORK/.installed"
fi

expected=$(sed -n '/^\/\/ Output:$/,$p' "$HERE/app.js" | sed -n 's|^//   ||p')
actual=$(cd "$WORK" && NODE_PATH="$WORK/node_modules" LD_LIBRARY_PATH="$LIBDIR" \
           timeout --kill-after=10 120 node "$HERE/app.js")
if [[ "$actual" != "$expected" ]]; then
  printf 'app.js printed:\n%s\n\nit says it prints:\n%s\n' "$actual" "$expected" >&2
  exit 1
fi
echo "$actual"
