/*
 * Parked requests and the decisions stream.
 *
 * Decisions are read with plain XREAD from a cursor, not a consumer
 * group: every worker must see every decision (it cannot know which
 * worker parked a request), and XREAD needs only read access, so the
 * ACL that keeps agents off execq:decisions need not let workers write
 * it either. The cursor is the stream's last id, taken before a request
 * is published, so no decision for it can come before the cursor.
 * Polled every APPROVAL_POLL_MS while anything is parked (a human is on
 * the other side; a quarter second is not felt). What Redis keeps of a
 * request (its record, the pending set, the approvals stream) and the
 * reads of the decisions are built by queue/store.c from the values
 * given here.
 */

#include <sys/queue.h>
#include <sys/random.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "logs/clock.h"
#include "logs/log.h"
#include "logs/token.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "worker/approval.h"
#include "worker/config.h"

#define APPROVAL_POLL_MS	250
#define APPROVAL_KEEP_S		86400	/* a decided record stays a day */

struct approval {
	TAILQ_ENTRY(approval)	 entry;
	struct approvals	*as;
	char			 request[TOKEN_LEN + 1];
	struct item_approval	 req;		/* strings below, owned */
	char			*strs[10];
	char			**env;
	char			**domains;
	struct event		*ev_expire;
	int			 published;
	approval_done_cb	 done;
	void			*arg;
};
TAILQ_HEAD(approval_list, approval);

struct approvals {
	struct event_base	*base;
	struct queue		*q;
	const struct config	*cfg;
	struct approval_list	 list;
	unsigned		 n;
	char			*cursor;	/* last decision seen; NULL:
						   ask Redis first */
	enum {
		APPROVAL_READ_NONE = 0,
		APPROVAL_READ_FIRST,		/* where the stream ends */
		APPROVAL_READ_NEXT,		/* decisions after cursor */
	}			 reading;
	int			 failing;	/* said so once */
	struct event		*ev_poll;
};

static void	approvals_poll(struct approvals *);

/* Copies s into a's string store (NULL stays NULL). */
static const char *
approval_keep(struct approval *a, size_t slot, const char *s)
{
	a->strs[slot] = s != NULL ? xstrdup(s) : NULL;
	return (a->strs[slot]);
}

/* The record, the pending set, the approvals stream, the agent. */
static void
approval_publish(struct approval *a)
{
	struct approvals	*as = a->as;
	char			*json;
	long long		 ttl;
	size_t			 len;

	json = item_approval_to_json(&a->req, &len);
	ttl = (long long)((a->req.expires_ms - a->req.created_ms) / 1000 +
	    APPROVAL_KEEP_S);
	if (strcmp(a->req.state, "pending") == 0) {
		queue_approval_publish(as->q, a->request, json, ttl,
		    (long long)a->req.expires_ms);
		queue_answer(as->q, a->req.reply_to, KS_LANE_HIGH, NULL,
		    QUEUE_STORE_NONE, NULL, NULL, json, len);
	} else
		queue_approval_settle(as->q, a->request, json, ttl);
	free(json);
}

/* Unlinks and frees a request. */
static void
approval_free(struct approval *a)
{
	size_t	i;

	TAILQ_REMOVE(&a->as->list, a, entry);
	a->as->n--;
	if (a->ev_expire != NULL)
		event_free(a->ev_expire);
	for (i = 0; i < sizeof a->strs / sizeof a->strs[0]; i++)
		free(a->strs[i]);
	xstrvfree(a->env);
	xstrvfree(a->domains);
	free(a);
}

/* The one way a request ends: recorded, told, freed. */
static void
approval_end(struct approval *a, const char *state, int outcome,
    const char *by, const char *reason)
{
	a->req.state = state;
	a->req.decided_by = by;
	a->req.decision_reason = reason;
	if (a->published)
		approval_publish(a);
	if (outcome != -1)
		a->done(a, (enum approval_outcome)outcome, by, reason, a->arg);
	approval_free(a);
}

/* No decision in time. */
static void
approval_expire_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	approval_end(arg, "expired", APPROVAL_EXPIRED, NULL, NULL);
}

/* The request parked under id, or NULL. */
static struct approval *
approvals_find(struct approvals *as, const char *request)
{
	struct approval	*a;

	TAILQ_FOREACH(a, &as->list, entry)
		if (strcmp(a->request, request) == 0)
			return (a);
	return (NULL);
}

/* One entry of execq:decisions; those for other workers are skipped. */
static void
approvals_decision(struct approvals *as, const struct queue_entry *e)
{
	struct item_decision	 d;
	struct approval		*a;
	char			*cause;

	if (e->body == NULL)
		return;
	if (item_decision_parse(e->body, e->len, &d, &cause) != 0) {
		log_warn("decision %s: %s (ignored)", e->entry_id, cause);
		free(cause);
		return;
	}
	if ((a = approvals_find(as, d.request)) != NULL) {
		log_info("request %s (item %s): %s by %s", a->request,
		    a->req.id, d.approve ? "approved" : "rejected", d.by);
		approval_end(a, d.approve ? "approved" : "rejected",
		    d.approve ? APPROVAL_APPROVED : APPROVAL_REJECTED, d.by,
		    d.reason);
	}
	item_decision_release(&d);
}

/* Publishes what waited for the cursor. */
static void
approvals_publish_waiting(struct approvals *as)
{
	struct approval	*a;

	TAILQ_FOREACH(a, &as->list, entry) {
		if (!a->published) {
			a->published = 1;
			approval_publish(a);
		}
	}
}

/* The reply to a poll (or to the cursor's first read). */
static void
approvals_read_cb(const struct queue_entry *e, size_t n, int failed,
    void *arg)
{
	struct approvals	*as = arg;
	int			 first = as->reading == APPROVAL_READ_FIRST;
	size_t			 i;

	as->reading = APPROVAL_READ_NONE;
	if (failed) {		/* the next tick tries again */
		if (!as->failing)
			log_warn("approvals: cannot read " KS_DECISIONS " (no "
			    "access? Redis away?); held commands wait");
		as->failing = 1;
		return;
	}
	if (as->failing)
		log_info("approvals: reading " KS_DECISIONS " again");
	as->failing = 0;
	if (!first && as->cursor == NULL)
		return;		/* went idle meanwhile */
	if (first) {
		as->cursor = xstrdup(n > 0 ? e[0].entry_id : "0-0");
		approvals_publish_waiting(as);
		return;
	}
	for (i = 0; i < n; i++) {
		free(as->cursor);
		as->cursor = xstrdup(e[i].entry_id);
		approvals_decision(as, &e[i]);
	}
	if (n == QUEUE_READ_MAX)
		approvals_poll(as);	/* more behind these */
}

/* Reads the next decisions (or, first, where the stream ends now). */
static void
approvals_poll(struct approvals *as)
{
	int	r;

	if (as->reading != APPROVAL_READ_NONE)
		return;
	if (as->cursor == NULL)
		r = queue_decisions_last(as->q, approvals_read_cb, as);
	else
		r = queue_decisions_after(as->q, as->cursor, approvals_read_cb,
		    as);
	if (r == 0)
		as->reading = as->cursor == NULL ? APPROVAL_READ_FIRST :
		    APPROVAL_READ_NEXT;
}

/* The poll timer: runs while anything is parked. */
static void
approvals_poll_cb(evutil_socket_t fd, short what, void *arg)
{
	struct approvals	*as = arg;
	struct timeval		 tv = { 0, APPROVAL_POLL_MS * 1000 };

	(void)fd;
	(void)what;
	if (as->n == 0) {
		if (as->reading == APPROVAL_READ_NONE) {
			free(as->cursor);	/* idle: afresh next time */
			as->cursor = NULL;
		}
		return;
	}
	approvals_poll(as);
	evtimer_add(as->ev_poll, &tv);
}

struct approvals *
approvals_create(struct event_base *base, struct queue *q,
    const struct config *cfg)
{
	struct approvals	*as;

	as = xcalloc(1, sizeof *as);
	as->base = base;
	as->q = q;
	as->cfg = cfg;
	TAILQ_INIT(&as->list);
	if ((as->ev_poll = evtimer_new(base, approvals_poll_cb, as)) == NULL)
		fatal("evtimer_new failed");
	return (as);
}

void
approvals_free(struct approvals *as)
{
	if (as == NULL)
		return;
	while (!TAILQ_EMPTY(&as->list))
		approval_free(TAILQ_FIRST(&as->list));
	event_free(as->ev_poll);
	free(as->cursor);
	free(as);
}


struct approval *
approvals_park(struct approvals *as, const struct item_approval *req,
    approval_done_cb done, void *arg)
{
	struct approval	*a;
	struct timeval	 tv;
	unsigned	 ms = as->cfg->approval_timeout_ms;

	a = xcalloc(1, sizeof *a);
	a->as = as;
	a->done = done;
	a->arg = arg;
	token_new(a->request);
	a->req = *req;
	a->req.request = a->request;
	a->req.state = "pending";
	a->req.id = approval_keep(a, 0, req->id);
	a->req.command = approval_keep(a, 1, req->command);
	a->req.cwd = approval_keep(a, 2, req->cwd);
	a->req.risk = approval_keep(a, 3, req->risk);
	a->req.rule = approval_keep(a, 4, req->rule);
	a->req.reason = approval_keep(a, 5, req->reason);
	a->req.queue = approval_keep(a, 6, req->queue);
	a->req.worker = approval_keep(a, 7, req->worker);
	a->req.reply_to = approval_keep(a, 8, req->reply_to);
	a->req.grant_path = approval_keep(a, 9, req->grant_path);
	a->req.env = a->env = xstrvdup((const char *const *)req->env);
	a->domains = xstrvdup(req->domains);
	a->req.domains = (const char *const *)a->domains;
	a->req.created_ms = clock_wall_ms();
	a->req.expires_ms = a->req.created_ms + ms;
	TAILQ_INSERT_TAIL(&as->list, a, entry);
	as->n++;
	a->ev_expire = evtimer_new(as->base, approval_expire_cb, a);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(a->ev_expire, &tv);
	if (as->cursor != NULL) {
		a->published = 1;
		approval_publish(a);
	} else
		approvals_poll(as);	/* the cursor first */
	if (!evtimer_pending(as->ev_poll, NULL))
		event_active(as->ev_poll, EV_TIMEOUT, 1);
	return (a);
}

void
approval_cancel(struct approval *a)
{
	approval_end(a, "cancelled", -1, NULL, NULL);
}

int
approval_published(const struct approval *a)
{
	return (a->published);
}

const struct item_approval *
approval_info(const struct approval *a)
{
	return (&a->req);
}

const char *
approval_request(const struct approval *a)
{
	return (a->request);
}

unsigned
approvals_count(const struct approvals *as)
{
	return (as->n);
}
