/* Held items: an approval's bookkeeping, and the ones that did not run. */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "exec/exec.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "worker/approval.h"
#include "worker/config.h"
#include "worker/metrics.h"
#include "worker/session.h"
#include "worker/worker_int.h"

/* A held job's state as PROCESS actions show it (strings borrowed). */
static void
worker_held_view(const struct job *j, const struct approval *a,
    const char *state, struct item_held *h)
{
	const struct item_approval	*req = approval_info(a);

	memset(h, 0, sizeof *h);
	h->id = j->item->id;
	h->state = state;
	h->request = approval_request(a);
	h->command = j->item->command;
	h->risk = req->risk;
	h->rule = req->rule;
	h->reason = req->reason;
	h->decided_by = req->decided_by;
	h->created_ms = req->created_ms;
	h->expires_ms = req->expires_ms;
}

/* Frees one remembered entry. */
static void
worker_held_forget(struct held_end *e)
{
	free(e->id);
	free(e->state);
	free(e->request);
	free(e->command);
	free(e->risk);
	free(e->rule);
	free(e->reason);
	free(e->by);
	memset(e, 0, sizeof *e);
}

/*
 * A held job's request ended (state) without running it: mirrored for
 * "execq ps" and remembered for PROCESS actions.
 */
static void
worker_held_ended(struct job *j, const struct approval *a,
    const char *state)
{
	struct worker		*w = j->w;
	struct item_held	 h;
	struct held_end		*e = &w->ended[w->nended++ % WORKER_HELD_KEEP];

	worker_held_view(j, a, state, &h);
	sessions_mirror_held(w->sessions, &h, worker_reply_to(j,
	    j->item->reply_to), 0);
	worker_held_forget(e);
	e->id = xstrdup(h.id);
	e->state = xstrdup(state);
	e->request = xstrdup(h.request);
	e->command = xstrdup(h.command);
	e->risk = xstrdup(h.risk);
	e->rule = xstrdup(h.rule);
	e->reason = xstrdup(h.reason);
	e->by = h.decided_by != NULL ? xstrdup(h.decided_by) : NULL;
	e->created_ms = h.created_ms;
	e->expires_ms = h.expires_ms;
}

int
worker_held_find(struct worker *w, const char *id, struct item_held *h)
{
	struct job	*j;
	struct held_end	*e;
	unsigned	 i;

	LIST_FOREACH(j, &w->jobs, entry)
		if (j->state == JOB_PARKED && strcmp(j->item->id, id) == 0) {
			worker_held_view(j, j->approval, "held", h);
			return (0);
		}
	for (i = 0; i < WORKER_HELD_KEEP; i++) {
		e = &w->ended[(w->nended - 1 - i) % WORKER_HELD_KEEP];
		if (e->id == NULL || strcmp(e->id, id) != 0)
			continue;
		memset(h, 0, sizeof *h);
		h->id = e->id;
		h->state = e->state;
		h->request = e->request;
		h->command = e->command;
		h->risk = e->risk;
		h->rule = e->rule;
		h->reason = e->reason;
		h->decided_by = e->by;
		h->created_ms = e->created_ms;
		h->expires_ms = e->expires_ms;
		return (0);
	}
	return (-1);
}

void
worker_held_list_cb(json_t *a, void *arg)
{
	struct worker		*w = arg;
	struct item_held	 h;
	struct job		*j;

	LIST_FOREACH(j, &w->jobs, entry) {
		if (j->state != JOB_PARKED)
			continue;
		worker_held_view(j, j->approval, "held", &h);
		json_array_append_new(a, item_held_to_json(&h));
	}
}

void
worker_held_park(struct job *j, approval_done_cb decided)
{
	struct worker		*w = j->w;
	struct item_approval	 req;
	struct item_held	 h;
	char			*grant;

	memset(&req, 0, sizeof req);
	req.id = j->item->id;
	req.command = j->item->command;
	req.cwd = j->cwd;
	req.env = j->item->env;
	req.risk = cls_risk_name(j->dec.risk);
	req.rule = j->dec.rule;
	req.reason = j->dec.reason;
	req.queue = w->cfg->queue;
	req.worker = queue_consumer(w->q);
	req.reply_to = worker_reply_to(j, j->item->reply_to);
	req.background = j->item->background;
	req.network = j->dec.asks_network;
	req.domains = (const char *const *)j->dec.asks_domains;
	req.grant_path = j->dec.grant_path;
	j->approval = approvals_park(w->approvals, &req, decided, j);
	/*
	 * The request shows the path; what the approval opens is what is
	 * there now, recorded: the start opens it only if it still is.
	 */
	if (j->dec.grant_path != NULL) {
		grant = exec_grant_record(j->dec.grant_path);
		free(j->dec.grant_path);
		j->dec.grant_path = grant;
	}
	metrics_add(w->metrics, METRICS_APPROVALS, 1, "requested", NULL);
	worker_held_view(j, j->approval, "held", &h);
	sessions_mirror_held(w->sessions, &h, req.reply_to, 0);
	log_info("item %s: held for approval (request %s): %s",
	    j->item->id, approval_request(j->approval), j->dec.reason);
	worker_audit(j, "held", NULL, NULL);
}

void
worker_held_decided(struct job *j, struct approval *a,
    enum approval_outcome how, const char *by, const char *reason)
{
	struct item_held	 h;

	j->request = xstrdup(approval_request(a));
	j->approval = NULL;
	metrics_add(j->w->metrics, METRICS_APPROVALS, 1,
	    how == APPROVAL_APPROVED ? "approved" : how == APPROVAL_REJECTED ?
	    "rejected" : "expired", NULL);
	switch (how) {
	case APPROVAL_APPROVED:
		worker_audit(j, "approved", by, reason);
		if (!j->item->background) {	/* a session takes it over */
			worker_held_view(j, a, "approved", &h);
			sessions_mirror_held(j->w->sessions, &h, NULL, 1);
		}
		j->approved_by = xstrdup(by);
		break;
	case APPROVAL_REJECTED:
		worker_audit(j, "rejected", by, reason);
		worker_held_ended(j, a, "rejected");
		break;
	default:
		worker_audit(j, "expired", NULL, NULL);
		worker_held_ended(j, a, "expired");
		break;
	}
}

void
worker_held_cancel(struct job *j, const char *why, enum errcode code,
    const char *message, enum queue_store store)
{
	j->request = xstrdup(approval_request(j->approval));
	worker_held_ended(j, j->approval, "cancelled");
	approval_cancel(j->approval);
	j->approval = NULL;
	metrics_add(j->w->metrics, METRICS_APPROVALS, 1, "cancelled", NULL);
	worker_audit(j, "cancelled", NULL, why);
	worker_fail(j, j->item->reply_to, j->item->id, code, message, store);
}

void
worker_held_cancel_all(struct worker *w)
{
	struct job	*j, *next;

	for (j = LIST_FIRST(&w->jobs); j != NULL; j = next) {
		next = LIST_NEXT(j, entry);
		/* Its ask of the limits is out: the reply ends it. */
		if (j->state == JOB_PARKED && j->approval == NULL &&
		    (j->ev_limit == NULL || !evtimer_pending(j->ev_limit,
		    NULL)))
			continue;
		if (j->state == JOB_PARKED && j->approval == NULL)
			worker_fail(j, j->item->reply_to, j->item->id,
			    ERR_WORKER_STOPPING, "the worker is shutting down "
			    "while the approved command waited for the queue's "
			    "limits; it did not run, send it again",
			    QUEUE_STORE_RELEASE);
		else if (j->state == JOB_PARKED)
			worker_held_cancel(j, "the worker stopped",
			    ERR_WORKER_STOPPING, "the worker is shutting down "
			    "while the command waited for approval; it did not "
			    "run, send it again", QUEUE_STORE_RELEASE);
	}
}

void
worker_held_release(struct worker *w)
{
	size_t	i;

	for (i = 0; i < WORKER_HELD_KEEP; i++)
		worker_held_forget(&w->ended[i]);
}
