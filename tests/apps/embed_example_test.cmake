# ctest script: install raypick from the build tree into a fresh prefix, then
# configure, build and run apps/embed_example against it with find_package
# alone, and check what it prints.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P embed_example_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
foreach(f include/raypick/bvh/picker.h lib/cmake/raypick/raypickConfig.cmake
          lib/pkgconfig/raypick.pc)
  if(NOT EXISTS ${WORK_DIR}/prefix/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/apps/embed_example -B ${WORK_DIR}/build
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/embed_example)
message("${out}")
set(expected "frame 0: object 5 triangle 2 t=9 (refitted)
frame 1: object 5 triangle 2 t=9 (refitted)
frame 2: object 5 triangle 2 t=9 (refitted)
")
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "unexpected output:\n${out}\nexpected:\n${expected}")
endif()

# The same program through pkg-config alone: the installed raypick.pc finds
# its prefix from its own place and links a static raypick without --static.
file(READ ${WORK_DIR}/prefix/lib/cmake/raypick/raypickConfig.cmake config)
if(config MATCHES "if\\((ON|OFF)\\)")
  message(FATAL_ERROR "raypickConfig.cmake holds a literal if(ON) or if(OFF)")
endif()
set(ENV{PKG_CONFIG_PATH} ${WORK_DIR}/prefix/lib/pkgconfig)
run(pkg-config --variable=prefix raypick)
string(STRIP "${out}" pc_prefix)
file(REAL_PATH "${pc_prefix}" pc_prefix)
file(REAL_PATH "${WORK_DIR}/prefix" want_prefix)
if(NOT pc_prefix STREQUAL want_prefix)
  message(FATAL_ERROR "raypick.pc's prefix is ${pc_prefix}, installed at ${want_prefix}")
endif()
run(pkg-config --cflags --libs raypick)
string(STRIP "${out}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(c++ -std=c++20 -O1 ${SOURCE_DIR}/apps/embed_example/main.cpp ${flags}
    -o ${WORK_DIR}/embed_example_pc)
run(${WORK_DIR}/embed_example_pc)
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "pkg-config build: unexpected output:\n${out}\nexpected:\n${expected}")
endif()
message("pkg-config build: same output")
