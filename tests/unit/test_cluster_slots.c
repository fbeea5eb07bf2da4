/*
 * Redis Cluster's pure part (queue/cluster.c): key slots with hash tags
 * (the values Redis's documentation gives, and the CRC16 check value),
 * a CLUSTER SLOTS reply read into a map, MOVED and ASK replies. The
 * same functions meet a real three-primary cluster in
 * tests/integration/test_cluster.c.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "queue/cluster.h"

static unsigned
slot(const char *key)
{
	return (cluster_keyslot(key, strlen(key)));
}

static void
test_cluster_keyslot(void **state)
{
	(void)state;
	/* CRC16/XMODEM's check value 0x31C3, masked to 14 bits. */
	assert_int_equal(slot("123456789"), 0x31C3 & 0x3FFF);
	/* CLUSTER KEYSLOT's documented examples. */
	assert_int_equal(slot("somekey"), 11058);
	assert_int_equal(slot("foo{hash_tag}"), 2515);
	assert_int_equal(slot("bar{hash_tag}"), 2515);
	/* The tag is between the first '{' and the next '}'. */
	assert_int_equal(slot("q:{exec}:normal"), slot("exec"));
	assert_int_equal(slot("foo{bar}{zap}"), slot("bar"));
	assert_int_equal(slot("foo{{bar}}zap"), slot("{bar"));
	/* An empty tag, or none closed: the whole key. */
	assert_int_equal(slot("foo{}{bar}"), cluster_keyslot("foo{}{bar}",
	    10));
	assert_int_not_equal(slot("foo{}{bar}"), slot("bar"));
	assert_int_equal(slot("{exec"), cluster_keyslot("{exec", 5));
	assert_int_not_equal(slot("{exec"), slot("exec"));
	/* len, not the NUL, ends the key. */
	assert_int_equal(cluster_keyslot("exec:tail", 4), slot("exec"));
	assert_true(slot("") < CLUSTER_SLOTS);
}

/* A reply element of the given type. */
static redisReply *
reply(int type, long long integer, const char *str, size_t n)
{
	redisReply	*r = calloc(1, sizeof *r);

	r->type = type;
	r->integer = integer;
	if (str != NULL) {
		r->str = strdup(str);
		r->len = strlen(str);
	}
	if (n > 0) {
		r->elements = n;
		r->element = calloc(n, sizeof *r->element);
	}
	return (r);
}

/* [start, end, [host, port, id]] */
static redisReply *
range(long long start, long long end, const char *host, int port)
{
	redisReply	*r = reply(REDIS_REPLY_ARRAY, 0, NULL, 4);
	redisReply	*n = reply(REDIS_REPLY_ARRAY, 0, NULL, 3);

	r->element[0] = reply(REDIS_REPLY_INTEGER, start, NULL, 0);
	r->element[1] = reply(REDIS_REPLY_INTEGER, end, NULL, 0);
	n->element[0] = reply(REDIS_REPLY_STRING, 0, host, 0);
	n->element[1] = reply(REDIS_REPLY_INTEGER, port, NULL, 0);
	n->element[2] = reply(REDIS_REPLY_STRING, 0, "abc", 0);
	r->element[2] = n;
	/* A replica, which the map leaves out. */
	n = reply(REDIS_REPLY_ARRAY, 0, NULL, 3);
	n->element[0] = reply(REDIS_REPLY_STRING, 0, "10.0.0.9", 0);
	n->element[1] = reply(REDIS_REPLY_INTEGER, 7000, NULL, 0);
	n->element[2] = reply(REDIS_REPLY_STRING, 0, "def", 0);
	r->element[3] = n;
	return (r);
}

static void
test_cluster_map(void **state)
{
	struct cluster_map		 map;
	const struct cluster_node	*n;
	redisReply			*r;

	(void)state;
	r = reply(REDIS_REPLY_ARRAY, 0, NULL, 3);
	r->element[0] = range(0, 5460, "127.0.0.1", 7001);
	r->element[1] = range(5461, 10922, "", 7002);
	r->element[2] = range(10923, 16383, "127.0.0.1", 7003);
	assert_int_equal(cluster_map_parse(&map, r, "10.1.1.1"), 0);
	assert_int_equal(map.nnodes, 3);
	n = cluster_map_node(&map, 0);
	assert_string_equal(n->host, "127.0.0.1");
	assert_int_equal(n->port, 7001);
	n = cluster_map_node(&map, 5461);
	assert_string_equal(n->host, "10.1.1.1");	/* the fallback */
	assert_int_equal(n->port, 7002);
	assert_int_equal(cluster_map_node(&map, 16383)->port, 7003);
	assert_null(cluster_map_node(&map, 16384));
	cluster_map_release(&map);
	assert_null(cluster_map_node(&map, 0));
	/* A slot nobody serves; then a range past the last slot. */
	freeReplyObject(r->element[2]);
	r->element[2] = range(10923, 16000, "127.0.0.1", 7003);
	assert_int_equal(cluster_map_parse(&map, r, "x"), 0);
	assert_null(cluster_map_node(&map, 16001));
	cluster_map_release(&map);
	freeReplyObject(r->element[2]);
	r->element[2] = range(10923, 16384, "127.0.0.1", 7003);
	assert_int_equal(cluster_map_parse(&map, r, "x"), -1);
	assert_int_equal(map.nnodes, 0);
	freeReplyObject(r);
	r = reply(REDIS_REPLY_ERROR, 0, "ERR cluster support disabled", 0);
	assert_int_equal(cluster_map_parse(&map, r, "x"), -1);
	freeReplyObject(r);
}

static void
test_cluster_redirect(void **state)
{
	struct cluster_node	n;
	unsigned		s;
	int			ask;

	(void)state;
	assert_int_equal(cluster_redirect("MOVED 3999 127.0.0.1:6381", &ask,
	    &s, &n), 1);
	assert_int_equal(ask, 0);
	assert_int_equal(s, 3999);
	assert_string_equal(n.host, "127.0.0.1");
	assert_int_equal(n.port, 6381);
	assert_int_equal(cluster_redirect("ASK 16383 ::1:7002", &ask, &s, &n),
	    1);
	assert_int_equal(ask, 1);
	assert_string_equal(n.host, "::1");
	assert_int_equal(n.port, 7002);
	assert_int_equal(cluster_redirect("MOVED 16384 h:1", &ask, &s, &n), 0);
	assert_int_equal(cluster_redirect("MOVED 1 h:0", &ask, &s, &n), 0);
	assert_int_equal(cluster_redirect("MOVED 1 h", &ask, &s, &n), 0);
	assert_int_equal(cluster_redirect("MOVED x h:1", &ask, &s, &n), 0);
	assert_int_equal(cluster_redirect("ERR wrong type", &ask, &s, &n), 0);
	assert_int_equal(cluster_redirect("CROSSSLOT Keys", &ask, &s, &n), 0);
}

static void
tag_is(const char *key, const char *queue, const char *want)
{
	char	*got = cluster_tag(key, queue);

	assert_string_equal(got, want);
	free(got);
}

static void
test_cluster_tag(void **state)
{
	(void)state;
	tag_is("q:exec:normal", "exec", "q:{exec}:normal");
	tag_is("q:exec:ctl:w1", "exec", "q:{exec}:ctl:w1");
	tag_is("q:exec:alice.high", "exec", "q:{exec}:alice.high");
	/* A queue name may hold ':' and '.': the owner says where it ends. */
	tag_is("q:a:b:normal", "a:b", "q:{a:b}:normal");
	tag_is("q:exec:", "exec", "q:{exec}:");
	/* Another queue's key is not this one's to tag. */
	tag_is("q:execx:normal", "exec", "q:execx:normal");
	tag_is("q:ex:normal", "exec", "q:ex:normal");
	tag_is("execq:claim:job-1", "exec", "execq:{exec}:claim:job-1");
	tag_is("execq:workers", "w.2", "execq:{w.2}:workers");
	/* Tagged already: as it is (the rename is done once). */
	tag_is("q:{exec}:normal", "exec", "q:{exec}:normal");
	tag_is("execq:{exec}:claim:x", "exec", "execq:{exec}:claim:x");
	tag_is("other", "exec", "other");
	/* Every key of a queue lands in the queue's slot. */
	assert_int_equal(slot("q:{exec}:normal"),
	    slot("execq:{exec}:claim:job-1"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cluster_keyslot),
		cmocka_unit_test(test_cluster_map),
		cmocka_unit_test(test_cluster_redirect),
		cmocka_unit_test(test_cluster_tag),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
