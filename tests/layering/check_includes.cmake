# The layering of src/, checked on every test run (ctest -R layering):
#   - the faces of the engine, src/recipes and src/fdb_c, use the public API only: their
#     files include public headers (strata/...) and their own layer's, and fdb_c the
#     generic locks of base/ (the adaptive mutex, and the annotated mutex and locks), its
#     invariant checks, its per-thread kept blocks, FoundationDB's limits (base/limits.hpp:
#     what a transaction drops as holding no key), and engine/system_key_conflicts.hpp
#     (conflict ranges under FoundationDB's system-keys options, which the public API
#     lacks: docs/decisions/0039);
#   - the layers below the public API, src/kv and src/durability, include no public header
#     but the two the whole tree shares: strata/types.hpp (its value types) and
#     strata/error.hpp (the one error type every layer throws).
# Run as: cmake -DSOURCE_DIR=<repository> -P check_includes.cmake
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "SOURCE_DIR is not set")
endif()

set(violations "")

# check(layer allowed-regex): every #include "..." of src/<layer> must match the regex.
function(check layer allowed)
  file(GLOB_RECURSE files ${SOURCE_DIR}/src/${layer}/*.cpp ${SOURCE_DIR}/src/${layer}/*.hpp
       ${SOURCE_DIR}/src/${layer}/*.h)
  foreach(file IN LISTS files)
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*$" "\\1" header "${line}")
      if(NOT header MATCHES "${allowed}")
        file(RELATIVE_PATH where ${SOURCE_DIR} ${file})
        list(APPEND violations "${where}: #include \"${header}\"")
      endif()
    endforeach()
  endforeach()
  set(violations ${violations} PARENT_SCOPE)
endfunction()

check(recipes "^(strata|recipes)/")
# strata_fdb_c.h: the C header's own half, beside it in the build tree and the install.
check(fdb_c "^(strata/|fdb_c/|base/(adaptive_mutex|mutex|invariant|kept_block|limits)\\.hpp$|strata_fdb_c\\.h$|engine/system_key_conflicts\\.hpp$)")
check(kv "^(strata/types\\.hpp|strata/error\\.hpp|base/|kv/)")
check(durability "^(strata/types\\.hpp|strata/error\\.hpp|base/|durability/)")
# The cluster backend: the public types it implements, base/ helpers, the C API's header and
# the versionstamp operand check it shares with the engine.
check(cluster "^(strata/|base/|cluster/|fdb_c/fdb_c\\.h$|engine/versionstamp\\.hpp$)")

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "includes that break the layering:\n  ${text}")
endif()
message(STATUS "layering holds")
