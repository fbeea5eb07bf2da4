/*
 * Agents' own lanes (setting agents): within a priority the shared lane
 * and the agents' take turns at being read first, so one agent's backlog
 * does not keep another's item waiting behind all of it. (What an agent
 * may do to the lanes, with the ACL, is test_auth's.)
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		20000
#define BACKLOG		12

/* An EXEC item of agent's: id and reply_to in its names. */
static void
submit_as(struct harness *h, const char *agent, const char *lane,
    const char *id, const char *command)
{
	json_t	*item;
	char	*text, *reply, *key;

	xasprintf(&reply, "%s.r", agent);
	xasprintf(&key, "%s.%s", agent, lane);
	item = json_pack("{s:s, s:s, s:s, s:{s:s}}", "id", id, "type", "EXEC",
	    "reply_to", reply, "args", "command", command);
	text = json_dumps(item, JSON_COMPACT);
	harness_submit_json(h, key, text);
	free(text);
	json_decref(item);
	free(reply);
	free(key);
}

/*
 * One slot, agent la's twelve items queued before agent lb's one: lb's
 * runs among the first three, not after la's twelve.
 */
static void
test_lanes_take_turns(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	char		 id[32], cmd[64], *path, *order, *line, *save;
	int		 i, pos = 0, lb = 0;

	for (i = 0; i < BACKLOG; i++) {
		snprintf(id, sizeof id, "la.%d", i);
		snprintf(cmd, sizeof cmd, "echo la%d >> order", i);
		submit_as(h, "la", "normal", id, cmd);
	}
	submit_as(h, "lb", "normal", "lb.1", "echo lb >> order");
	harness_worker_start(h, NULL, "--agents", "la,lb", "--max-procs", "1",
	    NULL);
	a = harness_wait_answer(h, "lb.r", "lb.1", WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	for (i = 0; i < BACKLOG; i++) {
		snprintf(id, sizeof id, "la.%d", i);
		json_decref(harness_wait_answer(h, "la.r", id, WAIT_MS));
	}
	xasprintf(&path, "%s/order", h->ws);
	order = harness_read_file(path, NULL);
	free(path);
	assert_non_null(order);
	for (line = strtok_r(order, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		pos++;
		if (strcmp(line, "lb") == 0)
			lb = pos;
	}
	free(order);
	if (lb == 0 || lb > 3)
		harness_fail(h, "lb's item ran at %d of %d", lb, pos);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lanes_take_turns,
		    harness_setup, harness_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
