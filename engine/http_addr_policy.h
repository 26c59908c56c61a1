/* http_addr_policy.h: which addresses a connection may go to (SSRF protection).
 *
 * A policy is a list of denied networks (CIDRs, IPv4 and IPv6) and a public_only
 * switch that denies every address IANA's special-purpose registries set apart
 * (loopback, RFC 1918, link-local with 169.254.169.254, CGNAT, unique-local,
 * multicast, documentation, ...). IPv4 addresses are matched as IPv4-mapped IPv6
 * ones, so "::ffff:127.0.0.1" is 127.0.0.1 to every rule; under public_only the IPv4
 * address inside a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address is checked too.
 * Knows nothing of curl, the loop or Lua. */
#ifndef LUACRAWL_HTTP_ADDR_POLICY_H
#define LUACRAWL_HTTP_ADDR_POLICY_H

struct sockaddr;

typedef struct addr_policy addr_policy_t;

/* An empty policy (it denies nothing); NULL when out of memory. */
addr_policy_t *addr_policy_new(void);
void addr_policy_free(addr_policy_t *p);
/* A policy that denies what p denies; NULL when out of memory. */
addr_policy_t *addr_policy_copy(const addr_policy_t *p);

/* Deny a network: "10.0.0.0/8", "fc00::/7", "[::1]/128", or one address ("::1").
 * 0; -1 when cidr is not one (bits past the prefix set are refused, as in
 * "10.0.0.1/8", since they are most likely a typo), -2 when out of memory. */
int addr_policy_deny(addr_policy_t *p, const char *cidr);
void addr_policy_public_only(addr_policy_t *p, int on);

/* Whether the policy denies nothing. */
int addr_policy_empty(const addr_policy_t *p);

/* NULL when the address is allowed, else what denies it ("loopback 127.0.0.0/8",
 * or the CIDR as given to addr_policy_deny). p may be NULL (allows all). addr is
 * text ("127.0.0.1", "::1", "[::1]"); text that is no address is denied ("not an
 * IP address"). */
const char *addr_policy_check(const addr_policy_t *p, const char *addr);
const char *addr_policy_check_sa(const addr_policy_t *p, const struct sockaddr *sa);

#endif
