#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "queue/rurl.h"

/* Parses url, which must succeed. */
static void
parse_ok(const char *url, struct rurl *u)
{
	char	*cause = NULL;

	if (rurl_parse(url, u, &cause) != 0)
		fail_msg("%s: %s", url, cause);
	assert_null(cause);
}

/* Parses url, which must fail with a cause containing want. */
static void
parse_fails(const char *url, const char *want)
{
	struct rurl	 u;
	char		*cause = NULL;

	if (rurl_parse(url, &u, &cause) == 0)
		fail_msg("%s: parsed, expected '%s'", url, want);
	assert_non_null(cause);
	if (strstr(cause, want) == NULL)
		fail_msg("%s: cause '%s' lacks '%s'", url, cause, want);
	assert_non_null(strstr(cause, "bad redis URL '"));
	assert_null(u.host);
	assert_null(u.path);
	assert_null(u.user);
	assert_null(u.password);
	assert_null(u.master);
	assert_null(u.sentinels);
	assert_null(u.sentinel_password);
	free(cause);
}

static void
test_rurl_host_port_db(void **state)
{
	struct rurl	u;

	(void)state;
	parse_ok("redis://cache.example.com:6380/3", &u);
	assert_string_equal(u.host, "cache.example.com");
	assert_int_equal(u.port, 6380);
	assert_int_equal(u.db, 3);
	assert_null(u.path);
	assert_null(u.user);
	assert_null(u.password);
	rurl_release(&u);
}

static void
test_rurl_defaults(void **state)
{
	struct rurl	u;

	(void)state;
	parse_ok("redis://10.0.0.7", &u);
	assert_string_equal(u.host, "10.0.0.7");
	assert_int_equal(u.port, 6379);
	assert_int_equal(u.db, 0);
	rurl_release(&u);

	parse_ok("redis://h/", &u);		/* empty db is 0 */
	assert_int_equal(u.port, 6379);
	assert_int_equal(u.db, 0);
	rurl_release(&u);

	parse_ok("REDIS://h:1/15", &u);		/* scheme in any case */
	assert_int_equal(u.port, 1);
	assert_int_equal(u.db, 15);
	rurl_release(&u);
}

static void
test_rurl_ipv6(void **state)
{
	struct rurl	u;

	(void)state;
	parse_ok("redis://[::1]:7000/2", &u);
	assert_string_equal(u.host, "::1");
	assert_int_equal(u.port, 7000);
	assert_int_equal(u.db, 2);
	rurl_release(&u);

	parse_ok("redis://[fe80::1:2]", &u);
	assert_string_equal(u.host, "fe80::1:2");
	assert_int_equal(u.port, 6379);
	rurl_release(&u);

	parse_fails("redis://::1", "IPv6 addresses must be in brackets");
	parse_fails("redis://[::1", "missing ']'");
	parse_fails("redis://[zz]", "bad IPv6 address");
	parse_fails("redis://[::1]x", "unexpected text after ']'");
}

static void
test_rurl_password_only(void **state)
{
	struct rurl	u;

	(void)state;
	parse_ok("redis://:s3cret@h", &u);
	assert_null(u.user);
	assert_string_equal(u.password, "s3cret");
	assert_string_equal(u.host, "h");
	rurl_release(&u);
}

static void
test_rurl_user_and_password(void **state)
{
	struct rurl	u;

	(void)state;
	parse_ok("redis://alice:pw:with:colons@h:6390/1", &u);
	assert_string_equal(u.user, "alice");
	assert_string_equal(u.password, "pw:with:colons");
	assert_string_equal(u.host, "h");
	assert_int_equal(u.port, 6390);
	assert_int_equal(u.db, 1);
	rurl_release(&u);

	parse_fails("redis://s3cret@h", "credentials must be [user]:password@");
	parse_fails("redis://alice:@h", "empty password");
}

static void
test_rurl_percent_decoding(void **state)
{
	struct rurl	u;

	(void)state;
	parse_ok("redis://a%3Ab%40c:p%40%2F%3a%25w@h", &u);
	assert_string_equal(u.user, "a:b@c");
	assert_string_equal(u.password, "p@/:%w");
	assert_string_equal(u.host, "h");
	rurl_release(&u);

	parse_fails("redis://:p%4@h", "bad percent-escape in password");
	parse_fails("redis://:p%zz@h", "bad percent-escape in password");
	parse_fails("redis://:p%00@h", "bad percent-escape in password");
	parse_fails("redis://u%:p@h", "bad percent-escape in user name");
}

static void
test_rurl_unix_with_db(void **state)
{
	struct rurl	u;

	(void)state;
	parse_ok("unix:///run/redis/redis.sock?db=4", &u);
	assert_null(u.host);
	assert_string_equal(u.path, "/run/redis/redis.sock");
	assert_int_equal(u.db, 4);
	rurl_release(&u);

	parse_ok("unix://bob:pw@/run/r.sock", &u);
	assert_string_equal(u.user, "bob");
	assert_string_equal(u.password, "pw");
	assert_string_equal(u.path, "/run/r.sock");
	assert_int_equal(u.db, 0);
	rurl_release(&u);

	parse_fails("unix://run/r.sock", "socket path must be absolute");
	parse_fails("unix:///", "missing socket path");
	parse_fails("unix:///r.sock?database=1", "the only query parameter");
	parse_fails("unix:///r.sock?db=16", "db must be 0-15");
}

static void
test_rurl_bare_path(void **state)
{
	struct rurl	u;

	(void)state;
	parse_ok("/tmp/redis.sock", &u);
	assert_null(u.host);
	assert_string_equal(u.path, "/tmp/redis.sock");
	assert_int_equal(u.db, 0);
	rurl_release(&u);
}

static void
test_rurl_host_port_shorthand(void **state)
{
	struct rurl	u;

	(void)state;
	parse_ok("localhost:6400", &u);
	assert_string_equal(u.host, "localhost");
	assert_int_equal(u.port, 6400);
	assert_null(u.path);
	rurl_release(&u);

	parse_ok("[::1]:6401", &u);
	assert_string_equal(u.host, "::1");
	assert_int_equal(u.port, 6401);
	rurl_release(&u);
}

static void
test_rurl_bad_port(void **state)
{
	(void)state;
	parse_fails("redis://h:0", "port must be 1-65535");
	parse_fails("redis://h:65536", "port must be 1-65535");
	parse_fails("redis://h:", "port must be 1-65535");
	parse_fails("redis://h:80x", "port must be 1-65535");
	parse_fails("redis://h:-1", "port must be 1-65535");
	parse_fails("redis://h:99999999999", "port must be 1-65535");
	parse_fails("h:0", "port must be 1-65535");
}

static void
test_rurl_bad_db(void **state)
{
	(void)state;
	parse_fails("redis://h/16", "db must be 0-15");
	parse_fails("redis://h/x", "db must be 0-15");
	parse_fails("redis://h/-1", "db must be 0-15");
	parse_fails("redis://h/1/", "db must be 0-15");
	parse_fails("redis://h?db=1", "the db goes in the path, /N");
}

/* rediss:// is redis:// over TLS; the display keeps the scheme. */
static void
test_rurl_rediss(void **state)
{
	struct rurl	 u;
	char		*d;

	(void)state;
	parse_ok("rediss://u:p%40ss@h.example:6380/2", &u);
	assert_int_equal(u.tls, 1);
	assert_string_equal(u.host, "h.example");
	assert_int_equal(u.port, 6380);
	assert_int_equal(u.db, 2);
	assert_string_equal(u.password, "p@ss");
	d = rurl_display(&u);
	assert_string_equal(d, "rediss://u:***@h.example:6380/2");
	free(d);
	rurl_release(&u);
	parse_ok("REDISS://h", &u);
	assert_int_equal(u.tls, 1);
	rurl_release(&u);
	parse_ok("redis://h", &u);
	assert_int_equal(u.tls, 0);
	rurl_release(&u);
}

static void
test_rurl_garbage(void **state)
{
	(void)state;
	parse_fails("", "missing host");
	parse_fails("redis://", "missing host");
	parse_fails("redis://:pw@", "missing host");
	parse_fails("http://h", "unknown scheme");
	parse_fails("not a url", "bad host name");
	parse_fails("redis://h h", "bad host name");
}

static void
test_rurl_display_hides_password(void **state)
{
	struct rurl	 u;
	char		*s;

	(void)state;
	parse_ok("redis://user:hunter2@host:6379/0", &u);
	s = rurl_display(&u);
	assert_string_equal(s, "redis://user:***@host:6379/0");
	free(s);
	rurl_release(&u);

	parse_ok("redis://:hunter2@host", &u);
	s = rurl_display(&u);
	assert_string_equal(s, "redis://:***@host:6379/0");
	free(s);
	rurl_release(&u);

	parse_ok("localhost", &u);
	s = rurl_display(&u);
	assert_string_equal(s, "redis://localhost:6379/0");
	free(s);
	rurl_release(&u);

	parse_ok("redis://[::1]:7000/5", &u);
	s = rurl_display(&u);
	assert_string_equal(s, "redis://[::1]:7000/5");
	free(s);
	rurl_release(&u);

	parse_ok("unix://u:hunter2@/r.sock?db=3", &u);
	s = rurl_display(&u);
	assert_string_equal(s, "unix://u:***@/r.sock?db=3");
	free(s);
	rurl_release(&u);
}

static void
test_rurl_error_hides_password(void **state)
{
	struct rurl	 u;
	char		*cause;

	(void)state;
	assert_int_equal(rurl_parse("redis://u:hunter2@h:0", &u, &cause), -1);
	assert_string_equal(cause,
	    "bad redis URL 'redis://u:***@h:0': port must be 1-65535");
	free(cause);

	/* No ':' (an error): the whole secret is masked. */
	assert_int_equal(rurl_parse("redis://hunter2@h", &u, &cause), -1);
	assert_null(strstr(cause, "hunter2"));
	free(cause);
}

/* A password with an unencoded '@', '/' or '?': no part of it is shown. */
static void
test_rurl_error_hides_unencoded_password(void **state)
{
	static const char *const bad[] = {
		"redis://u:hun@ter/2@h:0",
		"redis://:hun/ter@2@host/99",
		"redis://u:hunter/2@h",
		"unix://u:hun@ter/2@relative",
		"redis://u:hun?ter@2@h:0",
		"u:hun/ter@2@h:0",
	};
	struct rurl	 u;
	char		*cause;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(rurl_parse(bad[i], &u, &cause), -1);
		assert_null(strstr(cause, "hun"));
		assert_null(strstr(cause, "ter"));
		assert_non_null(strstr(cause, "***"));
		free(cause);
	}
	/* The user name is still shown where it can be told apart. */
	assert_int_equal(rurl_parse("redis://u:hun@ter/2@h:0", &u, &cause),
	    -1);
	assert_string_equal(cause,
	    "bad redis URL 'redis://u:***@h:0': db must be 0-15");
	free(cause);
}

static void
test_rurl_release_twice_is_harmless(void **state)
{
	struct rurl	u;

	(void)state;
	parse_ok("redis://u:p@h", &u);
	rurl_release(&u);
	assert_null(u.host);
	assert_null(u.password);
	rurl_release(&u);
	rurl_release(NULL);
}

static void
test_rurl_sentinel(void **state)
{
	struct rurl	 u, c;

	(void)state;
	parse_ok("redis-sentinel://10.0.0.1:26379,s2,[::1]:5000/mymaster",
	    &u);
	assert_null(u.host);
	assert_null(u.path);
	assert_string_equal(u.master, "mymaster");
	assert_int_equal(u.nsentinels, 3);
	assert_string_equal(u.sentinels[0].host, "10.0.0.1");
	assert_int_equal(u.sentinels[0].port, 26379);
	assert_string_equal(u.sentinels[1].host, "s2");
	assert_int_equal(u.sentinels[1].port, 26379);	/* the default */
	assert_string_equal(u.sentinels[2].host, "::1");
	assert_int_equal(u.sentinels[2].port, 5000);
	assert_int_equal(u.db, 0);
	assert_null(u.user);
	assert_null(u.password);
	assert_null(u.sentinel_password);
	rurl_copy(&c, &u);
	rurl_release(&u);
	assert_string_equal(c.sentinels[2].host, "::1");
	assert_string_equal(c.master, "mymaster");
	rurl_release(&c);

	/* The userinfo is the data nodes'; the sentinels' is in the query. */
	parse_ok("redis-sentinel://worker:p%40ss@h1:1,h2:2/m.1?db=4&"
	    "sentinel_user=sent&sentinel_password=s%26cret", &u);
	assert_string_equal(u.user, "worker");
	assert_string_equal(u.password, "p@ss");
	assert_int_equal(u.db, 4);
	assert_string_equal(u.master, "m.1");
	assert_string_equal(u.sentinel_user, "sent");
	assert_string_equal(u.sentinel_password, "s&cret");
	rurl_release(&u);

	parse_ok("REDIS-SENTINEL://h/m?sentinel_password=x", &u);
	assert_int_equal(u.nsentinels, 1);
	assert_null(u.sentinel_user);
	assert_string_equal(u.sentinel_password, "x");
	rurl_release(&u);
}

static void
test_rurl_sentinel_bad(void **state)
{
	(void)state;
	parse_fails("redis-sentinel://h1:26379", "missing /master");
	parse_fails("redis-sentinel://h1:26379/", "missing master name");
	parse_fails("redis-sentinel:///m", "no sentinel address");
	parse_fails("redis-sentinel://h1,,h2/m", "empty sentinel address");
	parse_fails("redis-sentinel://h1,/m", "empty sentinel address");
	parse_fails("redis-sentinel://,h1/m", "empty sentinel address");
	parse_fails("redis-sentinel://h1:0/m", "port must be 1-65535");
	parse_fails("redis-sentinel://h1/m a", "bad master name");
	parse_fails("redis-sentinel://h1/m?db=16", "db must be 0-15");
	parse_fails("redis-sentinel://h1/m?tls=1", "the query parameters");
	parse_fails("redis-sentinel://h1/m?db", "name=value");
	parse_fails("redis-sentinel://h1/m?sentinel_user=u",
	    "sentinel_user without sentinel_password");
	parse_fails("redis-sentinel://h1/m?sentinel_password=",
	    "empty sentinel_user or sentinel_password");
	parse_fails("redis-sentinel://h1/m?sentinel_password=a&"
	    "sentinel_password=b", "given twice");
	parse_fails("redis-sentinel://a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q/m",
	    "too many sentinels");
}

static void
test_rurl_sentinel_hides_passwords(void **state)
{
	struct rurl	 u;
	char		*s, *cause;

	(void)state;
	parse_ok("redis-sentinel://w:hunter2@h1,[::1]:7/m?db=2&"
	    "sentinel_user=s&sentinel_password=swordfish", &u);
	s = rurl_display(&u);
	assert_string_equal(s, "redis-sentinel://w:***@h1:26379,[::1]:7/m?"
	    "db=2&sentinel_user=s&sentinel_password=***");
	free(s);
	rurl_release(&u);

	assert_int_equal(rurl_parse("redis-sentinel://w:hunter2@h1/m?"
	    "sentinel_password=swordfish&db=99", &u, &cause), -1);
	assert_null(strstr(cause, "hunter2"));
	assert_null(strstr(cause, "swordfish"));
	assert_non_null(strstr(cause, "sentinel_password=***&db=99"));
	free(cause);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rurl_host_port_db),
		cmocka_unit_test(test_rurl_defaults),
		cmocka_unit_test(test_rurl_ipv6),
		cmocka_unit_test(test_rurl_password_only),
		cmocka_unit_test(test_rurl_user_and_password),
		cmocka_unit_test(test_rurl_percent_decoding),
		cmocka_unit_test(test_rurl_unix_with_db),
		cmocka_unit_test(test_rurl_bare_path),
		cmocka_unit_test(test_rurl_host_port_shorthand),
		cmocka_unit_test(test_rurl_bad_port),
		cmocka_unit_test(test_rurl_bad_db),
		cmocka_unit_test(test_rurl_rediss),
		cmocka_unit_test(test_rurl_garbage),
		cmocka_unit_test(test_rurl_display_hides_password),
		cmocka_unit_test(test_rurl_error_hides_password),
		cmocka_unit_test(test_rurl_error_hides_unencoded_password),
		cmocka_unit_test(test_rurl_release_twice_is_harmless),
		cmocka_unit_test(test_rurl_sentinel),
		cmocka_unit_test(test_rurl_sentinel_bad),
		cmocka_unit_test(test_rurl_sentinel_hides_passwords),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
