# Stubs for every exported function of the real NVIDIA libraries that the shim does not
# implement: each fails loudly, naming itself (see gen/gen_stubs.py).
#
#   include(${CMAKE_CURRENT_SOURCE_DIR}/stubs.cmake)
#     sets PHANTORA_CUDART_STUBS: the generated stubs_cudart.cpp (libcudart.so's exports plus
#     the CUDA 12 functions CUDA 13 dropped), to add to the shim's sources;
#   phantora_library_stubs(<out_var> <library> [EXTRA_NAMES <file>...])
#     the same for another library, e.g. phantora_library_stubs(PHANTORA_CUBLAS_STUBS libcublas).
#
# <library> is the base name of a library in the CUDA toolkit's library directory
# (libcudart, libcublas, libcublasLt, libnccl, libcudnn). The generated source is
# ${CMAKE_CURRENT_BINARY_DIR}/stubs_<name>.cpp (<name> without "lib", lower case); its path is
# stored in <out_var>. It is regenerated at build time when the library, the extra name lists
# or the generator change. For cudart, ${PHANTORA_CUDART12_ONLY_NAMES} lists the CUDA 12
# functions that CUDA 13 dropped.
# Per directory: a custom command's output is only usable by targets of its own directory.
include_guard(DIRECTORY)

find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(PHANTORA_GEN_STUBS ${CMAKE_CURRENT_LIST_DIR}/gen/gen_stubs.py)
set(PHANTORA_CUDART12_ONLY_NAMES ${CMAKE_CURRENT_LIST_DIR}/gen/cudart12_only.txt)

function(phantora_library_stubs out_var library)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "EXTRA_NAMES")
  if(NOT CMAKE_NM)
    find_program(CMAKE_NM nm)
  endif()
  if(NOT CMAKE_NM)
    message(FATAL_ERROR "phantora_library_stubs: 'nm' (binutils) not found; it reads the "
                        "export list of ${library}.so. Install binutils or set CMAKE_NM.")
  endif()
  set(lib_path ${CUDAToolkit_LIBRARY_DIR}/${library}.so)
  if(NOT EXISTS ${lib_path})
    message(FATAL_ERROR "phantora_library_stubs: ${lib_path} not found. The stubs are "
                        "generated from the real library's exports; install the CUDA toolkit "
                        "component that provides ${library} or set CUDAToolkit_ROOT.")
  endif()
  string(REGEX REPLACE "^lib" "" name ${library})
  string(TOLOWER ${name} name)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/stubs_${name}.cpp)
  set(extra_args "")
  foreach(file IN LISTS arg_EXTRA_NAMES)
    list(APPEND extra_args --extra-names ${file})
  endforeach()
  # The .so is usually a symlink to the versioned file; depend on the real file.
  file(REAL_PATH ${lib_path} lib_real)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${Python3_EXECUTABLE} ${PHANTORA_GEN_STUBS} --nm ${CMAKE_NM} --library ${lib_path}
            ${extra_args} --output ${out}
    DEPENDS ${PHANTORA_GEN_STUBS} ${lib_real} ${arg_EXTRA_NAMES}
    COMMENT "Generating stubs for the exports of ${library}"
    VERBATIM)
  set(${out_var} ${out} PARENT_SCOPE)
endfunction()

phantora_library_stubs(PHANTORA_CUDART_STUBS libcudart EXTRA_NAMES ${PHANTORA_CUDART12_ONLY_NAMES})
