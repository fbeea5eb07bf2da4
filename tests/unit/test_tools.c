/*
 * Unit tests for cli/tools.c: the tool definitions a model is given, as
 * built in from cli/tools.json, their fields against what the worker's
 * parser takes, the process actions against the worker's table, and
 * the three shapes execq tools prints.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli/cli.h"
#include "queue/item.h"

#define MAX_LEN		(1024 * 1024)
#define DIALECT		"https://json-schema.org/draft/2020-12/schema"
#define ACTIONS_SRC	"queue/item_process.c"

/* The built-in source, parsed. */
static json_t *
source(void)
{
	json_t	*src;
	char	*cause;

	src = execq_tools_source(&cause);
	if (src == NULL)
		fail_msg("%s", cause);
	assert_null(cause);
	return (src);
}

/* The source's tool named name (borrowed from src). */
static json_t *
tool(json_t *src, const char *name)
{
	json_t	*t;
	size_t	 i;

	json_array_foreach(json_object_get(src, "tools"), i, t)
		if (strcmp(json_string_value(json_object_get(t, "name")),
		    name) == 0)
			return (t);
	fail_msg("no tool %s", name);
	return (NULL);
}

/* 1 if the array a holds the string s. */
static int
has_string(const json_t *a, const char *s)
{
	const json_t	*v;
	size_t		 i;

	json_array_foreach(a, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return (1);
	return (0);
}

/* The tool's description as the model reads it (allocated). */
static char *
description(const json_t *t)
{
	const json_t	*d = json_object_get(t, "description"), *line;
	size_t		 i, len = 1;
	char		*s;

	if (json_is_string(d))
		return (strdup(json_string_value(d)));
	assert_true(json_is_array(d));
	json_array_foreach(d, i, line) {
		assert_true(json_is_string(line));
		len += json_string_length(line) + 1;
	}
	s = calloc(1, len);
	assert_non_null(s);
	json_array_foreach(d, i, line) {
		if (i > 0)
			strcat(s, "\n");
		strcat(s, json_string_value(line));
	}
	return (s);
}

/*
 * Every tool: a name, an item, a description, an inputSchema that is an
 * object schema closed to other properties, whose required fields are
 * properties, and each property with a description for the model and a
 * $comment saying which item field it becomes.
 */
static void
test_tools_source_whole(void **state)
{
	json_t		*src, *t, *schema, *props, *p, *v;
	const char	*k;
	char		*d;
	size_t		 i, j;

	(void)state;
	src = source();
	assert_int_equal(json_array_size(json_object_get(src, "tools")), 2);
	json_array_foreach(json_object_get(src, "tools"), i, t) {
		assert_true(json_is_string(json_object_get(t, "name")));
		assert_true(json_is_string(json_object_get(t, "item")));
		d = description(t);
		assert_true(strlen(d) > 200);
		free(d);
		schema = json_object_get(t, "inputSchema");
		assert_true(json_is_object(schema));
		assert_string_equal(json_string_value(json_object_get(schema,
		    "type")), "object");
		assert_true(json_is_false(json_object_get(schema,
		    "additionalProperties")));
		assert_null(json_object_get(schema, "$schema"));
		props = json_object_get(schema, "properties");
		assert_true(json_is_object(props));
		assert_true(json_array_size(json_object_get(schema,
		    "required")) >= 1);
		json_array_foreach(json_object_get(schema, "required"), j, v)
			assert_non_null(json_object_get(props,
			    json_string_value(v)));
		json_object_foreach(props, k, p) {
			if (!json_is_string(json_object_get(p,
			    "description")))
				fail_msg("%s.%s has no description",
				    json_string_value(json_object_get(t,
				    "name")), k);
			v = json_object_get(p, "$comment");
			if (!json_is_string(v) || strstr(json_string_value(v),
			    "args.") == NULL)
				fail_msg("%s.%s: its $comment must say which "
				    "args field it becomes",
				    json_string_value(json_object_get(t,
				    "name")), k);
		}
	}
	json_decref(src);
}

/* The facts a model needs are in the descriptions. */
static void
test_tools_descriptions_say(void **state)
{
	static const struct {
		const char	*tool, *text;
	} says[] = {
		{ "exec", "background:true" },
		{ "exec", "session_id" },
		{ "exec", "process" },
		{ "exec", "held" },
		{ "exec", "Do not send the same command again" },
		{ "exec", "1 MiB" },
		{ "exec", "log_path" },
		{ "exec", "truncated" },
		{ "exec", "exit_code" },
		{ "exec", "whole process tree" },
		{ "exec", "workspace is the only place" },
		{ "exec", "network" },
		{ "process", "next_offset" },
		{ "process", "waited_out" },
		{ "process", "held" },
		{ "process", "\\r" },
	};
	json_t	*src;
	char	*d;
	size_t	 i;

	(void)state;
	src = source();
	for (i = 0; i < sizeof says / sizeof says[0]; i++) {
		d = description(tool(src, says[i].tool));
		if (strstr(d, says[i].text) == NULL)
			fail_msg("%s's description does not say \"%s\"",
			    says[i].tool, says[i].text);
		free(d);
	}
	json_decref(src);
}

/*
 * The worker's PROCESS actions, from its table in queue/item_process.c
 * (rows '{ "name", ITEM_ACTION_X },'): a new array, or NULL when not run
 * from the checkout's top.
 */
static json_t *
worker_actions(void)
{
	FILE	*f;
	json_t	*a;
	char	 line[256], name[64], sym[64];

	if ((f = fopen(ACTIONS_SRC, "r")) == NULL)
		return (NULL);
	a = json_array();
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, " { \"%63[^\"]\", ITEM_ACTION_%63[A-Z_] }",
		    name, sym) == 2)
			json_array_append_new(a, json_string(name));
	fclose(f);
	return (a);
}

/* Parses a PROCESS item with args text: the item, or a failure. */
static struct item *
parse_process(const char *args)
{
	struct item		*it;
	struct item_error	 err;
	char			 buf[1024];

	snprintf(buf, sizeof buf, "{\"id\":\"p1\",\"type\":\"PROCESS\","
	    "\"args\":%s}", args);
	if ((it = item_parse(buf, strlen(buf), MAX_LEN, &err)) == NULL)
		fail_msg("%s: %s", buf, err.message);
	return (it);
}

/*
 * process's actions are the worker's, each with a line of the tool's
 * description ("- name ..."), plus the client's own (client_actions),
 * which the worker does not know: an action added to the worker's table
 * without a tool description fails here.
 */
static void
test_tools_process_actions_are_the_workers(void **state)
{
	json_t		*src, *t, *actions, *client, *worker, *v;
	struct item	*it;
	const char	*name;
	char		*d, args[256], want[80];
	size_t		 i;

	(void)state;
	if ((worker = worker_actions()) == NULL)
		skip();		/* not run from the checkout's top */
	assert_true(json_array_size(worker) >= 7);
	src = source();
	t = tool(src, "process");
	actions = json_object_get(json_object_get(json_object_get(
	    json_object_get(t, "inputSchema"), "properties"), "action"),
	    "enum");
	client = json_object_get(t, "client_actions");
	assert_true(json_is_array(actions));
	assert_true(json_is_array(client));
	d = description(t);
	json_array_foreach(actions, i, v) {
		name = json_string_value(v);
		snprintf(want, sizeof want, "\n- %s", name);
		if (strstr(d, want) == NULL)
			fail_msg("process's description has no line for "
			    "action %s", name);
		if (has_string(client, name)) {
			if (has_string(worker, name))
				fail_msg("%s is the worker's, not the "
				    "client's", name);
			continue;
		}
		if (!has_string(worker, name))
			fail_msg("process action %s is not one the worker "
			    "knows (" ACTIONS_SRC ")", name);
		snprintf(args, sizeof args, "{\"action\":\"%s\","
		    "\"session_id\":\"s1\",\"data\":\"x\","
		    "\"keys\":[\"Enter\"],\"command\":\"ls\"}", name);
		it = parse_process(args);
		assert_string_equal(it->action_name, name);
		item_free(it);
	}
	json_array_foreach(worker, i, v)
		if (!has_string(actions, json_string_value(v)))
			fail_msg("the worker's action %s has no place in the "
			    "process tool", json_string_value(v));
	free(d);
	json_decref(worker);
	json_decref(src);
}

/*
 * Each tool field, one row: the item it becomes, and what the worker's
 * parser makes of it. Every property has a row and every row a
 * property, so a field cannot be added or renamed on one side alone.
 */
static int
chk_command(const struct item *it)
{
	return (strcmp(it->command, "make test") == 0);
}

static int
chk_cwd(const struct item *it)
{
	return (strcmp(it->cwd, "sub") == 0);
}

static int
chk_env(const struct item *it)
{
	return (it->nenv == 1 && strcmp(it->env[0], "CI=1") == 0);
}

static int
chk_timeout(const struct item *it)
{
	return (it->timeout_ms == 2500);
}

static int
chk_background(const struct item *it)
{
	return (it->background == 1);
}

static int
chk_pty(const struct item *it)
{
	return (it->pty == 1);
}

static int
chk_keep(const struct item *it)
{
	return (it->keep == 1);
}

static int
chk_shell(const struct item *it)
{
	return (it->shell == 1 && it->background == 1);
}

static int
chk_command_exec(const struct item *it)
{
	return (it->action == ITEM_ACTION_EXEC &&
	    strcmp(it->command, "cd src && make") == 0);
}

static int
chk_rows(const struct item *it)
{
	return (it->rows == 40);
}

static int
chk_cols(const struct item *it)
{
	return (it->cols == 120);
}

static int
chk_idle(const struct item *it)
{
	return (it->idle_timeout_ms == 7000);
}

static int
chk_tail(const struct item *it)
{
	return (it->tail_lines == 9);
}

static int
chk_network(const struct item *it)
{
	return (it->domains != NULL &&
	    strcmp(it->domains[0], "pypi.org") == 0 && it->domains[1] == NULL);
}

static int
chk_tier(const struct item *it)
{
	return (strcmp(it->tier, "read_only") == 0);
}

static int
chk_action(const struct item *it)
{
	return (it->action == ITEM_ACTION_LIST);
}

static int
chk_session(const struct item *it)
{
	return (strcmp(it->session_id, "s9") == 0);
}

static int
chk_offset(const struct item *it)
{
	return (it->offset == 17);
}

static int
chk_max_bytes(const struct item *it)
{
	return (it->max_bytes == 100);
}

static int
chk_length(const struct item *it)
{
	return (it->length == 50);
}

static int
chk_lines(const struct item *it)
{
	return (it->lines == 20);
}

static int
chk_data(const struct item *it)
{
	return (it->data_len == 3 && memcmp(it->data, "hi\r", 3) == 0);
}

static int
chk_eof(const struct item *it)
{
	return (it->eof == 1);
}

static int
chk_keys(const struct item *it)
{
	return (strcmp(it->keys[0], "C-c") == 0 && it->keys[1] == NULL);
}

static int
chk_signal(const struct item *it)
{
	return (strcmp(it->signal_name, "INT") == 0);
}

static int
chk_wait_timeout(const struct item *it)
{
	return (it->timeout_ms == 2500);
}

#define E(m)	"{\"id\":\"t1\",\"type\":\"EXEC\",\"args\":{" m "}}"
#define P(m)	"{\"id\":\"t1\",\"type\":\"PROCESS\",\"args\":{" m "}}"
#define PS(m)	P("\"action\":\"poll\",\"session_id\":\"s1\"," m)
static const struct field_row {
	const char	*tool, *field;
	const char	*item;		/* the item that field becomes */
	int		(*check)(const struct item *);
} field_rows[] = {
	{ "exec", "command", E("\"command\":\"make test\""), chk_command },
	{ "exec", "cwd", E("\"command\":\"x\",\"cwd\":\"sub\""), chk_cwd },
	{ "exec", "env", E("\"command\":\"x\",\"env\":{\"CI\":\"1\"}"),
	    chk_env },
	{ "exec", "timeout_s", E("\"command\":\"x\",\"timeout_s\":2.5"),
	    chk_timeout },
	{ "exec", "background", E("\"command\":\"x\",\"background\":true"),
	    chk_background },
	{ "exec", "pty", E("\"command\":\"x\",\"pty\":true"), chk_pty },
	{ "exec", "shell", E("\"command\":\"x\",\"background\":true,"
	    "\"shell\":true"), chk_shell },
	{ "exec", "rows", E("\"command\":\"x\",\"rows\":40"), chk_rows },
	{ "exec", "cols", E("\"command\":\"x\",\"cols\":120"), chk_cols },
	{ "exec", "idle_timeout_s", E("\"command\":\"x\","
	    "\"idle_timeout_s\":7"), chk_idle },
	{ "exec", "keep", E("\"command\":\"x\",\"background\":true,"
	    "\"keep\":true"), chk_keep },
	{ "exec", "tail_lines", E("\"command\":\"x\",\"tail_lines\":9"),
	    chk_tail },
	{ "exec", "network", E("\"command\":\"x\","
	    "\"network\":[\"pypi.org\"]"), chk_network },
	{ "exec", "tier", E("\"command\":\"x\",\"tier\":\"read_only\""),
	    chk_tier },
	{ "process", "action", P("\"action\":\"list\""), chk_action },
	{ "process", "session_id", P("\"action\":\"poll\","
	    "\"session_id\":\"s9\""), chk_session },
	{ "process", "offset", PS("\"offset\":17"), chk_offset },
	{ "process", "max_bytes", PS("\"max_bytes\":100"), chk_max_bytes },
	{ "process", "length", PS("\"length\":50"), chk_length },
	{ "process", "lines", PS("\"lines\":20"), chk_lines },
	{ "process", "command", P("\"action\":\"exec\",\"session_id\":\"s1\","
	    "\"command\":\"cd src && make\""), chk_command_exec },
	{ "process", "data", P("\"action\":\"write\",\"session_id\":\"s1\","
	    "\"data\":\"hi\\r\""), chk_data },
	{ "process", "eof", P("\"action\":\"write\",\"session_id\":\"s1\","
	    "\"eof\":true"), chk_eof },
	{ "process", "keys", P("\"action\":\"send-keys\","
	    "\"session_id\":\"s1\",\"keys\":[\"C-c\"]"), chk_keys },
	{ "process", "signal", P("\"action\":\"kill\",\"session_id\":\"s1\","
	    "\"signal\":\"INT\""), chk_signal },
	/* The client turns seconds into wait's timeout_ms (poll: wait_ms). */
	{ "process", "timeout_s", P("\"action\":\"wait\",\"session_id\":\"s1\","
	    "\"timeout_ms\":2500"), chk_wait_timeout },
};
#undef E
#undef P
#undef PS

/* 1 if field_rows has a row for tool's field. */
static int
has_row(const char *tool_name, const char *field)
{
	size_t	i;

	for (i = 0; i < sizeof field_rows / sizeof field_rows[0]; i++)
		if (strcmp(field_rows[i].tool, tool_name) == 0 &&
		    strcmp(field_rows[i].field, field) == 0)
			return (1);
	return (0);
}

/* Every field of both tools is one the worker's parser takes as such. */
static void
test_tools_fields_are_the_items(void **state)
{
	const struct field_row	*r;
	struct item_error	 err;
	struct item		*it;
	json_t			*src, *t, *props, *p;
	const char		*k;
	size_t			 i;

	(void)state;
	src = source();
	json_array_foreach(json_object_get(src, "tools"), i, t) {
		props = json_object_get(json_object_get(t, "inputSchema"),
		    "properties");
		json_object_foreach(props, k, p)
			if (!has_row(json_string_value(json_object_get(t,
			    "name")), k))
				fail_msg("%s.%s: no row in field_rows",
				    json_string_value(json_object_get(t,
				    "name")), k);
	}
	for (i = 0; i < sizeof field_rows / sizeof field_rows[0]; i++) {
		r = &field_rows[i];
		props = json_object_get(json_object_get(tool(src, r->tool),
		    "inputSchema"), "properties");
		if (json_object_get(props, r->field) == NULL)
			fail_msg("%s has no field %s", r->tool, r->field);
		it = item_parse(r->item, strlen(r->item), MAX_LEN, &err);
		if (it == NULL)
			fail_msg("%s.%s: %s: %s", r->tool, r->field, r->item,
			    err.message);
		if (!r->check(it))
			fail_msg("%s.%s: the worker read %s otherwise",
			    r->tool, r->field, r->item);
		item_free(it);
	}
	json_decref(src);
}

/* 1 if v holds a member named key at any depth. */
static int
has_key(const json_t *v, const char *key)
{
	const json_t	*m;
	const char	*k;
	size_t		 i;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, m)
			if (strcmp(k, key) == 0 || has_key(m, key))
				return (1);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, m)
			if (has_key(m, key))
				return (1);
	}
	return (0);
}

/* What execq_tools_print writes in fmt: parsed, checked to end in \n. */
static json_t *
printed(enum execq_tools_format fmt)
{
	FILE		*f;
	char		*buf = NULL, *cause = NULL;
	size_t		 len = 0;
	json_t		*root;
	json_error_t	 jerr;

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	if (execq_tools_print(f, fmt, &cause) != 0)
		fail_msg("print: %s", cause);
	assert_int_equal(fclose(f), 0);
	assert_true(len > 2 && buf[len - 1] == '\n');
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		fail_msg("not JSON at line %d: %s", jerr.line, jerr.text);
	free(buf);
	return (root);
}

/* A printed tool's name, description and schema are the source's. */
static void
check_tool(json_t *src, const json_t *name, const json_t *desc,
    const json_t *schema, int dialect)
{
	json_t	*t;
	char	*d;

	assert_true(json_is_string(name));
	t = tool(src, json_string_value(name));
	assert_true(json_is_string(desc));
	d = description(t);
	assert_string_equal(json_string_value(desc), d);
	free(d);
	assert_true(json_is_object(schema));
	assert_string_equal(json_string_value(json_object_get(schema,
	    "type")), "object");
	assert_true(json_is_false(json_object_get(schema,
	    "additionalProperties")));
	assert_true(json_equal(json_object_get(schema, "required"),
	    json_object_get(json_object_get(t, "inputSchema"), "required")));
	if (dialect)
		assert_string_equal(json_string_value(json_object_get(schema,
		    "$schema")), DIALECT);
	else
		assert_null(json_object_get(schema, "$schema"));
	assert_false(has_key(schema, "$comment"));
}

/* mcp: {"tools": [{name, description, inputSchema}]}, as tools/list. */
static void
test_tools_print_mcp(void **state)
{
	json_t	*src, *root, *tools, *t;
	size_t	 i;

	(void)state;
	src = source();
	root = printed(EXECQ_TOOLS_MCP);
	assert_true(json_is_object(root));
	assert_int_equal(json_object_size(root), 1);
	tools = json_object_get(root, "tools");
	assert_int_equal(json_array_size(tools), 2);
	json_array_foreach(tools, i, t) {
		assert_int_equal(json_object_size(t), 3);
		check_tool(src, json_object_get(t, "name"),
		    json_object_get(t, "description"),
		    json_object_get(t, "inputSchema"), 1);
	}
	json_decref(root);
	json_decref(src);
}

/* openai: [{"type": "function", "function": {name, description,
 * parameters}}]. */
static void
test_tools_print_openai(void **state)
{
	json_t	*src, *root, *t, *fn;
	size_t	 i;

	(void)state;
	src = source();
	root = printed(EXECQ_TOOLS_OPENAI);
	assert_int_equal(json_array_size(root), 2);
	json_array_foreach(root, i, t) {
		assert_int_equal(json_object_size(t), 2);
		assert_string_equal(json_string_value(json_object_get(t,
		    "type")), "function");
		fn = json_object_get(t, "function");
		assert_int_equal(json_object_size(fn), 3);
		check_tool(src, json_object_get(fn, "name"),
		    json_object_get(fn, "description"),
		    json_object_get(fn, "parameters"), 0);
	}
	json_decref(root);
	json_decref(src);
}

/* anthropic: [{name, description, input_schema}]. */
static void
test_tools_print_anthropic(void **state)
{
	json_t	*src, *root, *t;
	size_t	 i;

	(void)state;
	src = source();
	root = printed(EXECQ_TOOLS_ANTHROPIC);
	assert_int_equal(json_array_size(root), 2);
	json_array_foreach(root, i, t) {
		assert_int_equal(json_object_size(t), 3);
		check_tool(src, json_object_get(t, "name"),
		    json_object_get(t, "description"),
		    json_object_get(t, "input_schema"), 0);
	}
	json_decref(root);
	json_decref(src);
}

/* Formats by name; a write that fails says so. */
static void
test_tools_formats_and_failure(void **state)
{
	enum execq_tools_format	 fmt;
	FILE			*f;
	char			*cause = NULL;

	(void)state;
	assert_int_equal(execq_tools_format_parse("mcp", &fmt), 0);
	assert_int_equal(fmt, EXECQ_TOOLS_MCP);
	assert_int_equal(execq_tools_format_parse("openai", &fmt), 0);
	assert_int_equal(fmt, EXECQ_TOOLS_OPENAI);
	assert_int_equal(execq_tools_format_parse("anthropic", &fmt), 0);
	assert_int_equal(fmt, EXECQ_TOOLS_ANTHROPIC);
	assert_int_equal(execq_tools_format_parse("MCP", &fmt), -1);
	assert_int_equal(execq_tools_format_parse("", &fmt), -1);
	assert_int_equal(execq_tools_format_parse("json", &fmt), -1);
	if ((f = fopen("/dev/full", "w")) == NULL)
		skip();
	assert_int_equal(execq_tools_print(f, EXECQ_TOOLS_MCP, &cause), -1);
	assert_non_null(cause);
	assert_non_null(strstr(cause, "No space left"));
	free(cause);
	fclose(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tools_source_whole),
		cmocka_unit_test(test_tools_descriptions_say),
		cmocka_unit_test(test_tools_process_actions_are_the_workers),
		cmocka_unit_test(test_tools_fields_are_the_items),
		cmocka_unit_test(test_tools_print_mcp),
		cmocka_unit_test(test_tools_print_openai),
		cmocka_unit_test(test_tools_print_anthropic),
		cmocka_unit_test(test_tools_formats_and_failure),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
