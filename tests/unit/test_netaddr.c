/*
 * policy/netaddr.c: which addresses a command's proxy may dial, numeric
 * literals, DNS names and the patterns that grant them; every case a row.
 */

#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "policy/netaddr.h"

/* An address and its judgement: why NULL when public. */
struct addr_row {
	const char	*text;
	const char	*why;
};

/* Each range at its edges: the first and last address in, one just out. */
static const struct addr_row addr_v4_rows[] = {
	{ "0.0.0.0", "unspecified" },
	{ "0.255.255.255", "unspecified" },
	{ "1.0.0.0", NULL },
	{ "9.255.255.255", NULL },
	{ "10.0.0.0", "private" },
	{ "10.0.0.1", "private" },
	{ "10.255.255.255", "private" },
	{ "11.0.0.0", NULL },
	{ "100.63.255.255", NULL },
	{ "100.64.0.0", "carrier-grade NAT" },
	{ "100.127.255.255", "carrier-grade NAT" },
	{ "100.128.0.0", NULL },
	{ "126.255.255.255", NULL },
	{ "127.0.0.0", "loopback" },
	{ "127.0.0.1", "loopback" },
	{ "127.255.255.255", "loopback" },
	{ "128.0.0.0", NULL },
	{ "169.253.255.255", NULL },
	{ "169.254.0.0", "link-local" },
	{ "169.254.169.253", "link-local" },
	{ "169.254.169.254", "cloud metadata" },
	{ "169.254.169.255", "link-local" },
	{ "169.254.255.255", "link-local" },
	{ "169.255.0.0", NULL },
	{ "172.15.255.255", NULL },
	{ "172.16.0.0", "private" },
	{ "172.31.255.255", "private" },
	{ "172.32.0.0", NULL },
	{ "191.255.255.255", NULL },
	{ "192.0.0.0", "reserved" },
	{ "192.0.0.255", "reserved" },
	{ "192.0.1.0", NULL },
	{ "192.0.1.255", NULL },
	{ "192.0.2.0", "documentation" },
	{ "192.0.2.255", "documentation" },
	{ "192.0.3.0", NULL },
	{ "192.88.98.255", NULL },
	{ "192.88.99.0", "reserved" },
	{ "192.88.99.255", "reserved" },
	{ "192.88.100.0", NULL },
	{ "192.167.255.255", NULL },
	{ "192.168.0.0", "private" },
	{ "192.168.255.255", "private" },
	{ "192.169.0.0", NULL },
	{ "198.17.255.255", NULL },
	{ "198.18.0.0", "benchmarking" },
	{ "198.19.255.255", "benchmarking" },
	{ "198.20.0.0", NULL },
	{ "198.51.99.255", NULL },
	{ "198.51.100.0", "documentation" },
	{ "198.51.100.255", "documentation" },
	{ "198.51.101.0", NULL },
	{ "203.0.112.255", NULL },
	{ "203.0.113.0", "documentation" },
	{ "203.0.113.255", "documentation" },
	{ "203.0.114.0", NULL },
	{ "223.255.255.255", NULL },
	{ "224.0.0.0", "multicast" },
	{ "239.255.255.255", "multicast" },
	{ "240.0.0.0", "reserved" },
	{ "255.255.255.254", "reserved" },
	{ "255.255.255.255", "broadcast" },
	{ "8.8.8.8", NULL },
	{ "1.1.1.1", NULL },
};

static const struct addr_row addr_v6_rows[] = {
	{ "::", "unspecified" },
	{ "::1", "loopback" },
	/* IPv4-compatible, ::/96: the IPv4 address is judged. */
	{ "::2", "IPv4-compatible unspecified" },
	{ "::127.0.0.1", "IPv4-compatible loopback" },
	{ "::10.0.0.1", "IPv4-compatible private" },
	{ "::169.254.169.254", "IPv4-compatible cloud metadata" },
	{ "::8.8.8.8", NULL },
	{ "::ffff:ffff", "IPv4-compatible broadcast" },
	{ "::1:0:0", "reserved" },
	/* IPv4-mapped, ::ffff:0:0/96. */
	{ "::fffe:ffff:ffff", "reserved" },
	{ "::ffff:0:0", "IPv4-mapped unspecified" },
	{ "::ffff:127.0.0.1", "IPv4-mapped loopback" },
	{ "::ffff:10.0.0.1", "IPv4-mapped private" },
	{ "::ffff:169.254.169.254", "IPv4-mapped cloud metadata" },
	{ "::ffff:8.8.8.8", NULL },
	{ "::ffff:ffff:ffff", "IPv4-mapped broadcast" },
	{ "::1:0:0:0", "reserved" },
	/* NAT64, 64:ff9b::/96. */
	{ "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", "reserved" },
	{ "64:ff9b::", "NAT64 of unspecified" },
	{ "64:ff9b::127.0.0.1", "NAT64 of loopback" },
	{ "64:ff9b::10.0.0.1", "NAT64 of private" },
	{ "64:ff9b::169.254.169.254", "NAT64 of cloud metadata" },
	{ "64:ff9b::8.8.8.8", NULL },
	{ "64:ff9b::ffff:ffff", "NAT64 of broadcast" },
	{ "64:ff9b::1:0:0", "reserved" },
	/* Local-use NAT64, 64:ff9b:1::/48: public read in every layout. */
	{ "64:ff9b:0:ffff:ffff:ffff:ffff:ffff", "reserved" },
	{ "64:ff9b:1::", "NAT64 of unspecified" },
	{ "64:ff9b:1::127.0.0.1", "NAT64 of loopback" },
	{ "64:ff9b:1::10.0.0.1", "NAT64 of private" },
	{ "64:ff9b:1::169.254.169.254", "NAT64 of cloud metadata" },
	{ "64:ff9b:1:7f00:0:100::", "NAT64 of unspecified" },	/* /48 */
	{ "64:ff9b:1:808:8:808:808:808", NULL },
	{ "64:ff9b:1:a08:8:808:808:808", "NAT64 of private" },	/* /48 */
	{ "64:ff9b:1:80a:8:808:808:808", "NAT64 of private" },	/* /56 */
	{ "64:ff9b:1:808:a:808:808:808", "NAT64 of private" },	/* /64 */
	{ "64:ff9b:1:808:8:808:a08:808", "NAT64 of private" },	/* /96 */
	{ "64:ff9b:1::8.8.8.8", "NAT64 of unspecified" },	/* /64 */
	{ "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "NAT64 of broadcast" },
	{ "64:ff9b:2::", "reserved" },
	/* Discard-only, 100::/64. */
	{ "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved" },
	{ "100::", "discard-only" },
	{ "100::ffff:ffff:ffff:ffff", "discard-only" },
	{ "100:0:0:1::", "reserved" },
	/* Global unicast is 2000::/3. */
	{ "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved" },
	{ "2000::", NULL },
	{ "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "4000::", "reserved" },
	/* Teredo, 2001::/32. */
	{ "2001::", "Teredo" },
	{ "2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo" },
	{ "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "Teredo" },
	{ "2001:1::", NULL },
	/* Benchmarking, 2001:2::/48. */
	{ "2001:1:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "2001:2::", "benchmarking" },
	{ "2001:2:0:ffff:ffff:ffff:ffff:ffff", "benchmarking" },
	{ "2001:2:1::", NULL },
	/* Documentation, 2001:db8::/32 and 3fff::/20. */
	{ "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "2001:db8::", "documentation" },
	{ "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation" },
	{ "2001:db9::", NULL },
	{ "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "3fff::", "documentation" },
	{ "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation" },
	{ "3fff:1000::", NULL },
	/* 6to4, 2002::/16: the IPv4 address in bits 16 to 47. */
	{ "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "2002::", "6to4 of unspecified" },
	{ "2002:7f00:1::", "6to4 of loopback" },
	{ "2002:a00:1::1", "6to4 of private" },
	{ "2002:a9fe:a9fe::", "6to4 of cloud metadata" },
	{ "2002:808:808::", NULL },
	{ "2002:808:808:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "6to4 of broadcast" },
	{ "2003::", NULL },
	/* Unique local, fc00::/7, with AWS's metadata service in it. */
	{ "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved" },
	{ "fc00::", "unique local" },
	{ "fd00:ec2::253", "unique local" },
	{ "fd00:ec2::254", "cloud metadata" },
	{ "fd00:ec2::255", "unique local" },
	{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique local" },
	{ "fe00::", "reserved" },
	/* Link-local fe80::/10, site-local fec0::/10, multicast ff00::/8. */
	{ "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved" },
	{ "fe80::", "link-local" },
	{ "fe80::1", "link-local" },
	{ "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local" },
	{ "fec0::", "site-local" },
	{ "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "site-local" },
	{ "ff00::", "multicast" },
	{ "ff02::1", "multicast" },
	{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast" },
	/* Public. */
	{ "2606:4700::1111", NULL },
	{ "2001:4860:4860::8888", NULL },
	{ "[2606:4700:4700::1001]", NULL },
};

/* Parses and judges each row. */
static void
check_addrs(const struct addr_row *rows, size_t n)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	const char		*why;
	size_t			 i;
	int			 ok;

	for (i = 0; i < n; i++) {
		if (netaddr_parse(rows[i].text, &ss, &len) != 0)
			fail_msg("%s: not parsed", rows[i].text);
		why = "unset";
		ok = netaddr_public((struct sockaddr *)&ss, len, &why);
		if (ok != (rows[i].why == NULL) ||
		    (ok ? why != NULL : strcmp(why, rows[i].why) != 0))
			fail_msg("%s: %d %s, expected %d %s", rows[i].text,
			    ok, why ? why : "(public)", rows[i].why == NULL,
			    rows[i].why ? rows[i].why : "(public)");
		/* why may be NULL. */
		assert_int_equal(netaddr_public((struct sockaddr *)&ss, len,
		    NULL), ok);
	}
}

static void
test_netaddr_ipv4_ranges_at_their_edges(void **state)
{
	(void)state;
	check_addrs(addr_v4_rows, sizeof addr_v4_rows / sizeof addr_v4_rows[0]);
}

static void
test_netaddr_ipv6_ranges_and_embedded_ipv4(void **state)
{
	(void)state;
	check_addrs(addr_v6_rows, sizeof addr_v6_rows / sizeof addr_v6_rows[0]);
}

static void
test_netaddr_public_refuses_what_is_not_an_ip(void **state)
{
	struct sockaddr_in	sin;
	struct sockaddr_in6	sin6;
	struct sockaddr_un	sun;
	const char		*why;

	(void)state;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(0x08080808);
	assert_int_equal(netaddr_public((struct sockaddr *)&sin, sizeof sin,
	    &why), 1);
	assert_null(why);
	assert_int_equal(netaddr_public((struct sockaddr *)&sin,
	    sizeof sin - 1, &why), 0);
	assert_string_equal(why, "not an IP address");

	memset(&sin6, 0, sizeof sin6);
	sin6.sin6_family = AF_INET6;
	sin6.sin6_addr.s6_addr[0] = 0x26;
	assert_int_equal(netaddr_public((struct sockaddr *)&sin6,
	    sizeof sin6, &why), 1);
	assert_int_equal(netaddr_public((struct sockaddr *)&sin6,
	    sizeof sin, &why), 0);
	assert_string_equal(why, "not an IP address");

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	assert_int_equal(netaddr_public((struct sockaddr *)&sun, sizeof sun,
	    &why), 0);
	assert_string_equal(why, "not an IP address");
	assert_int_equal(netaddr_public(NULL, sizeof sin6, &why), 0);
	assert_string_equal(why, "not an IP address");
}

/* A literal and the family it parses to. */
static const struct {
	const char	*text;
	int		 family;
} parse_ok_rows[] = {
	{ "127.0.0.1", AF_INET },
	{ "0.0.0.0", AF_INET },
	{ "255.255.255.255", AF_INET },
	{ "::", AF_INET6 },
	{ "::1", AF_INET6 },
	{ "[::1]", AF_INET6 },
	{ "::ffff:127.0.0.1", AF_INET6 },
	{ "[::ffff:127.0.0.1]", AF_INET6 },
	{ "2606:4700::1111", AF_INET6 },
	{ "[2606:4700::1111]", AF_INET6 },
	{ "2001:DB8::A", AF_INET6 },
	{ "1:2:3:4:5:6:7:8", AF_INET6 },
	{ "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", AF_INET6 },
};

static void
test_netaddr_parse_reads_numeric_literals(void **state)
{
	struct sockaddr_storage		 ss;
	const struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	const struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t			 len;
	size_t				 i;

	(void)state;
	for (i = 0; i < sizeof parse_ok_rows / sizeof parse_ok_rows[0]; i++) {
		memset(&ss, 0xa5, sizeof ss);
		len = 0;
		if (netaddr_parse(parse_ok_rows[i].text, &ss, &len) != 0)
			fail_msg("%s: not parsed", parse_ok_rows[i].text);
		assert_int_equal(ss.ss_family, parse_ok_rows[i].family);
		if (ss.ss_family == AF_INET) {
			assert_int_equal(len, sizeof *sin);
			assert_int_equal(sin->sin_port, 0);
		} else {
			assert_int_equal(len, sizeof *sin6);
			assert_int_equal(sin6->sin6_port, 0);
			assert_int_equal(sin6->sin6_scope_id, 0);
			assert_int_equal(sin6->sin6_flowinfo, 0);
		}
	}
	assert_int_equal(netaddr_parse("192.0.2.7", &ss, &len), 0);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0xc0000207);
	assert_int_equal(netaddr_parse("[2001:db8::7]", &ss, &len), 0);
	assert_int_equal(sin6->sin6_addr.s6_addr[0], 0x20);
	assert_int_equal(sin6->sin6_addr.s6_addr[3], 0xb8);
	assert_int_equal(sin6->sin6_addr.s6_addr[15], 7);
}

/* What a Host header or a CONNECT line could try to pass for an address. */
static const char *const parse_bad_rows[] = {
	"",
	"127.1",			/* inet_aton shorthand */
	"127.0.1",
	"0x7f.1",
	"0x7f.0.0.1",
	"0x7f000001",
	"2130706433",			/* 127.0.0.1 as one number */
	"017700000001",			/* ... in octal */
	"0177.0.0.1",
	"010.0.0.1",			/* leading zeros: octal to inet_aton */
	"127.0.0.01",
	"1.2.3.256",
	"1.2.3.4.",
	"1.2.3",
	" 1.2.3.4",
	"1.2.3.4 ",
	"1.2.3.4\n",
	"1.2.3.4:80",
	"[1.2.3.4]",			/* brackets hold IPv6 only */
	"[::1",
	"::1]",
	"[[::1]]",
	"[]",
	"[",
	"]",
	"[::1]:443",
	"::1 ",
	"fe80::1%eth0",			/* zone ids */
	"fe80::1%1",
	"[fe80::1%25eth0]",
	"1:2:3:4:5:6:7:8:9",
	"1::2::3",
	":::1",
	"12345::",
	"::ffff:127.1",
	"::ffff:0x7f.0.0.1",
	"localhost",
	"example.com",
	"[0000:0000:0000:0000:0000:0000:0000:0000:0000:0001]",
};

static void
test_netaddr_parse_refuses_everything_else(void **state)
{
	struct sockaddr_storage	ss;
	socklen_t		len;
	size_t			i;

	(void)state;
	for (i = 0; i < sizeof parse_bad_rows / sizeof parse_bad_rows[0]; i++) {
		memset(&ss, 0xa5, sizeof ss);
		len = 77;
		errno = 0;
		if (netaddr_parse(parse_bad_rows[i], &ss, &len) != -1)
			fail_msg("'%s': parsed", parse_bad_rows[i]);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(len, 77);
		assert_int_equal(((unsigned char *)&ss)[0], 0xa5);
	}
	assert_int_equal(netaddr_parse(NULL, &ss, &len), -1);
}

/* A name and whether it is a valid host. */
struct name_row {
	const char	*text;
	int		 valid;
};

static const struct name_row host_rows[] = {
	{ "pypi.org", 1 },
	{ "pypi.org.", 1 },
	{ "PyPI.Org", 1 },
	{ "a", 1 },
	{ "localhost", 1 },
	{ "a-b.c", 1 },
	{ "1a.example", 1 },
	{ "x1", 1 },
	{ "123.example", 1 },
	{ "xn--bcher-kva.example", 1 },
	{ "", 0 },
	{ ".", 0 },
	{ "..", 0 },
	{ ".pypi.org", 0 },
	{ "pypi..org", 0 },
	{ "pypi.org..", 0 },
	{ "-a.com", 0 },
	{ "a-.com", 0 },
	{ "a.-b", 0 },
	{ "a_b.com", 0 },
	{ "_dmarc.example.com", 0 },
	{ "a%2e.com", 0 },
	{ "user@host.com", 0 },
	{ "host.com:80", 0 },
	{ "a b.com", 0 },
	{ "a.com\n", 0 },
	{ "*.github.com", 0 },
	{ "*", 0 },
	{ "b\xc3\xbc" "cher.example", 0 },
	{ "[::1]", 0 },
	{ "::1", 0 },
	/* Names a resolver would read as an IPv4 address. */
	{ "1.2.3.4", 0 },
	{ "1.2.3.4.", 0 },
	{ "127.1", 0 },
	{ "127.1.", 0 },
	{ "0x7f.1", 0 },
	{ "0x7f000001", 0 },
	{ "0X7F000001", 0 },
	{ "2130706433", 0 },
	{ "017700000001", 0 },
	{ "example.123", 0 },		/* an all-digit TLD */
};

static void
test_netaddr_host_valid(void **state)
{
	char	buf[300];
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof host_rows / sizeof host_rows[0]; i++)
		if (netaddr_host_valid(host_rows[i].text) != host_rows[i].valid)
			fail_msg("'%s': expected %d", host_rows[i].text,
			    host_rows[i].valid);
	assert_int_equal(netaddr_host_valid(NULL), 0);

	/* Labels of 63, not 64; names of 253 (and a dot), not 254. */
	memset(buf, 'a', 63);
	strcpy(buf + 63, ".com");
	assert_int_equal(netaddr_host_valid(buf), 1);
	memset(buf, 'a', 64);
	strcpy(buf + 64, ".com");
	assert_int_equal(netaddr_host_valid(buf), 0);
	for (i = 0; i < 4; i++) {		/* 4 * 62 + 5 = 253 */
		memset(buf + 62 * i, 'a', 61);
		buf[62 * i + 61] = '.';
	}
	strcpy(buf + 248, "abcde");
	assert_int_equal(strlen(buf), 253);
	assert_int_equal(netaddr_host_valid(buf), 1);
	strcat(buf, ".");
	assert_int_equal(netaddr_host_valid(buf), 1);
	buf[253] = 'f';
	assert_int_equal(netaddr_host_valid(buf), 0);
}

static const struct name_row pattern_rows[] = {
	{ "pypi.org", 1 },
	{ "pypi.org.", 1 },
	{ "localhost", 1 },
	{ "*.github.com", 1 },
	{ "*.github.com.", 1 },
	{ "*.co.uk", 1 },
	{ "*.a.b.c", 1 },
	{ "192.0.2.7", 1 },
	{ "2001:db8::1", 1 },
	{ "[2001:db8::1]", 1 },
	{ "", 0 },
	{ "*", 0 },
	{ "*.", 0 },
	{ "*.com", 0 },
	{ "*.com.", 0 },
	{ "**.github.com", 0 },
	{ "*github.com", 0 },
	{ "*.*.github.com", 0 },
	{ "a.*.com", 0 },
	{ "github.*", 0 },
	{ ".github.com", 0 },
	{ "*..github.com", 0 },
	{ "127.1", 0 },
	{ "*.0.0.1", 0 },
	{ "*.1.2.3.4", 0 },
	{ "192.0.2.0/24", 0 },
	{ "[192.0.2.7]", 0 },
	{ "github.com:443", 0 },
};

static void
test_netaddr_pattern_valid(void **state)
{
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof pattern_rows / sizeof pattern_rows[0]; i++)
		if (netaddr_pattern_valid(pattern_rows[i].text) !=
		    pattern_rows[i].valid)
			fail_msg("'%s': expected %d", pattern_rows[i].text,
			    pattern_rows[i].valid);
	assert_int_equal(netaddr_pattern_valid(NULL), 0);
}

/* A pattern, a host, and whether the one grants the other. */
static const struct {
	const char	*pattern;
	const char	*host;
	int		 match;
} match_rows[] = {
	{ "pypi.org", "pypi.org", 1 },
	{ "pypi.org", "pypi.org.", 1 },
	{ "pypi.org.", "pypi.org", 1 },
	{ "PyPI.org", "pypi.ORG", 1 },
	{ "pypi.org", "www.pypi.org", 0 },
	{ "pypi.org", "xpypi.org", 0 },
	{ "pypi.org", "pypi.org.evil.com", 0 },
	{ "pypi.org", "pypi.org..", 0 },
	{ "pypi.org", "pypi.or", 0 },
	{ "pypi.org", "", 0 },
	{ "*.github.com", "api.github.com", 1 },
	{ "*.github.com", "a.b.github.com", 1 },
	{ "*.github.com", "API.GitHub.Com.", 1 },
	{ "*.github.com.", "api.github.com", 1 },
	{ "*.github.com", "github.com", 0 },
	{ "*.github.com", "evilgithub.com", 0 },
	{ "*.github.com", ".github.com", 0 },
	{ "*.github.com", "github.com.evil.com", 0 },
	{ "*.github.com", "api.github.com.evil", 0 },
	{ "*.github.com", "api_x.github.com", 0 },
	{ "*.github.com", "-.github.com", 0 },
	{ "*.github.com", "*.github.com", 0 },
	{ "*", "github.com", 0 },
	{ "*.com", "github.com", 0 },
	{ "", "", 0 },
	/* An address only as itself. */
	{ "192.0.2.7", "192.0.2.7", 1 },
	{ "192.0.2.7", "192.0.2.8", 0 },
	{ "192.0.2.7", "::ffff:192.0.2.7", 0 },
	{ "192.0.2.7", "192.0.2.7.", 0 },
	{ "192.0.2.7", "0xc0.0.2.7", 0 },
	{ "127.0.0.1", "127.1", 0 },
	{ "10.0.0.5", "10.5", 0 },
	{ "2001:db8::1", "2001:db8::1", 1 },
	{ "2001:db8::1", "[2001:db8:0:0::1]", 1 },
	{ "[2001:db8::1]", "2001:DB8::0001", 1 },
	{ "2001:db8::1", "2001:db8::2", 0 },
	{ "localhost", "127.0.0.1", 0 },
	{ "localhost", "::1", 0 },
	{ "*.example.com", "127.0.0.1", 0 },
	{ "*.in-addr.arpa", "1.2.3.4", 0 },
	{ "pypi.org", "192.0.2.7", 0 },
};

static void
test_netaddr_domain_match(void **state)
{
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof match_rows / sizeof match_rows[0]; i++)
		if (netaddr_domain_match(match_rows[i].pattern,
		    match_rows[i].host) != match_rows[i].match)
			fail_msg("'%s' '%s': expected %d",
			    match_rows[i].pattern, match_rows[i].host,
			    match_rows[i].match);
	assert_int_equal(netaddr_domain_match(NULL, "pypi.org"), 0);
	assert_int_equal(netaddr_domain_match("pypi.org", NULL), 0);
}

static void
test_netaddr_host_match_list_first_wins(void **state)
{
	const char *const	 grants[] = {
		"*", "*.com", "pypi.org", "*.github.com", "api.github.com",
		"192.0.2.7", "[2001:db8::1]", NULL
	};
	const char *const	 none[] = { NULL };

	(void)state;
	assert_string_equal(netaddr_host_match_list(grants, "PYPI.org."),
	    "pypi.org");
	assert_string_equal(netaddr_host_match_list(grants, "api.github.com"),
	    "*.github.com");
	assert_string_equal(netaddr_host_match_list(grants, "192.0.2.7"),
	    "192.0.2.7");
	assert_string_equal(netaddr_host_match_list(grants, "2001:db8::1"),
	    "[2001:db8::1]");
	assert_null(netaddr_host_match_list(grants, "github.com"));
	assert_null(netaddr_host_match_list(grants, "example.com"));
	assert_null(netaddr_host_match_list(grants, "192.0.2.8"));
	assert_null(netaddr_host_match_list(grants, NULL));
	assert_null(netaddr_host_match_list(none, "pypi.org"));
	assert_null(netaddr_host_match_list(NULL, "pypi.org"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_netaddr_ipv4_ranges_at_their_edges),
		cmocka_unit_test(test_netaddr_ipv6_ranges_and_embedded_ipv4),
		cmocka_unit_test(test_netaddr_public_refuses_what_is_not_an_ip),
		cmocka_unit_test(test_netaddr_parse_reads_numeric_literals),
		cmocka_unit_test(test_netaddr_parse_refuses_everything_else),
		cmocka_unit_test(test_netaddr_host_valid),
		cmocka_unit_test(test_netaddr_pattern_valid),
		cmocka_unit_test(test_netaddr_domain_match),
		cmocka_unit_test(test_netaddr_host_match_list_first_wins),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
