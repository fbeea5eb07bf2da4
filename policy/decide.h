#ifndef EXECQ_DECIDE_H
#define EXECQ_DECIDE_H

/*
 * The typed decision the worker acts on: cls_decide's run/hold/refuse,
 * plus what only the queue and the item know (a network grant, or a
 * request for one), the path an approval may open, and a refusal's error
 * code. The worker derives nothing from it: it runs, parks or refuses as
 * it says. Pure (logs/xmalloc only).
 */

#include "logs/errcode.h"
#include "policy/classify.h"

/* What the decision depends on besides the verdict. */
struct decide_input {
	enum cls_tier	 tier;		/* the item's (the queue's, or lower) */
	enum cls_sandbox sandbox;	/* the worker's sandbox mode */
	int		 queue_network;	/* the queue grants network */
	int		 asked_network;	/* args.network: -1 unset, 0, 1 */
	const char *const *queue_domains;	/* what the queue's commands
					   reach through the proxy; NULL */
	const char *const *asked_domains;	/* args.network as a list;
					   checked valid; NULL */
};

struct decision {
	enum cls_action	 action;	/* what the worker does */
	enum cls_action	 classified;	/* cls_decide's, before the network
					   hold (what the decisions metric
					   counts) */
	enum cls_risk	 risk;
	char		*rule, *reason;	/* why; allocated */
	int		 network;	/* runs with the host's network */
	int		 asks_network;	/* ... that the queue does not grant:
					   a human must (held) */
	char		**domains;	/* runs with the proxy, reaching these
					   (the queue's and the item's), or
					   NULL; allocated, NULL-terminated */
	char		**asks_domains;	/* ... of which these the queue does
					   not grant: a human must (held) */
	char		*grant_path;	/* held by the sandbox for this path,
					   which an approval opens; allocated
					   or NULL (the worker, holding the
					   command, replaces it with its
					   record of the file: exec.h) */
	enum errcode	 code;		/* refused: ERR_BLOCKED or
					   ERR_OUTSIDE_WORKSPACE; else
					   ERR_NONE */
};

/*
 * Fills *d from the verdict v and in: cls_decide first; then network is
 * the queue's grant or a human's: asked for by the item or needed by one
 * of its commands where the queue grants none, it holds what would have
 * run. Domains (the queue's, and those the item asks for) send the
 * command's network through the proxy instead, which serves a command's
 * need for it; a domain the queue does not grant holds it. A sandbox hold names its path for a grant when an approval may
 * open it (absolute, no . or .. parts, below a directory under /). Never
 * fails; release d with decide_release.
 */
void		 decide_command(const struct cls_verdict *v,
		    const struct decide_input *in, struct decision *d);
/* Frees d's strings; d is zeroed. NULL ok. */
void		 decide_release(struct decision *d);

#endif
