/*
 * policy/decide.c: the one decision the worker acts on, from a verdict,
 * the tier, the sandbox mode, the queue's network grant and what the
 * item asked.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "policy/decide.h"

/* A verdict of one simple command; strings borrowed. */
static void
verdict(struct cls_verdict *v, struct cls_cmd *c, enum cls_risk risk,
    const char *rule, const char *reason, int network)
{
	memset(v, 0, sizeof *v);
	memset(c, 0, sizeof *c);
	c->text = (char *)"cmd";
	c->risk = risk;
	c->rule = (char *)rule;
	c->reason = (char *)reason;
	c->network = network;
	v->risk = risk;
	v->rule = (char *)rule;
	v->reason = (char *)reason;
	v->complete = 1;
	v->network = network;
	v->cmds = c;
	v->ncmds = 1;
}

/* The same verdict with a path outside the sandbox. */
static void
outside(struct cls_verdict *v, const char *path)
{
	v->outside = (char *)path;
	v->outside_reason = (char *)"cat reads a path outside the workspace";
}

static const struct decide_input confined_no_net = {
	CLS_TIER_CONFINED, CLS_SANDBOX_HOLD, 0, -1
};

static void
test_decide_network_asked_without_grant_is_held(void **state)
{
	struct cls_verdict	v;
	struct cls_cmd		c;
	struct decide_input	in = confined_no_net;
	struct decision		d;

	(void)state;
	verdict(&v, &c, CLS_READ_ONLY, "read_only:ls", "ls lists", 0);
	in.asked_network = 1;
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_HOLD);
	assert_int_equal(d.classified, CLS_RUN);
	assert_string_equal(d.rule, "network");
	assert_string_equal(d.reason, "it asks for network, which this "
	    "queue does not grant");
	assert_int_equal(d.network, 1);
	assert_int_equal(d.asks_network, 1);
	assert_null(d.grant_path);
	assert_int_equal(d.code, ERR_NONE);
	decide_release(&d);
}

static void
test_decide_network_asked_with_grant_runs(void **state)
{
	struct cls_verdict	v;
	struct cls_cmd		c;
	struct decide_input	in = confined_no_net;
	struct decision		d;

	(void)state;
	verdict(&v, &c, CLS_READ_ONLY, "read_only:ls", "ls lists", 0);
	in.queue_network = 1;
	in.asked_network = 1;
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_RUN);
	assert_string_equal(d.rule, "read_only:ls");
	assert_string_equal(d.reason, "ls lists");
	assert_int_equal(d.network, 1);
	assert_int_equal(d.asks_network, 0);
	decide_release(&d);
	/* A grant the item declines: no network. */
	in.asked_network = 0;
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_RUN);
	assert_int_equal(d.network, 0);
	decide_release(&d);
}

static void
test_decide_network_needed_without_grant_is_held(void **state)
{
	struct cls_verdict	v;
	struct cls_cmd		c;
	struct decide_input	in = confined_no_net;
	struct decision		d;

	(void)state;
	verdict(&v, &c, CLS_NETWORK, "network:curl", "curl talks to the "
	    "network", 1);
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_HOLD);
	assert_string_equal(d.rule, "network");
	assert_string_equal(d.reason, "curl talks to the network; this queue "
	    "grants no network");
	assert_int_equal(d.risk, CLS_NETWORK);
	assert_int_equal(d.network, 1);
	assert_int_equal(d.asks_network, 1);
	decide_release(&d);
	/* The item says it runs without: it does, without network. */
	in.asked_network = 0;
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_RUN);
	assert_int_equal(d.network, 0);
	assert_int_equal(d.asks_network, 0);
	decide_release(&d);
	/* Held by the tier already: the hold keeps its rule, asks too. */
	in.asked_network = -1;
	in.tier = CLS_TIER_READ_ONLY;
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_HOLD);
	assert_string_equal(d.rule, "network:curl");
	assert_int_equal(d.asks_network, 1);
	decide_release(&d);
}

static void
test_decide_network_needed_with_grant_runs(void **state)
{
	struct cls_verdict	v;
	struct cls_cmd		c;
	struct decide_input	in = confined_no_net;
	struct decision		d;

	(void)state;
	verdict(&v, &c, CLS_NETWORK, "network:curl", "curl talks to the "
	    "network", 1);
	in.queue_network = 1;
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_RUN);
	assert_string_equal(d.rule, "network:curl");
	assert_int_equal(d.network, 1);
	assert_int_equal(d.asks_network, 0);
	decide_release(&d);
}

static void
test_decide_sandbox_hold_grantable_path(void **state)
{
	struct cls_verdict	v;
	struct cls_cmd		c;
	struct decision		d;

	(void)state;
	verdict(&v, &c, CLS_READ_ONLY, "read_only:cat", "cat reads", 0);
	outside(&v, "/srv/data/report.txt");
	decide_command(&v, &confined_no_net, &d);
	assert_int_equal(d.action, CLS_HOLD);
	assert_string_equal(d.rule, "sandbox");
	assert_string_equal(d.reason, "cat reads a path outside the "
	    "workspace");
	assert_string_equal(d.grant_path, "/srv/data/report.txt");
	assert_int_equal(d.code, ERR_NONE);
	decide_release(&d);
}

static void
test_decide_sandbox_hold_not_grantable(void **state)
{
	static const char *const paths[] = { "/etc", "/", "/srv/../etc/x",
	    "/srv/./x", "/srv/x/..", "/srv/x/.", "/srv/x/", "relative/x" };
	struct cls_verdict	 v;
	struct cls_cmd		 c;
	struct decision		 d;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		verdict(&v, &c, CLS_READ_ONLY, "read_only:cat", "cat reads", 0);
		outside(&v, paths[i]);
		decide_command(&v, &confined_no_net, &d);
		assert_int_equal(d.action, CLS_HOLD);
		assert_string_equal(d.rule, "sandbox");
		if (d.grant_path != NULL)
			fail_msg("%s: grantable", paths[i]);
		decide_release(&d);
	}
}

static void
test_decide_refusal_codes(void **state)
{
	struct cls_verdict	v;
	struct cls_cmd		c;
	struct decide_input	in = confined_no_net;
	struct decision		d;

	(void)state;
	verdict(&v, &c, CLS_BLOCKED, "blocked:rm-root", "rm -rf / deletes "
	    "the system", 0);
	in.tier = CLS_TIER_ADMIN;
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_REFUSE);
	assert_int_equal(d.code, ERR_BLOCKED);
	assert_string_equal(d.rule, "blocked:rm-root");
	decide_release(&d);
	/* Blocked and asking for network: still refused, still blocked. */
	in.asked_network = 1;
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_REFUSE);
	assert_int_equal(d.code, ERR_BLOCKED);
	decide_release(&d);

	verdict(&v, &c, CLS_READ_ONLY, "read_only:cat", "cat reads", 0);
	outside(&v, "/srv/data/report.txt");
	in.asked_network = -1;
	in.sandbox = CLS_SANDBOX_REFUSE;
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_REFUSE);
	assert_int_equal(d.code, ERR_OUTSIDE_WORKSPACE);
	assert_string_equal(d.rule, "sandbox");
	assert_null(d.grant_path);
	decide_release(&d);
	/* Sandbox off: the path is not the policy's concern. */
	in.sandbox = CLS_SANDBOX_OFF;
	decide_command(&v, &in, &d);
	assert_int_equal(d.action, CLS_RUN);
	assert_int_equal(d.code, ERR_NONE);
	assert_null(d.grant_path);
	decide_release(&d);
	decide_release(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_decide_network_asked_without_grant_is_held),
		cmocka_unit_test(test_decide_network_asked_with_grant_runs),
		cmocka_unit_test(
		    test_decide_network_needed_without_grant_is_held),
		cmocka_unit_test(test_decide_network_needed_with_grant_runs),
		cmocka_unit_test(test_decide_sandbox_hold_grantable_path),
		cmocka_unit_test(test_decide_sandbox_hold_not_grantable),
		cmocka_unit_test(test_decide_refusal_codes),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
