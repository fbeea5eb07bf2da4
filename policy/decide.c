/* The decision the worker acts on: cls_decide, then network and grants. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logs/xmalloc.h"
#include "policy/decide.h"

/* Why a command waits for a network grant (allocated). */
static char *
decide_network_reason(const struct cls_verdict *v, int asked)
{
	char	buf[512];
	size_t	i;

	if (asked)
		return (xstrdup("it asks for network, which this queue does "
		    "not grant"));
	for (i = 0; i < v->ncmds; i++)
		if (v->cmds[i].network)
			break;
	snprintf(buf, sizeof buf, "%s; this queue grants no network",
	    i < v->ncmds ? v->cmds[i].reason : "it needs the network");
	return (xstrdup(buf));
}

/*
 * 1 if an approval may open path: absolute, without . or .. parts, and
 * not / nor a directory right below it (/etc, /usr: too much at once).
 */
static int
decide_grantable(const char *path)
{
	if (path == NULL || path[0] != '/' || strstr(path, "/./") != NULL ||
	    strstr(path, "/../") != NULL || strcmp(path + strlen(path) -
	    (strlen(path) >= 2 ? 2 : 0), "/.") == 0 ||
	    (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0))
		return (0);
	return (strchr(path + 1, '/') != NULL &&
	    path[strlen(path) - 1] != '/');
}

void
decide_command(const struct cls_verdict *v, const struct decide_input *in,
    struct decision *d)
{
	const char	*rule, *reason;
	int		 sandbox;

	memset(d, 0, sizeof *d);
	d->action = cls_decide(v, in->tier, in->sandbox, &rule, &reason);
	d->classified = d->action;
	d->risk = v->risk;
	/* cls_decide's sandbox hold: a path outside, not ignored. */
	sandbox = d->action == CLS_HOLD && v->outside != NULL &&
	    in->sandbox != CLS_SANDBOX_OFF;
	d->rule = xstrdup(rule);
	/*
	 * Network is the queue's grant, or a human's: asked for by the item,
	 * or needed by one of its commands (curl, git fetch, pip install).
	 */
	d->network = in->queue_network && in->asked_network != 0;
	if (!in->queue_network && (in->asked_network == 1 ||
	    (v->network && in->asked_network != 0))) {
		d->network = d->asks_network = 1;
		if (d->action == CLS_RUN) {
			d->action = CLS_HOLD;
			free(d->rule);
			d->rule = xstrdup("network");
			d->reason = decide_network_reason(v,
			    in->asked_network == 1);
		}
	}
	if (d->reason == NULL)
		d->reason = xstrdup(reason);
	if (sandbox && decide_grantable(v->outside))
		d->grant_path = xstrdup(v->outside);
	if (d->action == CLS_REFUSE)
		d->code = d->risk == CLS_BLOCKED ? ERR_BLOCKED :
		    ERR_OUTSIDE_WORKSPACE;
}

void
decide_release(struct decision *d)
{
	if (d == NULL)
		return;
	free(d->rule);
	free(d->reason);
	free(d->grant_path);
	memset(d, 0, sizeof *d);
}
