# Which test suites this build registers, and why the others are missing. Several suites need
# something outside the repository (nvcc, NCCL, a PyTorch environment, clang, a browser) and
# register only where it is found; without this record a CI run could pass with a whole suite
# silently gone. Each suite's CMakeLists.txt says what became of it:
#
#   phantora_suite(<name> REGISTERED)
#   phantora_suite(<name> MISSING "<what is not there>" HOW "<how to install it>")
#   phantora_suite(<name> OFF "<why it was left out on purpose, e.g. an option>")
#
# phantora_suites_finish() (end of tests/CMakeLists.txt) writes the record to
# <build>/tests/suites.txt (docs/testing.md) and, when PHANTORA_REQUIRE_SUITES is on — the
# default where the environment says CI=true, as in .ci/run — fails the configuration naming
# every missing suite and how to install what it needs.

if(NOT DEFINED PHANTORA_REQUIRE_SUITES)
  if("$ENV{CI}" MATCHES "^([Tt][Rr][Uu][Ee]|1|[Yy][Ee][Ss])$")
    set(PHANTORA_REQUIRE_SUITES ON)
  else()
    set(PHANTORA_REQUIRE_SUITES OFF)
  endif()
endif()
set_property(GLOBAL PROPERTY PHANTORA_SUITES "")

function(phantora_suite name state)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "HOW" "")
  if(state STREQUAL "REGISTERED")
    set(detail "")
  elseif(state STREQUAL "MISSING")
    if(NOT arg_UNPARSED_ARGUMENTS OR NOT arg_HOW)
      message(FATAL_ERROR "phantora_suite(${name} MISSING ...) needs what is missing and HOW")
    endif()
    list(JOIN arg_UNPARSED_ARGUMENTS " " detail)
    string(APPEND detail " -- to install: ${arg_HOW}")
  elseif(state STREQUAL "OFF")
    list(JOIN arg_UNPARSED_ARGUMENTS " " detail)
  else()
    message(FATAL_ERROR "phantora_suite(${name} ${state}): REGISTERED, MISSING or OFF")
  endif()
  # A semicolon would split the entry in CMake's lists, a tab the file's fields.
  string(REPLACE ";" "," detail "${detail}")
  string(REPLACE "\t" " " detail "${detail}")
  string(TOLOWER "${state}" state)
  if(state STREQUAL "missing")
    message(STATUS "test suite ${name}: MISSING: ${detail}")
  endif()
  # One line per suite; tabs separate the fields (no field holds one).
  set_property(GLOBAL APPEND PROPERTY PHANTORA_SUITES "${name}\t${state}\t${detail}")
endfunction()

function(phantora_suites_finish)
  get_property(suites GLOBAL PROPERTY PHANTORA_SUITES)
  set(text "")
  set(missing "")
  foreach(entry IN LISTS suites)
    string(APPEND text "${entry}\n")
    if(entry MATCHES "^([^\t]+)\tmissing\t(.*)$")
      string(APPEND missing "  ${CMAKE_MATCH_1}: ${CMAKE_MATCH_2}\n")
    endif()
  endforeach()
  file(WRITE ${CMAKE_BINARY_DIR}/tests/suites.txt "${text}")
  if(missing AND PHANTORA_REQUIRE_SUITES)
    message(FATAL_ERROR
      "test suites missing (PHANTORA_REQUIRE_SUITES is on: CI=true, or -D):\n${missing}"
      "Install what they need, or configure with -DPHANTORA_REQUIRE_SUITES=OFF to run without "
      "them.")
  endif()
endfunction()
