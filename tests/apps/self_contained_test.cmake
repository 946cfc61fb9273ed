# Fails when a file of the repository refers to a file outside it: the
# repository must stand on its own (its specification is docs/contract.md).
# Usage: cmake -DSOURCE_DIR=... -P self_contained_test.cmake
execute_process(
  COMMAND grep -rnIE --exclude-dir=.git --exclude-dir=build* --exclude=self_contained_test.cmake
          "\\.\\./shared/|contract-readings\\.md" "${SOURCE_DIR}"
  OUTPUT_VARIABLE found
  RESULT_VARIABLE status)
if(status EQUAL 0)
  message(FATAL_ERROR "files refer outside the repository:\n${found}")
elseif(NOT status EQUAL 1)
  message(FATAL_ERROR "grep failed (status ${status})")
endif()
