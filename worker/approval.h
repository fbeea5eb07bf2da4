#ifndef EXECQ_APPROVAL_H
#define EXECQ_APPROVAL_H

/*
 * Held commands waiting for a human. A parked request is published as
 * the record execq:approval:<request> (its JSON, with a state), in the
 * sorted set execq:approvals:pending (score: expiry, Unix ms), on the
 * stream execq:approvals and, as an APPROVAL_REQUEST, on the item's
 * q:<reply_to>:high. Decisions (APPROVE, REJECT) are read from the stream
 * execq:decisions, which Redis ACLs let only approvers write
 * (docs/PROTOCOL.md); every worker reads it while it has requests parked
 * and acts on its own. A request ends exactly once: approved, rejected or
 * expired (the callback), or cancelled (no callback).
 */

#include "queue/item.h"

struct approval;
struct approvals;
struct config;
struct event_base;
struct queue;

enum approval_outcome {
	APPROVAL_APPROVED,
	APPROVAL_REJECTED,
	APPROVAL_EXPIRED,
};

/* by and reason are borrowed for the call (NULL when expired). */
typedef void (*approval_done_cb)(struct approval *, enum approval_outcome,
    const char *by, const char *reason, void *arg);

struct approvals	*approvals_create(struct event_base *, struct queue *,
			    const struct config *);
/* Frees what is left, without callbacks or Redis updates. NULL ok. */
void			 approvals_free(struct approvals *);
/*
 * Parks a request described by req (copied; its request, state,
 * created_ms and expires_ms are filled in here; expiry from the config).
 * done is called once, later, unless approval_cancel() comes first.
 */
struct approval		*approvals_park(struct approvals *,
			    const struct item_approval *req, approval_done_cb,
			    void *arg);
/* Ends it as cancelled (shutdown): recorded, no callback, freed. */
void			 approval_cancel(struct approval *);
/* 1 once Redis has been asked to publish it (0: Redis was away). */
int			 approval_published(const struct approval *);
/* What it asks, as parked (request, state, created and expiry filled). */
const struct item_approval *approval_info(const struct approval *);
/* Its request id (32 hex digits). */
const char		*approval_request(const struct approval *);
unsigned		 approvals_count(const struct approvals *);

#endif
