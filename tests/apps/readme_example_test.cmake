# ctest script: the README's embedding example is apps/embed_example/main.cpp
# word for word, so the code people copy is the code CI builds and runs.
#   cmake -DSOURCE_DIR=... -P readme_example_test.cmake
file(READ ${SOURCE_DIR}/README.md readme)
file(READ ${SOURCE_DIR}/apps/embed_example/main.cpp example)
string(FIND "${readme}" "```cpp\n${example}```" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md does not contain apps/embed_example/main.cpp in a ```cpp block")
endif()
