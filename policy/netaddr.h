#ifndef EXECQ_NETADDR_H
#define EXECQ_NETADDR_H

/*
 * What a command's egress proxy may dial, as data: whether an IP address
 * is public (not loopback, private, link-local, cloud metadata, reserved
 * ...), numeric IP literals, DNS names and the patterns that grant them
 * ("pypi.org", "*.github.com", "192.0.2.7"). Pure: no socket, no DNS, no
 * connection; libc only. Every argument is borrowed; nothing is kept or
 * allocated. The proxy judges an address it is about to dial, whatever
 * name led to it: a granted name that resolves to 10.0.0.1 is still
 * refused.
 */

#include <sys/socket.h>

/*
 * 1 if the address at sa (len bytes, AF_INET or AF_INET6) may be dialled
 * by a command's proxy; 0 if not, with *why a short static reason
 * ("loopback", "private", "cloud metadata", "IPv4-mapped private",
 * "NAT64 of loopback", "Teredo", "not an IP address" ...). An IPv6 form
 * that carries an IPv4 address (mapped, compatible, NAT64, 6to4) is
 * judged by the IPv4 address; IPv6 outside 2000::/3 is "reserved". The
 * port is not judged. why may be NULL; *why is NULL when 1.
 */
int	netaddr_public(const struct sockaddr *sa, socklen_t len,
	    const char **why);

/*
 * Parses text, a numeric IPv4 ("192.0.2.7") or IPv6 literal ("2001:db8::1"
 * or "[2001:db8::1]") as inet_pton reads it, into *ss (port 0) and *len.
 * Nothing else is an address: no "127.1", "0x7f.1", "2130706433",
 * leading zeros, zone ids ("%eth0"), spaces, or an IPv4 in brackets.
 * 0, or -1 with errno EINVAL (*ss and *len untouched).
 */
int	netaddr_parse(const char *text, struct sockaddr_storage *ss,
	    socklen_t *len);

/*
 * 1 if host is a DNS name: labels of 1 to 63 of [A-Za-z0-9-], not
 * starting or ending with '-', at most 253 characters (one trailing dot
 * allowed beyond), at least one label. A name the resolver would read as
 * an IPv4 address ("127.1", "0x7f000001", "2130706433") or whose last
 * label is all digits is not a name: 0. IP literals are not names either
 * (netaddr_parse reads those).
 */
int	netaddr_host_valid(const char *host);

/*
 * 1 if pattern may grant hosts: a DNS name ("pypi.org"), "*." and a DNS
 * name of at least two labels ("*.github.com"; not "*", "*.com"), or an
 * IP literal as netaddr_parse reads it.
 */
int	netaddr_pattern_valid(const char *pattern);

/*
 * 1 if host is granted by pattern, case-insensitively, a trailing dot on
 * either ignored: "pypi.org" grants only "pypi.org"; "*.github.com" grants
 * "api.github.com" and "a.b.github.com", not "github.com" nor
 * "evilgithub.com". An IP literal is granted only by a pattern that is
 * the same address ("[2001:db8::1]" by "2001:db8:0::1"), never by a name.
 * 0 for an invalid pattern or host.
 */
int	netaddr_domain_match(const char *pattern, const char *host);

/*
 * The first of patterns (NULL-terminated) that grants host (borrowed from
 * patterns), or NULL.
 */
const char *netaddr_host_match_list(const char *const *patterns,
	    const char *host);

#endif
