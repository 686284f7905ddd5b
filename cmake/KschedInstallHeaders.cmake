# Run at install time (cmake/KschedInstall.cmake): installs KSCHED_PUBLIC_HEADERS and every
# header they include with #include "..." (paths from the source root, as the whole tree
# writes them), transitively, under KSCHED_INCLUDE_DESTINATION with the same relative
# paths. A quoted include that names no file of the tree is an error: the installed
# headers would not compile.

set(todo ${KSCHED_PUBLIC_HEADERS})
set(seen "")
while(todo)
  list(POP_FRONT todo header)
  list(FIND seen "${header}" found)  # not IN_LIST: cmake_install.cmake runs with old policies
  if(NOT found EQUAL -1)
    continue()
  endif()
  list(APPEND seen ${header})
  if(NOT EXISTS "${KSCHED_SOURCE_DIR}/${header}")
    message(FATAL_ERROR "installing ksched's headers: ${header} does not exist (included by an installed header)")
  endif()
  file(STRINGS "${KSCHED_SOURCE_DIR}/${header}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" included "${line}")
    list(APPEND todo ${included})
  endforeach()
endwhile()

list(SORT seen)
foreach(header IN LISTS seen)
  get_filename_component(dir "${header}" DIRECTORY)
  file(INSTALL DESTINATION "${KSCHED_INCLUDE_DESTINATION}/${dir}" TYPE FILE FILES "${KSCHED_SOURCE_DIR}/${header}")
endforeach()
