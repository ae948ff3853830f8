# FindStrataLZ4.cmake: finds liblz4 and defines the imported target strata::lz4.
#
# Used by strata's own build (src/durability) and installed next to strataConfig.cmake,
# which includes it, so that consumers of the static archive link LZ4 too. Debian's
# liblz4-dev ships only a pkg-config file, upstream LZ4 a CMake package whose target names
# vary across versions; so try pkg-config, then the CMake package, then a plain search.
#
# Result: StrataLZ4_FOUND, and the target strata::lz4 when found. Include it any number
# of times; the target is defined once per directory scope.
if(TARGET strata::lz4)
  set(StrataLZ4_FOUND TRUE)
  return()
endif()
set(StrataLZ4_FOUND FALSE)

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(STRATA_LZ4_PC QUIET IMPORTED_TARGET liblz4)
  if(STRATA_LZ4_PC_FOUND)
    add_library(strata::lz4 INTERFACE IMPORTED)
    set_target_properties(strata::lz4 PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::STRATA_LZ4_PC)
    set(StrataLZ4_FOUND TRUE)
    return()
  endif()
endif()

find_package(lz4 CONFIG QUIET)
foreach(candidate IN ITEMS LZ4::lz4 lz4::lz4 LZ4::lz4_static LZ4::lz4_shared)
  if(TARGET ${candidate})
    add_library(strata::lz4 INTERFACE IMPORTED)
    set_target_properties(strata::lz4 PROPERTIES INTERFACE_LINK_LIBRARIES ${candidate})
    set(StrataLZ4_FOUND TRUE)
    return()
  endif()
endforeach()

find_path(STRATA_LZ4_INCLUDE_DIR NAMES lz4.h)
find_library(STRATA_LZ4_LIBRARY NAMES lz4 liblz4)
mark_as_advanced(STRATA_LZ4_INCLUDE_DIR STRATA_LZ4_LIBRARY)
if(STRATA_LZ4_INCLUDE_DIR AND STRATA_LZ4_LIBRARY)
  add_library(strata::lz4 UNKNOWN IMPORTED)
  set_target_properties(strata::lz4 PROPERTIES IMPORTED_LOCATION "${STRATA_LZ4_LIBRARY}"
                                               INTERFACE_INCLUDE_DIRECTORIES "${STRATA_LZ4_INCLUDE_DIR}")
  set(StrataLZ4_FOUND TRUE)
endif()
