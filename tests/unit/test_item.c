/* Unit tests for queue/item*.c: item parsing, answers, UTF-8 sanitizing. */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "queue/item.h"

#define MAX_LEN		(1024 * 1024)
#define FFFD		"\xef\xbf\xbd"

/* An item with valid id and type around the given args members. */
#define EXEC(args)	"{\"id\":\"job-1\",\"type\":\"EXEC\",\"args\":{" \
			    args "}}"

/* Parses in (len bytes) and asserts it fails with code and err.id == id. */
static void
check_bad_len(const char *in, size_t len, const char *code, const char *id)
{
	struct item		*it;
	struct item_error	 err;

	it = item_parse(in, len, MAX_LEN, &err);
	assert_null(it);
	assert_int_not_equal(err.code, ERR_NONE);
	assert_string_equal(errcode_name(err.code), code);
	assert_non_null(err.message);
	if (id == NULL)
		assert_null(err.id);
	else {
		assert_non_null(err.id);
		assert_string_equal(err.id, id);
	}
	item_error_release(&err);
	assert_null(err.message);
	assert_null(err.id);
	assert_null(err.reply_to);
}

/* check_bad_len for a NUL-terminated input. */
static void
check_bad(const char *in, const char *code, const char *id)
{
	check_bad_len(in, strlen(in), code, id);
}

/* Parses in, asserting success. */
static struct item *
parse_ok(const char *in)
{
	struct item		*it;
	struct item_error	 err;

	it = item_parse(in, strlen(in), MAX_LEN, &err);
	if (it == NULL)
		fail_msg("%s: %s", errcode_name(err.code), err.message);
	assert_int_equal(err.code, ERR_NONE);
	assert_null(err.message);
	return (it);
}

/* Parses in, asserting failure, and returns the message (allocated). */
static char *
bad_message(const char *in)
{
	struct item_error	 err;
	char			*msg;

	assert_null(item_parse(in, strlen(in), MAX_LEN, &err));
	msg = err.message;
	err.message = NULL;
	item_error_release(&err);
	return (msg);
}

static void
test_item_parse_full(void **state)
{
	struct item	*it;
	const char	*in = "{\"id\":\"01JD3Q8W0M.x:y_z-1\","
			    "\"type\":\"EXEC\",\"reply_to\":\"agent-7\","
			    "\"args\":{\"command\":\"make test\","
			    "\"cwd\":\"svc\",\"timeout_s\":120,"
			    "\"env\":{\"CI\":\"1\",\"_X2\":\"a=b\",\"E\":\"\"},"
			    "\"background\":true,\"pty\":true,\"rows\":24,"
			    "\"cols\":80,\"retries\":3}}";

	(void)state;
	it = parse_ok(in);
	assert_string_equal(it->id, "01JD3Q8W0M.x:y_z-1");
	assert_int_equal(it->type, ITEM_EXEC);
	assert_string_equal(it->reply_to, "agent-7");
	assert_string_equal(it->command, "make test");
	assert_string_equal(it->cwd, "svc");
	assert_int_equal(it->timeout_ms, 120000);
	assert_int_equal(it->nenv, 3);
	assert_string_equal(it->env[0], "CI=1");
	assert_string_equal(it->env[1], "_X2=a=b");
	assert_string_equal(it->env[2], "E=");
	assert_null(it->env[3]);
	assert_int_equal(it->background, 1);
	assert_int_equal(it->pty, 1);
	assert_int_equal(it->rows, 24);
	assert_int_equal(it->cols, 80);
	assert_int_equal(it->retries, 3);
	item_free(it);
}

static void
test_item_parse_defaults(void **state)
{
	struct item	*it;

	(void)state;
	it = parse_ok(EXEC("\"command\":\"true\""));
	assert_string_equal(it->id, "job-1");
	assert_null(it->reply_to);
	assert_string_equal(it->command, "true");
	assert_null(it->cwd);
	assert_int_equal(it->timeout_ms, 0);
	assert_null(it->env);
	assert_int_equal(it->nenv, 0);
	assert_int_equal(it->background, 0);
	assert_int_equal(it->pty, 0);
	assert_int_equal(it->rows, 0);
	assert_int_equal(it->cols, 0);
	assert_int_equal(it->retries, 0);
	item_free(it);
}

static void
test_item_parse_nulls_and_empty_mean_absent(void **state)
{
	struct item	*it;

	(void)state;
	it = parse_ok("{\"id\":\"a\",\"type\":\"EXEC\",\"reply_to\":null,"
	    "\"args\":{\"command\":\"x\",\"cwd\":\"\",\"timeout_s\":null,"
	    "\"env\":{},\"pty\":null,\"rows\":null}}");
	assert_null(it->reply_to);
	assert_null(it->cwd);
	assert_int_equal(it->timeout_ms, 0);
	assert_int_equal(it->nenv, 0);
	assert_non_null(it->env);
	assert_null(it->env[0]);
	assert_int_equal(it->pty, 0);
	item_free(it);
}

static void
test_item_parse_unknown_fields_ignored(void **state)
{
	struct item	*it;

	(void)state;
	it = parse_ok("{\"id\":\"a\",\"type\":\"EXEC\",\"extra\":[1,{}],"
	    "\"args\":{\"command\":\"x\",\"future\":{\"z\":null}},"
	    "\"v\":2}");
	assert_string_equal(it->command, "x");
	item_free(it);
}

static void
test_item_parse_timeout_rounds_up(void **state)
{
	struct item	*it;

	(void)state;
	it = parse_ok(EXEC("\"command\":\"x\",\"timeout_s\":0.0001"));
	assert_int_equal(it->timeout_ms, 1);
	item_free(it);
	it = parse_ok(EXEC("\"command\":\"x\",\"timeout_s\":1.5005"));
	assert_int_equal(it->timeout_ms, 1501);
	item_free(it);
	it = parse_ok(EXEC("\"command\":\"x\",\"timeout_s\":604800"));
	assert_int_equal(it->timeout_ms, 604800000L);
	item_free(it);
}

static void
test_item_parse_bad_json(void **state)
{
	char	*msg;

	(void)state;
	check_bad("{\"id\":\"a\",}", "bad_json", NULL);
	msg = bad_message("{\"id\":\"a\",}");
	assert_non_null(strstr(msg, "line 1, column"));
	free(msg);
}

static void
test_item_parse_truncated_json(void **state)
{
	(void)state;
	check_bad("{\"id\":\"a\",\"type\":\"EX", "bad_json", NULL);
}

static void
test_item_parse_top_level_array(void **state)
{
	(void)state;
	check_bad("[{\"id\":\"a\"}]", "bad_item", NULL);
}

static void
test_item_parse_top_level_string(void **state)
{
	(void)state;
	check_bad("\"EXEC\"", "bad_item", NULL);
}

static void
test_item_parse_empty_input(void **state)
{
	(void)state;
	check_bad("", "bad_json", NULL);
	check_bad_len(NULL, 0, "bad_json", NULL);
}

static void
test_item_parse_too_large(void **state)
{
	struct item_error	 err;
	const char		*in = EXEC("\"command\":\"true\"");

	(void)state;
	assert_null(item_parse(in, strlen(in), 10, &err));
	assert_string_equal(errcode_name(err.code), "item_too_large");
	assert_non_null(strstr(err.message, " 10 "));
	assert_null(err.id);		/* not parsed at all */
	item_error_release(&err);
	item_free(item_parse(in, strlen(in), strlen(in), &err));
	assert_int_equal(err.code, ERR_NONE);		/* exactly max_len is fine */
}

static void
test_item_parse_raw_nul_byte(void **state)
{
	static const char	in[] = EXEC("\"command\":\"a\0b\"");

	(void)state;
	check_bad_len(in, sizeof in - 1, "nul_byte", NULL);
}

static void
test_item_parse_nul_in_command(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"rm x\\u0000y\""), "nul_byte", "job-1");
}

static void
test_item_parse_nul_in_env_value(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"env\":{\"A\":\"1\\u0000\"}"),
	    "nul_byte", "job-1");
}

static void
test_item_parse_nul_in_key(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"env\":{\"A\\u0000B\":\"1\"}"),
	    "nul_byte", NULL);
}

static void
test_item_parse_nul_in_id(void **state)
{
	(void)state;
	check_bad("{\"id\":\"a\\u0000\",\"type\":\"EXEC\",\"args\":{}}",
	    "nul_byte", NULL);
}

static void
test_item_parse_missing_id(void **state)
{
	char	*msg;

	(void)state;
	check_bad("{\"type\":\"EXEC\",\"args\":{\"command\":\"x\"}}",
	    "bad_item", NULL);
	msg = bad_message("{\"type\":\"EXEC\",\"args\":{\"command\":\"x\"}}");
	assert_string_equal(msg, "id is missing");
	free(msg);
}

static void
test_item_parse_numeric_id(void **state)
{
	(void)state;
	check_bad("{\"id\":17,\"type\":\"EXEC\",\"args\":{\"command\":\"x\"}}",
	    "bad_item", NULL);
}

static void
test_item_parse_id_with_slash(void **state)
{
	(void)state;
	check_bad("{\"id\":\"../a/b\",\"type\":\"EXEC\",\"args\":"
	    "{\"command\":\"x\"}}", "bad_id", NULL);
	check_bad("{\"id\":\"a/b\",\"type\":\"EXEC\",\"args\":"
	    "{\"command\":\"x\"}}", "bad_id", NULL);
}

static void
test_item_parse_id_leading_dot(void **state)
{
	(void)state;
	check_bad("{\"id\":\".hidden\",\"type\":\"EXEC\",\"args\":"
	    "{\"command\":\"x\"}}", "bad_id", NULL);
	check_bad("{\"id\":\"\",\"type\":\"EXEC\",\"args\":"
	    "{\"command\":\"x\"}}", "bad_id", NULL);
}

static void
test_item_parse_id_too_long(void **state)
{
	char	id[130], in[512];

	(void)state;
	memset(id, 'a', 128);
	id[128] = '\0';
	snprintf(in, sizeof in, "{\"id\":\"%s\",\"type\":\"EXEC\",\"args\":"
	    "{\"command\":\"x\"}}", id);
	item_free(parse_ok(in));
	id[128] = 'a';
	id[129] = '\0';
	snprintf(in, sizeof in, "{\"id\":\"%s\",\"type\":\"EXEC\",\"args\":"
	    "{\"command\":\"x\"}}", id);
	check_bad(in, "bad_id", NULL);
}

static void
test_item_parse_id_valid(void **state)
{
	char	id[ITEM_ID_MAX + 2];

	(void)state;
	assert_true(item_id_valid("a"));
	assert_true(item_id_valid("A-z_0.9:x"));
	assert_true(item_id_valid("a..b"));
	assert_false(item_id_valid(NULL));
	assert_false(item_id_valid(""));
	assert_false(item_id_valid("."));
	assert_false(item_id_valid(".."));
	assert_false(item_id_valid("a b"));
	assert_false(item_id_valid("a\\b"));
	assert_false(item_id_valid("caf\xc3\xa9"));
	/* The longest id, as C and the fetch script (queue/scripts.c) see it. */
	assert_int_equal(atoi(ITEM_ID_MAX_S), ITEM_ID_MAX);
	memset(id, 'a', ITEM_ID_MAX);
	id[ITEM_ID_MAX] = '\0';
	assert_true(item_id_valid(id));
	id[ITEM_ID_MAX] = 'a';
	id[ITEM_ID_MAX + 1] = '\0';
	assert_false(item_id_valid(id));
}

static void
test_item_parse_missing_type(void **state)
{
	(void)state;
	check_bad("{\"id\":\"a\",\"args\":{\"command\":\"x\"}}", "bad_item",
	    "a");
}

static void
test_item_parse_unknown_type(void **state)
{
	char	*msg;

	(void)state;
	check_bad("{\"id\":\"a\",\"type\":\"exec\",\"args\":"
	    "{\"command\":\"x\"}}", "unknown_type", "a");
	msg = bad_message("{\"id\":\"a\",\"type\":\"KILL\",\"args\":{}}");
	assert_non_null(strstr(msg, "\"KILL\""));
	free(msg);
}

static void
test_item_parse_type_not_string(void **state)
{
	(void)state;
	check_bad("{\"id\":\"a\",\"type\":1,\"args\":{\"command\":\"x\"}}",
	    "bad_item", "a");
}

static void
test_item_parse_missing_args(void **state)
{
	(void)state;
	check_bad("{\"id\":\"a\",\"type\":\"EXEC\"}", "bad_item", "a");
}

static void
test_item_parse_args_not_object(void **state)
{
	(void)state;
	check_bad("{\"id\":\"a\",\"type\":\"EXEC\",\"args\":\"ls\"}",
	    "bad_item", "a");
	check_bad("{\"id\":\"a\",\"type\":\"EXEC\",\"args\":null}",
	    "bad_item", "a");
}

static void
test_item_parse_missing_command(void **state)
{
	char	*msg;

	(void)state;
	check_bad(EXEC("\"cwd\":\"x\""), "missing_command", "job-1");
	msg = bad_message(EXEC("\"cwd\":\"x\""));
	assert_string_equal(msg, "args.command is missing");
	free(msg);
}

static void
test_item_parse_empty_command(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"\""), "missing_command", "job-1");
}

static void
test_item_parse_whitespace_command(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\" \\t\\n \""), "missing_command",
	    "job-1");
}

static void
test_item_parse_command_not_string(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":[\"ls\"]"), "bad_item", "job-1");
}

static void
test_item_parse_cwd_not_string(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"cwd\":1"), "bad_item", "job-1");
}

static void
test_item_parse_timeout_zero(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"timeout_s\":0"), "bad_timeout",
	    "job-1");
	check_bad(EXEC("\"command\":\"x\",\"timeout_s\":0.0"), "bad_timeout",
	    "job-1");
}

static void
test_item_parse_timeout_negative(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"timeout_s\":-5"), "bad_timeout",
	    "job-1");
}

static void
test_item_parse_timeout_string(void **state)
{
	char	*msg;

	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"timeout_s\":\"abc\""),
	    "bad_timeout", "job-1");
	msg = bad_message(EXEC("\"command\":\"x\",\"timeout_s\":\"abc\""));
	assert_non_null(strstr(msg, "args.timeout_s must be a number of "
	    "seconds > 0"));
	assert_non_null(strstr(msg, ", got \"abc\""));
	free(msg);
}

static void
test_item_parse_timeout_too_large(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"timeout_s\":604800.001"),
	    "bad_timeout", "job-1");
	check_bad(EXEC("\"command\":\"x\",\"timeout_s\":1e300"),
	    "bad_timeout", "job-1");
}

/* jansson refuses 1e400 (overflow) itself; 1e-400 loads as 0.0. */
static void
test_item_parse_timeout_overflow(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"timeout_s\":1e400"), "bad_json",
	    NULL);
	check_bad(EXEC("\"command\":\"x\",\"timeout_s\":NaN"), "bad_json",
	    NULL);
	check_bad(EXEC("\"command\":\"x\",\"timeout_s\":1e-400"),
	    "bad_timeout", "job-1");
}

static void
test_item_parse_env_not_object(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"env\":[\"A=1\"]"), "bad_env",
	    "job-1");
}

static void
test_item_parse_env_value_number(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"env\":{\"A\":\"1\",\"B\":2}"),
	    "bad_env", "job-1");
}

static void
test_item_parse_env_bad_name(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"env\":{\"1X\":\"1\"}"), "bad_env",
	    "job-1");
	check_bad(EXEC("\"command\":\"x\",\"env\":{\"\":\"1\"}"), "bad_env",
	    "job-1");
	check_bad(EXEC("\"command\":\"x\",\"env\":{\"A-B\":\"1\"}"),
	    "bad_env", "job-1");
}

static void
test_item_parse_env_name_with_equals(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"env\":{\"A=B\":\"1\"}"), "bad_env",
	    "job-1");
}

static void
test_item_parse_env_too_many(void **state)
{
	char	*in, *p;
	size_t	 size = 64 * 300;
	int	 i;

	(void)state;
	in = malloc(size);
	assert_non_null(in);
	p = in + sprintf(in, "{\"id\":\"e\",\"type\":\"EXEC\",\"args\":"
	    "{\"command\":\"x\",\"env\":{");
	for (i = 0; i < 257; i++)
		p += sprintf(p, "%s\"V%d\":\"%d\"", i == 0 ? "" : ",", i, i);
	strcpy(p, "}}}");
	check_bad(in, "bad_env", "e");
	strcpy(strstr(in, ",\"V256\""), "}}}");	/* 256 are fine */
	item_free(parse_ok(in));
	free(in);
}

/* pre, m bytes of 'x', post: an item with a long command or value. */
static char *
long_item(const char *pre, size_t m, const char *post)
{
	char	*in;
	size_t	 n = strlen(pre);

	in = malloc(n + m + strlen(post) + 1);
	assert_non_null(in);
	memcpy(in, pre, n);
	memset(in + n, 'x', m);
	strcpy(in + n + m, post);
	return (in);
}

#define CMD_PRE	"{\"id\":\"l\",\"type\":\"EXEC\",\"args\":{\"command\":\""
#define ENV_PRE	"{\"id\":\"l\",\"type\":\"EXEC\",\"args\":{\"command\":" \
		    "\"x\",\"env\":{\"V\":\""

/* What execve(2) cannot take is refused up front, not at spawn. */
static void
test_item_parse_command_too_long(void **state)
{
	struct item		*it;
	struct item_error	 err;
	char			*in;

	(void)state;
	in = long_item(CMD_PRE, 131071, "\"}}");
	it = item_parse(in, strlen(in), 1 << 20, &err);
	assert_non_null(it);			/* the longest that runs */
	item_free(it);
	free(in);
	in = long_item(CMD_PRE, 131072, "\"}}");
	assert_null(item_parse(in, strlen(in), 1 << 20, &err));
	assert_string_equal(errcode_name(err.code), "command_too_long");
	assert_non_null(strstr(err.message, "131071"));
	assert_string_equal(err.id, "l");
	item_error_release(&err);
	free(in);
	/* NAME=value counts: "V=" and 131069 bytes is the longest. */
	in = long_item(ENV_PRE, 131069, "\"}}}");
	it = item_parse(in, strlen(in), 1 << 20, &err);
	assert_non_null(it);
	item_free(it);
	free(in);
	in = long_item(ENV_PRE, 131070, "\"}}}");
	assert_null(item_parse(in, strlen(in), 1 << 20, &err));
	assert_string_equal(errcode_name(err.code), "command_too_long");
	assert_non_null(strstr(err.message, "args.env.V"));
	item_error_release(&err);
	free(in);
}

/* An item too large to parse still names its id and reply_to. */
static void
test_item_refuse_large_peeks_id(void **state)
{
	struct item_error	 err;
	const char		*head = "{\"args\":{\"id\":\"inner\",\"env\":"
				    "{\"reply_to\":\"no\"}},\"type\":\"EXEC\", "
				    "\"id\" : \"outer-1\",\"reply_to\":\"agent\\\"x\","
				    "\"reply_to\":\"agent-7\",\"args2\":\"xxxxx";

	(void)state;
	item_refuse_large(head, strlen(head), 300000000, 1 << 20, &err);
	assert_string_equal(errcode_name(err.code), "item_too_large");
	assert_non_null(strstr(err.message, "300000000"));
	assert_string_equal(err.id, "outer-1");
	assert_string_equal(err.reply_to, "agent-7");	/* escaped: skipped */
	item_error_release(&err);
	/* Cut in the middle of the id: nothing is guessed. */
	item_refuse_large(head, strstr(head, "outer") + 3 - head, 300000000,
	    1 << 20, &err);
	assert_null(err.id);
	assert_null(err.reply_to);
	item_error_release(&err);
	item_refuse_large("", 0, 5, 1, &err);
	assert_null(err.id);
	item_error_release(&err);
}

static void
test_item_parse_reply_to_with_space(void **state)
{
	struct item_error	 err;
	const char		*in = "{\"id\":\"a\",\"reply_to\":\"my queue\","
				    "\"type\":\"EXEC\",\"args\":{\"command\":"
				    "\"x\"}}";

	(void)state;
	check_bad(in, "bad_reply_to", "a");
	assert_null(item_parse(in, strlen(in), MAX_LEN, &err));
	assert_null(err.reply_to);
	item_error_release(&err);
}

static void
test_item_parse_error_keeps_reply_to(void **state)
{
	struct item_error	 err;
	const char		*in = "{\"id\":\"a\",\"reply_to\":\"agent-7\","
				    "\"type\":\"EXEC\",\"args\":{}}";

	(void)state;
	assert_null(item_parse(in, strlen(in), MAX_LEN, &err));
	assert_string_equal(errcode_name(err.code), "missing_command");
	assert_string_equal(err.id, "a");
	assert_string_equal(err.reply_to, "agent-7");
	item_error_release(&err);
	assert_null(err.reply_to);
}

static void
test_item_parse_background_not_bool(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"background\":1"), "bad_item",
	    "job-1");
	check_bad(EXEC("\"command\":\"x\",\"pty\":\"yes\""), "bad_item",
	    "job-1");
}

static void
test_item_parse_rows_zero(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"rows\":0"), "bad_item", "job-1");
	check_bad(EXEC("\"command\":\"x\",\"cols\":1001"), "bad_item",
	    "job-1");
	check_bad(EXEC("\"command\":\"x\",\"rows\":24.0"), "bad_item",
	    "job-1");
}

static void
test_item_parse_retries_out_of_range(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"x\",\"retries\":99"), "bad_item",
	    "job-1");
	check_bad(EXEC("\"command\":\"x\",\"retries\":-1"), "bad_item",
	    "job-1");
}

static void
test_item_parse_duplicate_keys(void **state)
{
	(void)state;
	check_bad("{\"id\":\"a\",\"id\":\"b\",\"type\":\"EXEC\",\"args\":"
	    "{\"command\":\"x\"}}", "bad_json", NULL);
	check_bad(EXEC("\"command\":\"x\",\"command\":\"y\""), "bad_json",
	    NULL);
}

static void
test_item_parse_invalid_utf8(void **state)
{
	(void)state;
	check_bad(EXEC("\"command\":\"\xff\""), "bad_json", NULL);
}

static void
test_item_free_null(void **state)
{
	struct item_error	err = { ERR_NONE, NULL, NULL, NULL };

	(void)state;
	item_free(NULL);
	item_error_release(&err);
	item_error_release(NULL);
}

/* Sanitizes in and compares with want. */
static void
check_utf8(const char *in, size_t len, const char *want)
{
	char	*out;
	size_t	 n;

	out = item_utf8_sanitize(in, len, &n);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(out, want, n + 1);
	free(out);
}

static void
test_item_utf8_valid_kept(void **state)
{
	char		*out;
	const char	*s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf"
			    "\xbf\xed\x9f\xbf";

	(void)state;
	check_utf8(s, strlen(s), s);
	check_utf8("", 0, "");
	check_utf8(NULL, 0, "");
	out = item_utf8_sanitize("ab\x80", 3, NULL);	/* outlen optional */
	assert_string_equal(out, "ab" FFFD);
	free(out);
}

static void
test_item_utf8_lone_continuation(void **state)
{
	(void)state;
	check_utf8("a\x80z", 3, "a" FFFD "z");
}

static void
test_item_utf8_overlong(void **state)
{
	(void)state;
	check_utf8("\xc0\xaf", 2, FFFD FFFD);
	check_utf8("\xe0\x80\xaf", 3, FFFD FFFD FFFD);
	check_utf8("\xf0\x80\x80\xaf", 4, FFFD FFFD FFFD FFFD);
}

static void
test_item_utf8_surrogate(void **state)
{
	(void)state;
	check_utf8("\xed\xa0\x80", 3, FFFD FFFD FFFD);
}

static void
test_item_utf8_above_max(void **state)
{
	(void)state;
	check_utf8("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD);
	check_utf8("\xf5\x80", 2, FFFD FFFD);
}

static void
test_item_utf8_truncated_at_end(void **state)
{
	(void)state;
	check_utf8("x\xe2\x82", 3, "x" FFFD);
	check_utf8("\xf0\x9f\x98", 3, FFFD);
	check_utf8("\xe2\x82x", 3, FFFD "x");	/* maximal subpart */
}

static void
test_item_utf8_nul_byte(void **state)
{
	(void)state;
	check_utf8("a\0b", 3, "a" FFFD "b");
}

/* Loads JSON text produced by the module, failing the test if invalid. */
static json_t *
load(const char *s, size_t len)
{
	json_t		*root;
	json_error_t	 jerr;

	assert_int_equal(strlen(s), len);
	root = json_loads(s, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		fail_msg("bad JSON %s: %s", s, jerr.text);
	return (root);
}

static void
test_item_result_round_trip(void **state)
{
	struct item_result	 r;
	json_t			*root, *ru;
	char			*s;
	size_t			 len;

	(void)state;
	memset(&r, 0, sizeof r);
	r.id = "job-1";
	r.exit_code = 3;
	r.out = "hi\n\xff";
	r.out_len = 4;
	r.err = "e\0x";
	r.err_len = 3;
	r.truncated = 1;
	r.duration_ms = 12;
	r.log_path = ".tmp/exec/job-1.log";
	r.user_ms = 1;
	r.sys_ms = 2;
	r.max_rss_kb = 1234;
	s = item_result_to_json(&r, &len);
	assert_non_null(strstr(s, "{\"type\":\"EXEC_RESULT\",\"id\":\"job-1\","
	    "\"exit_code\":3,\"signal\":null,"));
	root = load(s, len);
	assert_string_equal(json_string_value(json_object_get(root, "stdout")),
	    "hi\n" FFFD);
	assert_string_equal(json_string_value(json_object_get(root, "stderr")),
	    "e" FFFD "x");
	assert_true(json_is_true(json_object_get(root, "truncated")));
	assert_true(json_is_false(json_object_get(root, "timed_out")));
	assert_int_equal(json_integer_value(json_object_get(root,
	    "duration_ms")), 12);
	assert_string_equal(json_string_value(json_object_get(root,
	    "log_path")), ".tmp/exec/job-1.log");
	ru = json_object_get(root, "rusage");
	assert_int_equal(json_integer_value(json_object_get(ru, "user_ms")), 1);
	assert_int_equal(json_integer_value(json_object_get(ru, "sys_ms")), 2);
	assert_int_equal(json_integer_value(json_object_get(ru,
	    "max_rss_kb")), 1234);
	json_decref(root);
	free(s);
}

static void
test_item_result_nulls(void **state)
{
	struct item_result	 r;
	json_t			*root;
	char			*s;

	(void)state;
	memset(&r, 0, sizeof r);
	r.id = "a";
	s = item_result_to_json(&r, NULL);
	root = load(s, strlen(s));
	assert_true(json_is_null(json_object_get(root, "log_path")));
	assert_true(json_is_null(json_object_get(root, "signal")));
	assert_string_equal(json_string_value(json_object_get(root, "stdout")),
	    "");
	assert_string_equal(json_string_value(json_object_get(root, "stderr")),
	    "");
	json_decref(root);
	free(s);
}

/*
 * A foreground item's token: the last member, so the answer without it
 * (the one kept for the id) has every other byte the same.
 */
static void
test_item_result_token_last(void **state)
{
	struct item_result	 r;
	json_t			*conf;
	char			*kept, *sent;
	size_t			 kept_len, len;

	(void)state;
	memset(&r, 0, sizeof r);
	r.id = "job-1";
	r.exit_code = 0;
	r.out = "hi\n";
	r.out_len = 3;
	r.duration_ms = 5;
	r.log_path = "/l/job-1.log";
	r.user_ms = 1;
	r.sys_ms = 2;
	r.max_rss_kb = 3;
	r.request = "req-1";
	r.approved_by = "alice";
	conf = json_pack("{s:b}", "confined", 0);
	r.confinement = conf;
	kept = item_result_to_json(&r, &kept_len);
	assert_string_equal(kept, "{\"type\":\"EXEC_RESULT\",\"id\":\"job-1\","
	    "\"exit_code\":0,\"signal\":null,\"stdout\":\"hi\\n\","
	    "\"stderr\":\"\",\"truncated\":false,\"timed_out\":false,"
	    "\"duration_ms\":5,\"log_path\":\"/l/job-1.log\",\"rusage\":"
	    "{\"user_ms\":1,\"sys_ms\":2,\"max_rss_kb\":3},\"confinement\":"
	    "{\"confined\":false},\"approval\":{\"request\":\"req-1\","
	    "\"by\":\"alice\"}}");
	r.token = "0123456789abcdef0123456789abcdef";
	sent = item_result_to_json(&r, &len);
	assert_int_equal(len, strlen(sent));
	assert_int_equal(len, kept_len + 51);
	assert_memory_equal(sent, kept, kept_len - 1);
	assert_string_equal(sent + kept_len - 1, ",\"session_token\":"
	    "\"0123456789abcdef0123456789abcdef\"}");
	json_decref(conf);
	free(sent);
	free(kept);
}

/* Encodes a result killed by sig and returns its "signal" (allocated). */
static char *
signal_name(int sig)
{
	struct item_result	 r;
	json_t			*root;
	char			*s, *name;
	size_t			 len;

	memset(&r, 0, sizeof r);
	r.id = "a";
	r.signal = sig;
	r.exit_code = 128 + sig;
	s = item_result_to_json(&r, &len);
	root = load(s, len);
	name = strdup(json_string_value(json_object_get(root, "signal")));
	json_decref(root);
	free(s);
	return (name);
}

static void
test_item_result_signal_names(void **state)
{
	char	*s;

	(void)state;
	s = signal_name(9);
	assert_string_equal(s, "SIGKILL");
	free(s);
	s = signal_name(15);
	assert_string_equal(s, "SIGTERM");
	free(s);
	s = signal_name(200);
	assert_string_equal(s, "SIG200");
	free(s);
}

static void
test_item_error_round_trip(void **state)
{
	json_t	*root, *e;
	char	*s;
	size_t	 len;

	(void)state;
	s = item_error_to_json("job-1", ERR_BAD_TIMEOUT, "got \"\xc0\"", &len);
	assert_string_equal(s, "{\"type\":\"ERROR\",\"id\":\"job-1\",\"error\":"
	    "{\"code\":\"bad_timeout\",\"message\":\"got \\\"" FFFD "\\\"\"}}");
	root = load(s, len);
	e = json_object_get(root, "error");
	assert_string_equal(json_string_value(json_object_get(e, "code")),
	    "bad_timeout");
	json_decref(root);
	free(s);
}

static void
test_item_error_null_id(void **state)
{
	char	*s;

	(void)state;
	s = item_error_to_json(NULL, ERR_BAD_JSON, "x", NULL);
	assert_string_equal(s, "{\"type\":\"ERROR\",\"id\":null,\"error\":"
	    "{\"code\":\"bad_json\",\"message\":\"x\"}}");
	free(s);
}

/* EXEC_CALLBACK: every field, in the order PROTOCOL.md shows them. */
static void
test_item_callback_json(void **state)
{
	struct item_callback	 c;
	const char		*tail[] = { "line 4", "caf\xe9" };
	json_t			*o;
	char			*s;

	(void)state;
	memset(&c, 0, sizeof c);
	c.id = "s1";
	c.session_id = "s1";
	c.status = "killed";
	c.exit_code = 143;
	c.signal = 15;
	c.killed_by = "user";
	c.log_path = "/l/s1.log";
	c.tail = tail;
	c.ntail = 2;
	c.duration_ms = 45;
	c.output_bytes = 18;
	c.ended_ms = 1000;
	c.user_ms = 1;
	c.sys_ms = 2;
	c.max_rss_kb = 3;
	c.worker = "w1";
	c.confinement = json_pack("{s:b}", "confined", 0);
	o = item_callback_to_json(&c);
	s = json_dumps(o, JSON_COMPACT);
	assert_string_equal(s, "{\"type\":\"EXEC_CALLBACK\",\"priority\":"
	    "\"high\",\"id\":\"s1\",\"session_id\":\"s1\",\"status\":"
	    "\"killed\",\"exit_code\":143,\"signal\":\"SIGTERM\","
	    "\"killed_by\":\"user\",\"log_path\":\"/l/s1.log\",\"tail\":"
	    "[\"line 4\",\"caf\xef\xbf\xbd\"],\"duration_ms\":45,"
	    "\"output_bytes\":18,\"ended_ms\":1000,\"rusage\":{\"user_ms\":1,"
	    "\"sys_ms\":2,\"max_rss_kb\":3},\"worker\":\"w1\","
	    "\"confinement\":{\"confined\":false}}");
	free(s);
	json_decref(o);
	c.killed_by = NULL;
	c.signal = 0;
	c.log_error = "No space left on device";
	o = item_callback_to_json(&c);
	assert_true(json_is_null(json_object_get(o, "killed_by")));
	assert_true(json_is_null(json_object_get(o, "signal")));
	assert_true(json_is_false(json_object_get(o, "log_complete")));
	assert_string_equal(json_string_value(json_object_get(o, "log_error")),
	    "No space left on device");
	json_decref(o);
	json_decref(c.confinement);
}

/* EXEC_WAITING: PROTOCOL.md's example; the tail's last line unended. */
static void
test_item_waiting_json(void **state)
{
	struct item_waiting	 w;
	const char		*tail[] = { "Setting up...", "name? " };
	char			*s;
	size_t			 len;

	(void)state;
	memset(&w, 0, sizeof w);
	w.id = "s1";
	w.session_id = "s1";
	w.tail = tail;
	w.ntail = 2;
	w.waiting_since_ms = 1767225600200LL;
	w.pid = 4242;
	s = item_waiting_to_json(&w, &len);
	assert_string_equal(s, "{\"type\":\"EXEC_WAITING\",\"priority\":"
	    "\"high\",\"id\":\"s1\",\"session_id\":\"s1\",\"tail\":"
	    "[\"Setting up...\",\"name? \"],\"waiting_since_ms\":"
	    "1767225600200,\"pid\":4242}");
	assert_int_equal(len, strlen(s));
	free(s);
}

/* EXEC_STARTED with the token, and the copy kept without it. */
static void
test_item_started_json(void **state)
{
	struct item_started	 st;
	char			*s;

	(void)state;
	memset(&st, 0, sizeof st);
	st.id = "s1";
	st.session_id = "s1";
	st.pid = 42;
	st.log_path = "/l/s1.log";
	st.pty = 1;
	st.worker = "w1";
	s = item_started_to_json(&st, NULL);
	assert_string_equal(s, "{\"type\":\"EXEC_STARTED\",\"id\":\"s1\","
	    "\"session_id\":\"s1\",\"pid\":42,\"log_path\":\"/l/s1.log\","
	    "\"pty\":true,\"worker\":\"w1\"}");
	free(s);
	st.token = "0123abcd";
	s = item_started_to_json(&st, NULL);
	assert_non_null(strstr(s, ",\"session_token\":\"0123abcd\"}"));
	free(s);
}

/* The end of a foreground item's live stream. */
static void
test_item_stream_end_json(void **state)
{
	char	*s;

	(void)state;
	s = item_stream_end_to_json("j1", 3, 0, 10, 2, "/l/j1.log", NULL);
	assert_string_equal(s, "{\"id\":\"j1\",\"exit_code\":3,"
	    "\"timed_out\":false,\"stdout_bytes\":10,\"stderr_bytes\":2,"
	    "\"log_path\":\"/l/j1.log\"}");
	free(s);
}

/* PROCESS_RESULT: the envelope, then the action's fields; output as
   text (sanitized) or base64. */
static void
test_item_process_result_json(void **state)
{
	json_t	*f;
	char	*s;

	(void)state;
	f = json_object();
	item_json_put_output(f, "a\xff", 2, 0);
	s = item_process_result_to_json("p1", "poll", "s1", f, NULL);
	assert_string_equal(s, "{\"type\":\"PROCESS_RESULT\",\"id\":\"p1\","
	    "\"action\":\"poll\",\"session_id\":\"s1\",\"output\":"
	    "\"a\xef\xbf\xbd\"}");
	free(s);
	f = json_object();
	item_json_put_output(f, "a\xff", 2, 1);
	item_json_put_output(f, NULL, 0, 0);
	s = item_process_result_to_json("p2", "list", NULL, f, NULL);
	assert_string_equal(s, "{\"type\":\"PROCESS_RESULT\",\"id\":\"p2\","
	    "\"action\":\"list\",\"session_id\":null,\"output_b64\":\"Yf8=\","
	    "\"output\":\"\"}");
	free(s);
}

/* A PROCESS_RESULT carrying fields (stolen), as it goes on the wire. */
static void
assert_process(const char *id, const char *action, const char *sid,
    json_t *fields, const char *want)
{
	char	*s;

	s = item_process_result_to_json(id, action, sid, fields, NULL);
	assert_string_equal(s, want);
	free(s);
}

#define HELD_REQ	"6f0c1d2e3a4b5c6d7e8f90a1b2c3d4e5"

/* The held item of PROTOCOL.md's example. */
static void
held_example(struct item_held *h)
{
	memset(h, 0, sizeof *h);
	h->id = "job-7";
	h->state = "held";
	h->request = HELD_REQ;
	h->command = "touch made.txt";
	h->risk = "write";
	h->rule = "write:touch";
	h->reason = "touch creates or updates files";
	h->created_ms = 1795400000000LL;
	h->expires_ms = 1795400600000LL;
}

/* poll: running (PROTOCOL.md's example), then ended, in base64. */
static void
test_item_poll_json(void **state)
{
	struct item_session_status	 st;
	struct item_read		 rd;

	(void)state;
	memset(&st, 0, sizeof st);
	st.status = "running";
	st.waiting_input = 1;	/* the REPL waits at its prompt */
	memset(&rd, 0, sizeof rd);
	rd.buf = ">>> 6*7\r\n42\r\n>>> ";
	rd.len = strlen(rd.buf);
	assert_process("p2", "poll", "s1", item_poll_to_json(&st, &rd),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p2\",\"action\":\"poll\","
	    "\"session_id\":\"s1\",\"status\":\"running\",\"exit_code\":null,"
	    "\"output\":\">>> 6*7\\r\\n42\\r\\n>>> \",\"offset\":0,"
	    "\"next_offset\":17,\"eof\":false,\"waiting_input\":true}");
	st.status = "killed";
	st.waiting_input = 0;
	st.ended = 1;
	st.has_exit_code = 1;
	st.exit_code = 143;
	st.signal = 15;
	st.killed_by = "user";
	rd.buf = "hi";
	rd.len = 2;
	rd.base64 = 1;
	rd.offset = 5;
	rd.eof = 1;
	assert_process("p3", "poll", "s1", item_poll_to_json(&st, &rd),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p3\",\"action\":\"poll\","
	    "\"session_id\":\"s1\",\"status\":\"killed\",\"exit_code\":143,"
	    "\"signal\":\"SIGTERM\",\"killed_by\":\"user\",\"output_b64\":"
	    "\"aGk=\",\"offset\":5,\"next_offset\":7,\"eof\":true,"
	    "\"waiting_input\":false}");
}

/* log: the range, its size, then the status members; text sanitized. */
static void
test_item_log_json(void **state)
{
	struct item_session_status	 st;
	struct item_read		 rd;

	(void)state;
	memset(&st, 0, sizeof st);
	st.status = "completed";
	st.ended = 1;
	st.has_exit_code = 1;
	memset(&rd, 0, sizeof rd);
	rd.buf = "b\n";
	rd.len = 2;
	rd.offset = 3;
	rd.size = 5;
	rd.eof = 1;		/* not a log member */
	assert_process("p1", "log", "s1", item_log_to_json(&st, &rd),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p1\",\"action\":\"log\","
	    "\"session_id\":\"s1\",\"output\":\"b\\n\",\"offset\":3,"
	    "\"next_offset\":5,\"size\":5,\"status\":\"completed\","
	    "\"exit_code\":0,\"signal\":null,\"killed_by\":null}");
	memset(&st, 0, sizeof st);
	st.status = "running";
	rd.buf = "a\xff";
	rd.offset = 0;
	rd.size = 9;
	assert_process("p1", "log", "s1", item_log_to_json(&st, &rd),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p1\",\"action\":\"log\","
	    "\"session_id\":\"s1\",\"output\":\"a\xef\xbf\xbd\",\"offset\":0,"
	    "\"next_offset\":2,\"size\":9,\"status\":\"running\","
	    "\"exit_code\":null}");
}

/*
 * wait: running (PROTOCOL.md's example), a callback less its envelope
 * members, and the end of a session only its files remember.
 */
static void
test_item_wait_json(void **state)
{
	struct item_session_status	 st;
	struct item_callback		 c;
	json_t				*final;

	(void)state;
	assert_process("p4", "wait", "s1", item_wait_to_json(NULL, 1),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p4\",\"action\":\"wait\","
	    "\"session_id\":\"s1\",\"status\":\"running\","
	    "\"waited_out\":true}");
	memset(&c, 0, sizeof c);
	c.id = "s1";
	c.session_id = "s1";
	c.status = "failed";
	c.exit_code = 4;
	c.log_path = "/l/s1.log";
	c.duration_ms = 45;
	c.output_bytes = 18;
	c.ended_ms = 1000;
	c.worker = "w1";
	final = item_callback_to_json(&c);
	assert_process("p5", "wait", "s1", item_wait_to_json(final, 0),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p5\",\"action\":\"wait\","
	    "\"session_id\":\"s1\",\"status\":\"failed\",\"exit_code\":4,"
	    "\"signal\":null,\"killed_by\":null,\"log_path\":\"/l/s1.log\","
	    "\"tail\":[],\"duration_ms\":45,\"output_bytes\":18,"
	    "\"ended_ms\":1000,\"rusage\":{\"user_ms\":0,\"sys_ms\":0,"
	    "\"max_rss_kb\":0},\"worker\":\"w1\"}");
	/* The final state is kept: wait copies it. */
	assert_string_equal(json_string_value(json_object_get(final, "type")),
	    "EXEC_CALLBACK");
	json_decref(final);
	memset(&st, 0, sizeof st);
	st.status = "lost";
	st.ended = 1;
	final = item_session_end_to_json(&st, "/l/s1.log");
	assert_process("p6", "wait", "s1", item_wait_to_json(final, 0),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p6\",\"action\":\"wait\","
	    "\"session_id\":\"s1\",\"status\":\"lost\",\"exit_code\":null,"
	    "\"signal\":null,\"killed_by\":null,\"log_path\":\"/l/s1.log\"}");
	json_decref(final);
	st.status = "killed";
	st.has_exit_code = 1;
	st.exit_code = 137;
	st.signal = 9;
	st.killed_by = "timeout";
	final = item_session_end_to_json(&st, "/l/s1.log");
	assert_process("p7", "wait", "s1", item_wait_to_json(final, 1),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p7\",\"action\":\"wait\","
	    "\"session_id\":\"s1\",\"status\":\"killed\",\"exit_code\":137,"
	    "\"signal\":\"SIGKILL\",\"killed_by\":\"timeout\",\"log_path\":"
	    "\"/l/s1.log\"}");
	json_decref(final);
}

/* list: an ended session, a running one, a held item. */
static void
test_item_list_json(void **state)
{
	struct item_session	 e;
	struct item_held	 h;
	json_t			*a;

	(void)state;
	a = json_array();
	memset(&e, 0, sizeof e);
	e.session_id = "s1";
	e.command = "false";
	e.log_path = "/l/s1.log";
	e.pid = 42;
	e.started_ms = 900;
	e.ended_ms = 2000;
	e.output_bytes = 3;
	e.status.status = "failed";
	e.status.ended = 1;
	e.status.has_exit_code = 1;
	e.status.exit_code = 1;
	json_array_append_new(a, item_session_to_json(&e));
	memset(&e, 0, sizeof e);
	e.session_id = "s2";
	e.command = "sleep 9";
	e.log_path = "/l/s2.log";
	e.pid = 43;
	e.pty = 1;
	e.started_ms = 1000;
	e.ended_ms = 5;		/* not shown: it runs */
	e.keep = 1;
	e.idle_ms = 1500;
	e.status.status = "running";
	e.status.waiting_input = 1;
	json_array_append_new(a, item_session_to_json(&e));
	held_example(&h);
	json_array_append_new(a, item_held_to_json(&h));
	assert_process("p1", "list", NULL, item_list_to_json(a),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p1\",\"action\":\"list\","
	    "\"session_id\":null,\"sessions\":["
	    "{\"session_id\":\"s1\",\"command\":\"false\",\"pid\":42,"
	    "\"pty\":false,\"started_ms\":900,\"output_bytes\":3,"
	    "\"log_path\":\"/l/s1.log\",\"keep\":false,"
	    "\"status\":\"failed\",\"exit_code\":1,"
	    "\"signal\":null,\"killed_by\":null,\"ended_ms\":2000,"
	    "\"waiting_input\":false},"
	    "{\"session_id\":\"s2\",\"command\":\"sleep 9\",\"pid\":43,"
	    "\"pty\":true,\"started_ms\":1000,\"output_bytes\":0,"
	    "\"log_path\":\"/l/s2.log\",\"keep\":true,"
	    "\"status\":\"running\",\"exit_code\":null,\"idle_ms\":1500,"
	    "\"waiting_input\":true},"
	    "{\"session_id\":\"job-7\",\"status\":\"held\",\"request\":\""
	    HELD_REQ "\",\"command\":\"touch made.txt\",\"risk\":\"write\","
	    "\"rule\":\"write:touch\",\"reason\":\"touch creates or updates "
	    "files\",\"created_ms\":1795400000000,\"expires_ms\":1795400600000,"
	    "\"decided_by\":null,\"exit_code\":null,\"ran\":false}]}");
	assert_process("p2", "list", NULL, item_list_to_json(json_array()),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p2\",\"action\":\"list\","
	    "\"session_id\":null,\"sessions\":[]}");
}

/* write, send-keys and kill. */
static void
test_item_write_kill_json(void **state)
{
	(void)state;
	assert_process("p1", "write", "s1", item_write_to_json(0),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p1\",\"action\":\"write\","
	    "\"session_id\":\"s1\",\"written\":0}");
	assert_process("p2", "send-keys", "s1", item_write_to_json(4),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p2\",\"action\":"
	    "\"send-keys\",\"session_id\":\"s1\",\"written\":4}");
	assert_process("p3", "kill", "s1", item_kill_to_json(),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p3\",\"action\":\"kill\","
	    "\"session_id\":\"s1\",\"status\":\"killing\"}");
}

/*
 * poll, log and wait on a held item (poll: PROTOCOL.md's example), and
 * on one whose request was rejected.
 */
static void
test_item_held_answer_json(void **state)
{
	struct item_held	 h;

	(void)state;
	held_example(&h);
	assert_process("p5", "poll", "job-7",
	    item_held_answer_to_json(&h, ITEM_ACTION_POLL, 0),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p5\",\"action\":\"poll\","
	    "\"session_id\":\"job-7\",\"status\":\"held\",\"request\":\""
	    HELD_REQ "\",\"command\":\"touch made.txt\",\"risk\":\"write\","
	    "\"rule\":\"write:touch\",\"reason\":\"touch creates or updates "
	    "files\",\"created_ms\":1795400000000,\"expires_ms\":1795400600000,"
	    "\"decided_by\":null,\"exit_code\":null,\"ran\":false,"
	    "\"output\":\"\",\"offset\":0,\"next_offset\":0,\"eof\":false}");
	assert_process("p6", "wait", "job-7",
	    item_held_answer_to_json(&h, ITEM_ACTION_WAIT, 0),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p6\",\"action\":\"wait\","
	    "\"session_id\":\"job-7\",\"status\":\"held\",\"request\":\""
	    HELD_REQ "\",\"command\":\"touch made.txt\",\"risk\":\"write\","
	    "\"rule\":\"write:touch\",\"reason\":\"touch creates or updates "
	    "files\",\"created_ms\":1795400000000,\"expires_ms\":1795400600000,"
	    "\"decided_by\":null,\"exit_code\":null,\"ran\":false,"
	    "\"waited_out\":false}");
	h.state = "rejected";
	h.decided_by = "alice";
	assert_process("p7", "log", "job-7",
	    item_held_answer_to_json(&h, ITEM_ACTION_LOG, 1),
	    "{\"type\":\"PROCESS_RESULT\",\"id\":\"p7\",\"action\":\"log\","
	    "\"session_id\":\"job-7\",\"status\":\"rejected\",\"request\":\""
	    HELD_REQ "\",\"command\":\"touch made.txt\",\"risk\":\"write\","
	    "\"rule\":\"write:touch\",\"reason\":\"touch creates or updates "
	    "files\",\"created_ms\":1795400000000,\"expires_ms\":1795400600000,"
	    "\"decided_by\":\"alice\",\"exit_code\":null,\"ran\":false,"
	    "\"output_b64\":\"\",\"size\":0,\"offset\":0,\"next_offset\":0,"
	    "\"eof\":true}");
}

/* The lost callback's template: placeholders the script fills in. */
static void
test_item_lost_template(void **state)
{
	json_t	*o;
	char	*s;

	(void)state;
	s = item_lost_template(NULL);
	assert_non_null(strstr(s, "\"id\":" ITEM_LOST_ID ",\"session_id\":"
	    ITEM_LOST_ID));
	assert_non_null(strstr(s, "\"log_path\":" ITEM_LOST_LOG));
	assert_non_null(strstr(s, "\"worker\":" ITEM_LOST_WORKER));
	o = json_loads(s, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(o, "status")),
	    "lost");
	assert_true(json_is_null(json_object_get(o, "exit_code")));
	assert_int_equal(json_array_size(json_object_get(o, "tail")), 0);
	json_decref(o);
	free(s);
}

/* The ERROR answer for a parse failure encodes and routes. */
static void
test_item_error_from_parse(void **state)
{
	struct item_error	 err;
	json_t			*root;
	char			*s;
	const char		*in = EXEC("\"command\":\"x\",\"timeout_s\":"
				    "\"\xc3\xa9t\xc3\xa9\"");

	(void)state;
	assert_null(item_parse(in, strlen(in), MAX_LEN, &err));
	s = item_error_to_json(err.id, err.code, err.message, NULL);
	root = load(s, strlen(s));
	assert_string_equal(json_string_value(json_object_get(root, "id")),
	    "job-1");
	json_decref(root);
	free(s);
	item_error_release(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_item_parse_full),
		cmocka_unit_test(test_item_parse_defaults),
		cmocka_unit_test(test_item_parse_nulls_and_empty_mean_absent),
		cmocka_unit_test(test_item_parse_unknown_fields_ignored),
		cmocka_unit_test(test_item_parse_timeout_rounds_up),
		cmocka_unit_test(test_item_parse_bad_json),
		cmocka_unit_test(test_item_parse_truncated_json),
		cmocka_unit_test(test_item_parse_top_level_array),
		cmocka_unit_test(test_item_parse_top_level_string),
		cmocka_unit_test(test_item_parse_empty_input),
		cmocka_unit_test(test_item_parse_too_large),
		cmocka_unit_test(test_item_parse_raw_nul_byte),
		cmocka_unit_test(test_item_parse_nul_in_command),
		cmocka_unit_test(test_item_parse_nul_in_env_value),
		cmocka_unit_test(test_item_parse_nul_in_key),
		cmocka_unit_test(test_item_parse_nul_in_id),
		cmocka_unit_test(test_item_parse_missing_id),
		cmocka_unit_test(test_item_parse_numeric_id),
		cmocka_unit_test(test_item_parse_id_with_slash),
		cmocka_unit_test(test_item_parse_id_leading_dot),
		cmocka_unit_test(test_item_parse_id_too_long),
		cmocka_unit_test(test_item_parse_id_valid),
		cmocka_unit_test(test_item_parse_missing_type),
		cmocka_unit_test(test_item_parse_unknown_type),
		cmocka_unit_test(test_item_parse_type_not_string),
		cmocka_unit_test(test_item_parse_missing_args),
		cmocka_unit_test(test_item_parse_args_not_object),
		cmocka_unit_test(test_item_parse_missing_command),
		cmocka_unit_test(test_item_parse_empty_command),
		cmocka_unit_test(test_item_parse_whitespace_command),
		cmocka_unit_test(test_item_parse_command_not_string),
		cmocka_unit_test(test_item_parse_cwd_not_string),
		cmocka_unit_test(test_item_parse_timeout_zero),
		cmocka_unit_test(test_item_parse_timeout_negative),
		cmocka_unit_test(test_item_parse_timeout_string),
		cmocka_unit_test(test_item_parse_timeout_too_large),
		cmocka_unit_test(test_item_parse_timeout_overflow),
		cmocka_unit_test(test_item_parse_env_not_object),
		cmocka_unit_test(test_item_parse_env_value_number),
		cmocka_unit_test(test_item_parse_env_bad_name),
		cmocka_unit_test(test_item_parse_env_name_with_equals),
		cmocka_unit_test(test_item_parse_env_too_many),
		cmocka_unit_test(test_item_parse_command_too_long),
		cmocka_unit_test(test_item_refuse_large_peeks_id),
		cmocka_unit_test(test_item_parse_reply_to_with_space),
		cmocka_unit_test(test_item_parse_error_keeps_reply_to),
		cmocka_unit_test(test_item_parse_background_not_bool),
		cmocka_unit_test(test_item_parse_rows_zero),
		cmocka_unit_test(test_item_parse_retries_out_of_range),
		cmocka_unit_test(test_item_parse_duplicate_keys),
		cmocka_unit_test(test_item_parse_invalid_utf8),
		cmocka_unit_test(test_item_free_null),
		cmocka_unit_test(test_item_utf8_valid_kept),
		cmocka_unit_test(test_item_utf8_lone_continuation),
		cmocka_unit_test(test_item_utf8_overlong),
		cmocka_unit_test(test_item_utf8_surrogate),
		cmocka_unit_test(test_item_utf8_above_max),
		cmocka_unit_test(test_item_utf8_truncated_at_end),
		cmocka_unit_test(test_item_utf8_nul_byte),
		cmocka_unit_test(test_item_result_round_trip),
		cmocka_unit_test(test_item_result_nulls),
		cmocka_unit_test(test_item_result_token_last),
		cmocka_unit_test(test_item_result_signal_names),
		cmocka_unit_test(test_item_error_round_trip),
		cmocka_unit_test(test_item_error_null_id),
		cmocka_unit_test(test_item_callback_json),
		cmocka_unit_test(test_item_waiting_json),
		cmocka_unit_test(test_item_started_json),
		cmocka_unit_test(test_item_lost_template),
		cmocka_unit_test(test_item_stream_end_json),
		cmocka_unit_test(test_item_process_result_json),
		cmocka_unit_test(test_item_poll_json),
		cmocka_unit_test(test_item_log_json),
		cmocka_unit_test(test_item_wait_json),
		cmocka_unit_test(test_item_list_json),
		cmocka_unit_test(test_item_write_kill_json),
		cmocka_unit_test(test_item_held_answer_json),
		cmocka_unit_test(test_item_error_from_parse),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
