/* curl_overrides.c: the gate of the binary's libcurl override (curl_overrides.h).
 * Only the binary links it, with poll_shim.c. */
#include "curl_overrides.h"
#include "versions.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The override is on only with the libcurl version it was tested with
 * (LC_TESTED_CURL_MAJOR_MINOR, versions.h). What it depends on: that curl's only
 * zero-timeout poll() calls during curl_multi_socket_action are readiness probes of
 * its connections' sockets. */

static int on;
static char reason[96];

int lc_overrides_allowed(const char *no_overrides, unsigned version_num, const char *version,
                         char *why, size_t why_len)
{
    if (no_overrides && *no_overrides && strcmp(no_overrides, "0") != 0) {
        snprintf(why, why_len, "LUACRAWL_NO_OVERRIDES is set");
        return 0;
    }
    if (version_num >> 8 != LC_TESTED_CURL_MAJOR_MINOR) {
        snprintf(why, why_len, "libcurl %s is not one they were tested with",
                 version ? version : "(unknown)");
        return 0;
    }
    return 1;
}

/* Before main(), single-threaded. */
__attribute__((constructor)) static void decide(void)
{
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    on = lc_overrides_allowed(getenv("LUACRAWL_NO_OVERRIDES"), v ? v->version_num : 0,
                              v ? v->version : NULL, reason, sizeof(reason));
}

int lc_overrides_on(void)
{
    return on;
}

const char *lc_overrides_off_reason(void)
{
    return on ? NULL : reason;
}
