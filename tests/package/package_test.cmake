# Run with -P: builds strata, installs it to a prefix, then builds and runs its consumers: a
# find_package one, examples/ built on its own, a pkg-config one and an add_subdirectory one.
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()
set(common -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} ${common} -S ${STRATA_SOURCE_DIR} -B ${WORK_DIR}/strata
    -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF -DSTRATA_BUILD_EXAMPLES=OFF
    -DSTRATA_INSTALL=ON
    -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/strata)
run(${CMAKE_COMMAND} --install ${WORK_DIR}/strata)
# The install carries libfdb_c.so, FoundationDB's C API over strata (src/fdb_c).
file(GLOB fdb_c_installed ${WORK_DIR}/prefix/lib*/libfdb_c.so)
if(NOT fdb_c_installed)
  message(FATAL_ERROR "cmake --install did not install libfdb_c.so under ${WORK_DIR}/prefix")
endif()
# And the header C programs compile against (tests/fdb_c/c_program.c uses it in the build).
foreach(header fdb_c.h strata_fdb_c.h)
  if(NOT EXISTS ${WORK_DIR}/prefix/include/foundationdb/${header})
    message(FATAL_ERROR "cmake --install did not install include/foundationdb/${header}")
  endif()
endforeach()
run(${CMAKE_COMMAND} ${common} -S ${STRATA_SOURCE_DIR}/tests/package/consumer -B ${WORK_DIR}/consumer
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run(${WORK_DIR}/consumer/consumer)
# examples/ on its own, as the README has a user build it against an installed strata: its
# CMakeLists.txt finds the package (one example is enough to prove the wiring).
run(${CMAKE_COMMAND} ${common} -S ${STRATA_SOURCE_DIR}/examples -B ${WORK_DIR}/examples
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/examples --target example_quickstart)
run(${CMAKE_COMMAND} -DPROGRAM=${WORK_DIR}/examples/quickstart
    -DSOURCE=${STRATA_SOURCE_DIR}/examples/quickstart.cpp
    -P ${STRATA_SOURCE_DIR}/examples/run_example.cmake)

# A build without CMake: the compiler and linker flags come from the installed strata.pc
# alone, and the program reports the version that pkg-config reports.
file(GLOB pc_dir ${WORK_DIR}/prefix/lib*/pkgconfig)
if(NOT pc_dir)
  message(FATAL_ERROR "cmake --install did not install strata.pc under ${WORK_DIR}/prefix")
endif()
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND pkg-config --cflags --libs strata RESULT_VARIABLE rc
                OUTPUT_VARIABLE pc_flags ERROR_VARIABLE pc_err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs strata failed: ${pc_err}")
endif()
execute_process(COMMAND pkg-config --modversion strata OUTPUT_VARIABLE pc_version
                OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run(${CXX} ${STRATA_SOURCE_DIR}/tests/package/consumer/main.cpp -o ${WORK_DIR}/pc_consumer
    ${pc_flags})
execute_process(COMMAND ${WORK_DIR}/pc_consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "strata ${pc_version}\n")
  message(FATAL_ERROR "the pkg-config consumer failed (${rc}) or did not report "
                      "strata ${pc_version}: ${out}")
endif()

# The add_subdirectory consumer checks the subproject's wiring (option defaults, the alias
# target, include directories). It is configured with no build type, which strata must
# leave unset (its CMakeLists.txt checks), so it builds without LTO: the Release archive
# with fat LTO objects linked into a non-LTO consumer is what the find_package consumer
# checks.
run(${CMAKE_COMMAND} -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
    -S ${STRATA_SOURCE_DIR}/tests/package/subdir -B ${WORK_DIR}/subdir
    -DSTRATA_SOURCE_DIR=${STRATA_SOURCE_DIR})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/subdir --target consumer)
run(${WORK_DIR}/subdir/consumer)
message(STATUS "find_package, examples/, pkg-config and add_subdirectory consumers built and ran")
