# The library versions luacrawl is tested with: Debian 12's. Several files work around
# how one version of a library behaves (the table in docs/architecture.md, "Library
# versions", lists each work-around and its file); with another version those work-
# arounds may be needless or wrong, so a build that finds one says so. The same
# versions are in engine/versions.h for the code that checks at run time.
#
# Each entry: pkg-config name, the tested version's prefix (a version that starts
# with it is the tested one).
set(LUACRAWL_TESTED_VERSIONS
  "libcurl;7.88."
  "libcares;1.18."
  "libxml-2.0;2.9."
  "luajit;2.1.0-beta3"
  "hiredis;0.14."
  "sqlite3;3.40.")

function(luacrawl_check_versions)
  set(i 0)
  list(LENGTH LUACRAWL_TESTED_VERSIONS n)
  while(i LESS n)
    list(GET LUACRAWL_TESTED_VERSIONS ${i} module)
    math(EXPR j "${i} + 1")
    list(GET LUACRAWL_TESTED_VERSIONS ${j} tested)
    math(EXPR i "${i} + 2")
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --modversion ${module}
      OUTPUT_VARIABLE found OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      continue()
    endif()
    string(FIND "${found}" "${tested}" at)
    if(NOT at EQUAL 0)
      message(WARNING "${module} ${found} is not the version luacrawl is tested with "
        "(${tested}*): the work-arounds listed in docs/architecture.md "
        "(\"Library versions\") were written for that one; run the whole suite.")
    endif()
  endwhile()
endfunction()
