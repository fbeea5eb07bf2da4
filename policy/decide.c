/* The decision the worker acts on: cls_decide, then network and grants. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "logs/xmalloc.h"
#include "policy/decide.h"
#include "policy/netaddr.h"

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

/* 1 if the queue's patterns cover what the item asks (a name or one of
   the patterns itself). */
static int
decide_domain_granted(const char *const *queue, const char *asked)
{
	size_t	i;

	for (i = 0; queue != NULL && queue[i] != NULL; i++)
		if (strcasecmp(queue[i], asked) == 0 ||
		    netaddr_domain_match(queue[i], asked))
			return (1);
	return (0);
}

/* The queue's domains and the item's, and the item's the queue lacks. */
static void
decide_domains(const struct decide_input *in, struct decision *d)
{
	size_t	nq = 0, na = 0, n = 0, k = 0, i;

	while (in->queue_domains != NULL && in->queue_domains[nq] != NULL)
		nq++;
	while (in->asked_domains != NULL && in->asked_domains[na] != NULL)
		na++;
	if (nq + na == 0)
		return;
	d->domains = xcalloc(nq + na + 1, sizeof *d->domains);
	for (i = 0; i < nq; i++)
		d->domains[n++] = xstrdup(in->queue_domains[i]);
	for (i = 0; i < na; i++) {
		if (decide_domain_granted(in->queue_domains,
		    in->asked_domains[i]))
			continue;
		d->domains[n++] = xstrdup(in->asked_domains[i]);
		if (d->asks_domains == NULL)
			d->asks_domains = xcalloc(na + 1,
			    sizeof *d->asks_domains);
		d->asks_domains[k++] = xstrdup(in->asked_domains[i]);
	}
}

/* Why a command waits for domains (allocated). */
static char *
decide_domains_reason(char *const *asked)
{
	char	*s, *t;
	size_t	 i;

	s = xstrdup("it asks to reach");
	for (i = 0; asked[i] != NULL; i++) {
		xasprintf(&t, "%s%s %s", s, i > 0 ? "," : "", asked[i]);
		free(s);
		s = t;
	}
	xasprintf(&t, "%s, which this queue does not grant", s);
	free(s);
	return (t);
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
	decide_domains(in, d);
	if (d->asks_domains != NULL && d->action == CLS_RUN) {
		d->action = CLS_HOLD;
		free(d->rule);
		d->rule = xstrdup("network");
		d->reason = decide_domains_reason(d->asks_domains);
	}
	/* With domains, the proxy is the command's network. */
	if (!in->queue_network && (in->asked_network == 1 ||
	    (v->network && in->asked_network != 0 && d->domains == NULL))) {
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
	xstrvfree(d->domains);
	xstrvfree(d->asks_domains);
	memset(d, 0, sizeof *d);
}
