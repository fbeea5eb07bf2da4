/* Admission: the gate, the limits, the tier and the policy's decision. */

#include <stdlib.h>
#include <string.h>

#include "exec/cmdenv.h"
#include "logs/xmalloc.h"
#include "policy/classify.h"
#include "policy/decide.h"
#include "policy/netaddr.h"
#include "queue/item.h"
#include "worker/config.h"
#include "worker/metrics.h"
#include "worker/session.h"
#include "worker/shell.h"
#include "worker/worker_int.h"

extern char **environ;

int
worker_check_owner(struct job *j)
{
	struct item	*it = j->item;
	char		*msg;

	if (j->owner == NULL)
		return (0);
	if (!worker_owned_name(j->owner, it->id)) {
		xasprintf(&msg, "the item came from agent '%s''s lane, and an "
		    "agent's ids begin with its name: '%s.<id>', not '%s'",
		    j->owner, j->owner, it->id);
		worker_fail(j, it->reply_to, it->id, ERR_BAD_ID, msg,
		    QUEUE_STORE_NONE);
		free(msg);
		return (-1);
	}
	if (it->reply_to != NULL && !worker_owned_name(j->owner,
	    it->reply_to)) {
		xasprintf(&msg, "the item came from agent '%s''s lane, and an "
		    "agent's answers go to its own queues, '%s.<name>' (q:%s.*)"
		    ", not '%s'", j->owner, j->owner, j->owner, it->reply_to);
		worker_fail(j, it->reply_to, it->id, ERR_BAD_REPLY_TO, msg,
		    QUEUE_STORE_NONE);
		free(msg);
		return (-1);
	}
	if (it->reply_to == NULL)
		it->reply_to = xstrdup(j->owner_reply);
	return (0);
}

int
worker_check(struct job *j)
{
	struct worker	*w = j->w;
	struct item	*it = j->item;
	enum errcode	 code;
	char		*cause;

	if (!w->cfg->enable_execute) {
		worker_fail(j, it->reply_to, it->id, ERR_EXECUTION_DISABLED,
		    "command execution is disabled on this worker (set "
		    "ENABLE_EXECUTE=1 or enable_execute in the config file)",
		    QUEUE_STORE_NONE);
		return (-1);
	}
	if (it->timeout_ms > (long)w->cfg->max_timeout_ms) {
		xasprintf(&cause, "args.timeout_s exceeds this worker's maximum "
		    "of %u s", w->cfg->max_timeout_ms / 1000);
		worker_fail(j, it->reply_to, it->id, ERR_BAD_TIMEOUT, cause,
		    QUEUE_STORE_NONE);
		free(cause);
		return (-1);
	}
	j->cwd = cmdenv_resolve_cwd(w->cfg->workspace, it->cwd, &code, &cause);
	if (j->cwd == NULL) {
		worker_fail(j, it->reply_to, it->id, code, cause,
		    QUEUE_STORE_NONE);
		free(cause);
		return (-1);
	}
	j->envp = cmdenv_build_env(environ, it->env, it->pty, it->id, &code,
	    &cause);
	if (j->envp == NULL) {
		worker_fail(j, it->reply_to, it->id, code, cause,
		    QUEUE_STORE_NONE);
		free(cause);
		return (-1);
	}
	return (0);
}

/* The item's tier: the queue's, or lower if it asks. */
static int
worker_tier(struct job *j)
{
	struct worker	*w = j->w;
	struct item	*it = j->item;
	char		*msg;

	j->tier = w->tier;
	if (it->tier == NULL)
		return (0);
	if (cls_tier_parse(it->tier, &j->tier) != 0) {
		worker_fail(j, it->reply_to, it->id, ERR_BAD_ITEM, "args.tier "
		    "must be read_only, read_write, confined or admin",
		    QUEUE_STORE_NONE);
		return (-1);
	}
	if (j->tier > w->tier) {
		xasprintf(&msg, "args.tier %s is above this queue's tier %s; "
		    "an item may only lower it", it->tier, w->tier_name);
		worker_fail(j, it->reply_to, it->id, ERR_BAD_TIER, msg,
		    QUEUE_STORE_NONE);
		free(msg);
		return (-1);
	}
	return (0);
}

/*
 * The policy's decision on j's command (j->item->command, in j->cwd, at
 * j->tier) into j->dec, by policy (the worker's, or a shell session's
 * dialect of it), with the env and network the item asks for (none:
 * NULL, -1, NULL), counted.
 */
static void
worker_decide(struct job *j, const struct cls_policy *policy,
    char *const *env, int network, const char *const *domains)
{
	struct worker		*w = j->w;
	struct cls_verdict	 v;
	struct decide_input	 in;

	cls_classify(policy, j->item->command, strlen(j->item->command),
	    j->cwd, &v);
	if (env != NULL)
		cls_classify_env(&w->policy, &v, env);
	memset(&in, 0, sizeof in);
	in.tier = j->tier;
	in.sandbox = w->cfg->sandbox_mode;
	in.queue_network = w->cfg->network;
	in.asked_network = network;
	in.queue_domains = (const char *const *)w->net_domains;
	in.asked_domains = domains;
	decide_command(&v, &in, &j->dec);
	cls_verdict_release(&v);
	metrics_add(w->metrics, METRICS_DECISIONS, 1,
	    cls_risk_name(j->dec.risk), cls_action_name(j->dec.classified));
}

/* A command the policy refused: its audit line and its answer. */
static void
worker_refuse(struct job *j)
{
	char	*msg;

	worker_audit(j, "refused", NULL, NULL);
	xasprintf(&msg, "refused (%s): %s", j->dec.rule, j->dec.reason);
	worker_fail(j, j->item->reply_to, j->item->id, j->dec.code, msg,
	    QUEUE_STORE_NONE);
	free(msg);
}

/* The command policy: run, hold for approval, or refuse (answered). */
int
worker_classify(struct job *j)
{
	struct item		*it = j->item;
	char			*msg;
	size_t			 i;

	if (worker_tier(j) != 0)
		return (-1);
	for (i = 0; it->domains != NULL && it->domains[i] != NULL; i++) {
		if (netaddr_pattern_valid(it->domains[i]))
			continue;
		xasprintf(&msg, "args.network: '%s' is not a domain "
		    "(pypi.org, *.github.com) or an IP address", it->domains[i]);
		worker_fail(j, it->reply_to, it->id, ERR_BAD_ARGS, msg,
		    QUEUE_STORE_NONE);
		free(msg);
		return (-1);
	}
	worker_decide(j, &j->w->policy, it->env, it->network,
	    (const char *const *)it->domains);
	if (j->dec.action != CLS_REFUSE)
		return (0);
	worker_refuse(j);
	return (-1);
}

int
worker_classify_shell(struct job *j)
{
	struct worker		*w = j->w;
	struct item		*it = j->item;
	struct cls_policy	 policy;
	char			*msg;
	int			 tier;

	if (sessions_shell_context(w->sessions, it->session_id, &tier,
	    &j->cwd) == -1)
		return (0);	/* no shell: the action says so */
	if (j->cwd == NULL)
		j->cwd = xstrdup(w->cfg->workspace);
	j->tier = (enum cls_tier)tier;
	/* Read as the session's shell reads it: bash, mostly, not sh. */
	policy = w->policy;
	policy.shell = cls_shell_of(shell_program(w->cfg->shell));
	worker_decide(j, &policy, NULL, -1, NULL);
	if (j->dec.action == CLS_RUN) {
		worker_audit(j, "run", NULL, NULL);
		return (0);
	}
	if (j->dec.action == CLS_REFUSE) {
		worker_refuse(j);
		return (-1);
	}
	/* No one can approve a shell's command: it runs as an item then. */
	worker_audit(j, "refused", NULL, "needs approval: not in a shell");
	xasprintf(&msg, "it needs a person's approval (%s: %s); a shell "
	    "session's command cannot wait for one: send it as an item of its "
	    "own (execq run), where it can be approved", j->dec.rule,
	    j->dec.reason);
	worker_fail(j, it->reply_to, it->id, ERR_HELD, msg, QUEUE_STORE_NONE);
	free(msg);
	return (-1);
}
