/*
 * queue/backlog.c without Redis: replies as Redis 7 writes them (RESP
 * read by hiredis's reader), recorded in order, and the counts and ages
 * made of them.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "queue/backlog.h"

/* One reply parsed from RESP text. */
static redisReply *
resp(const char *text)
{
	redisReader	*rd = redisReaderCreate();
	void		*r = NULL;

	redisReaderFeed(rd, text, strlen(text));
	assert_int_equal(redisReaderGetReply(rd, &r), REDIS_OK);
	assert_non_null(r);
	redisReaderFree(rd);
	return (r);
}

/* XINFO GROUPS with the group execq: pending, last id, lag (or nil). */
#define GROUPS(pending, last, lag)					\
	"*1\r\n*12\r\n$4\r\nname\r\n$5\r\nexecq\r\n"			\
	"$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:" pending "\r\n"	\
	"$17\r\nlast-delivered-id\r\n$" last "\r\n"			\
	"$12\r\nentries-read\r\n:4\r\n$3\r\nlag\r\n" lag "\r\n"

static void
test_backlog_parse_groups(void **state)
{
	struct backlog_group	 g;
	redisReply		*r;

	(void)state;
	r = resp(GROUPS("1", "15\r\n1700000000000-0", ":2"));
	assert_int_equal(backlog_parse_groups(r, "execq", &g), 0);
	assert_true(g.found);
	assert_int_equal(g.pending, 1);
	assert_int_equal(g.lag, 2);
	assert_string_equal(g.last_id, "1700000000000-0");
	assert_int_equal(backlog_parse_groups(r, "other", &g), 0);
	assert_false(g.found);
	freeReplyObject(r);
	r = resp(GROUPS("3", "3\r\n0-0", "$-1"));	/* lag nil */
	assert_int_equal(backlog_parse_groups(r, "execq", &g), 0);
	assert_int_equal(g.lag, -1);
	freeReplyObject(r);
	r = resp("-ERR no such key\r\n");
	assert_int_equal(backlog_parse_groups(r, "execq", &g), -1);
	freeReplyObject(r);
}

static void
test_backlog_ids_and_ages(void **state)
{
	(void)state;
	assert_int_equal(backlog_id_ms("1700000000123-7"), 1700000000123LL);
	assert_int_equal(backlog_id_ms("42"), 42);
	assert_int_equal(backlog_id_ms("x-1"), -1);
	assert_int_equal(backlog_id_ms("12x"), -1);
	assert_true(backlog_age_s(1000, 3500) == 2.5);
	assert_true(backlog_age_s(5000, 3500) == 0);	/* a clock step */
}

/* Records round 0 for one queue without agents: ctl, high, normal, low. */
static void
record_round0(struct backlog *b, const char *const *replies)
{
	redisReply	*r;
	size_t		 i;

	assert_int_equal(backlog_ncommands(b, 0), 3 + 2 * 4);
	for (i = 0; i < backlog_ncommands(b, 0); i++) {
		r = resp(replies[i]);
		backlog_record(b, 0, i, r);
		freeReplyObject(r);
	}
}

static void
test_backlog_counts(void **state)
{
	struct backlog		*b;
	struct backlog_cmd	 c;
	redisReply		*r;
	const char *const	 replies[] = {
		"*2\r\n$10\r\n1700000010\r\n$6\r\n500000\r\n",	/* TIME */
		":2\r\n", ":1\r\n",			/* delayed, dead */
		":0\r\n", "-ERR no such key\r\n",	/* ctl: none */
		":3\r\n", "*0\r\n",			/* high: no group */
		":3\r\n", GROUPS("1", "15\r\n1700000000000-0", "$-1"),
		":1\r\n", GROUPS("0", "15\r\n1700000000000-0", ":0"),
	};

	(void)state;
	b = backlog_create("exec", NULL);
	assert_int_equal(b->nlanes, 4);
	backlog_begin(b);
	backlog_command(b, 0, 4, &c);
	assert_int_equal(c.argc, 3);
	assert_string_equal(c.argv[0], "XINFO");
	assert_string_equal(c.argv[2], "q:exec:ctl");
	record_round0(b, replies);
	assert_false(b->failed);
	assert_int_equal(b->now_ms, 1700000010500LL);
	assert_int_equal(b->delayed, 2);
	assert_int_equal(b->dead, 1);
	assert_int_equal(b->lanes[0].waiting, 0);
	assert_int_equal(b->lanes[1].waiting, 3);	/* every entry */
	assert_int_equal(b->lanes[2].waiting, 2);	/* XLEN - pending */
	assert_int_equal(b->lanes[2].running, 1);
	assert_int_equal(b->lanes[3].waiting, 0);	/* lag 0 */
	/* Round 1: the oldest waiting entry of high and of normal. */
	assert_int_equal(backlog_ncommands(b, 1), 2);
	backlog_command(b, 1, 0, &c);
	assert_string_equal(c.argv[1], "q:exec:high");
	assert_string_equal(c.argv[2], "-");
	backlog_command(b, 1, 1, &c);
	assert_string_equal(c.argv[1], "q:exec:normal");
	assert_string_equal(c.argv[2], "(1700000000000-0");
	r = resp("*1\r\n*2\r\n$15\r\n1700000009000-0\r\n*2\r\n$4\r\nitem\r\n"
	    "$2\r\n{}\r\n");
	backlog_record(b, 1, 1, r);
	freeReplyObject(r);
	assert_true(b->lanes[2].oldest_age_s == 1.5);
	backlog_free(b);
}

static void
test_backlog_agents_lanes(void **state)
{
	struct backlog	*b;

	(void)state;
	b = backlog_create("build", "alice, bob");
	assert_int_equal(b->nlanes, 12);
	assert_string_equal(b->lanes[4].name, "alice.ctl");
	assert_string_equal(b->lanes[11].key, "q:build:bob.low");
	assert_string_equal(b->delayed_key, "q:build:delayed");
	assert_string_equal(b->dead_key, "q:build:dead");
	backlog_free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backlog_parse_groups),
		cmocka_unit_test(test_backlog_ids_and_ages),
		cmocka_unit_test(test_backlog_counts),
		cmocka_unit_test(test_backlog_agents_lanes),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
