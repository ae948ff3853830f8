# Checks that README.md shows the code of an example verbatim, in a ```cpp block: the
# example's text from its first #include to the end of main (before "// Output:").
#   cmake -DREADME=README.md -DSOURCE=examples/quickstart.cpp -P readme_check.cmake
file(READ ${README} readme)
file(READ ${SOURCE} source)
string(FIND "${source}" "#include" begin)
string(FIND "${source}" "\n// Output:" end)
if(begin EQUAL -1 OR end EQUAL -1)
  message(FATAL_ERROR "${SOURCE} has no #include or no \"// Output:\" block")
endif()
math(EXPR length "${end} - ${begin}")
string(SUBSTRING "${source}" ${begin} ${length} code)
string(STRIP "${code}" code)
string(FIND "${readme}" "```cpp\n${code}\n```" found)
if(found EQUAL -1)
  message(FATAL_ERROR "${README} does not show the code of ${SOURCE} (from its first "
                      "#include to the end of main) in a ```cpp block; copy it there")
endif()
