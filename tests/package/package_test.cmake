# Run with -P: builds strata, installs it to a prefix, then builds and runs two consumers.
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()
set(common -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} ${common} -S ${STRATA_SOURCE_DIR} -B ${WORK_DIR}/strata
    -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF -DSTRATA_INSTALL=ON
    -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/strata)
run(${CMAKE_COMMAND} --install ${WORK_DIR}/strata)
# The install carries libfdb_c.so, FoundationDB's C API over strata (src/fdb_c).
file(GLOB fdb_c_installed ${WORK_DIR}/prefix/lib*/libfdb_c.so)
if(NOT fdb_c_installed)
  message(FATAL_ERROR "cmake --install did not install libfdb_c.so under ${WORK_DIR}/prefix")
endif()
run(${CMAKE_COMMAND} ${common} -S ${STRATA_SOURCE_DIR}/tests/package/consumer -B ${WORK_DIR}/consumer
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run(${WORK_DIR}/consumer/consumer)
# The add_subdirectory consumer checks the subproject's wiring (option defaults, the alias
# target, include directories); it builds in Debug, without LTO: the Release archive with
# fat LTO objects linked into a non-LTO consumer is what the find_package consumer checks.
run(${CMAKE_COMMAND} -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug
    -S ${STRATA_SOURCE_DIR}/tests/package/subdir -B ${WORK_DIR}/subdir
    -DSTRATA_SOURCE_DIR=${STRATA_SOURCE_DIR})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/subdir --target consumer)
run(${WORK_DIR}/subdir/consumer)
message(STATUS "find_package and add_subdirectory consumers built and ran")
