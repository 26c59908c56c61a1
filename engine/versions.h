/* versions.h: the library versions luacrawl is tested with (Debian 12's), for the code
 * that decides at run time whether a work-around applies. cmake/Versions.cmake holds
 * the same table for the build, and docs/architecture.md ("Library versions") lists
 * each work-around and its file. Widen an entry only after running the whole suite
 * with the new version. */
#ifndef LUACRAWL_VERSIONS_H
#define LUACRAWL_VERSIONS_H

/* libcurl 7.88.x, as major << 8 | minor (curl_version_info's version_num >> 8). */
#define LC_TESTED_CURL_MAJOR_MINOR 0x0758u
#define LC_TESTED_CURL "7.88"

#endif
