/* curl_overrides.h: whether the luacrawl binary's override of libcurl's probes
 * (poll_shim.c) is on. It leans on what libcurl does inside, so it is on only with
 * the libcurl version it was tested with (engine/versions.h: 7.88.x, as Debian 12
 * ships it), and never when the environment has LUACRAWL_NO_OVERRIDES set to
 * anything but "" or "0". Decided once, before main() runs; until then, and
 * whenever off, poll() behaves exactly as the C library's. */
#ifndef LUACRAWL_CURL_OVERRIDES_H
#define LUACRAWL_CURL_OVERRIDES_H

#include <stddef.h>

int lc_overrides_on(void);

/* Why they are off ("LUACRAWL_NO_OVERRIDES is set", "libcurl 8.5.0 is not one they
 * were tested with"), or NULL when on. */
const char *lc_overrides_off_reason(void);

/* The decision, apart for its tests: 1 when the overrides may be on with
 * LUACRAWL_NO_OVERRIDES's value no_overrides (NULL when unset) and libcurl's
 * version_num and version; 0, with why written, when not. */
int lc_overrides_allowed(const char *no_overrides, unsigned version_num, const char *version,
                         char *why, size_t why_len);

#endif
