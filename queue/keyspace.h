#ifndef EXECQ_KEYSPACE_H
#define EXECQ_KEYSPACE_H

/*
 * Every Redis key and stream execq uses, in one place: the worker, the
 * client and the Lua scripts take their names from here (string literals,
 * so they join other literals: "HGETALL " KS_WORKERS). The ones that end
 * in ':' are prefixes: the id follows. docs/PROTOCOL.md section 1 says
 * what each one holds.
 */

/* Streams of a queue: q:<queue>:<lane>; replies use the same shape. */
#define KS_QUEUE		"q:"
#define KS_QUEUE_FMT		"q:%s:%s"	/* queue, lane */
#define KS_LANE_HIGH		"high"
#define KS_LANE_NORMAL		"normal"
#define KS_LANE_LOW		"low"
#define KS_LANE_CTL		"ctl"		/* PROCESS items */
#define KS_INBOX_FMT		"q:%s:ctl:%s"	/* queue, consumer */
/* The consumer group of every work lane. */
#define KS_GROUP		"execq"

/* Items: the idempotency record and the stored answer, by item id. */
#define KS_CLAIM		"execq:claim:"
#define KS_ANSWER		"execq:answer:"

/* Workers: the lease, the fleet registry and its beat times. */
#define KS_WORKER		"execq:worker:"
#define KS_WORKERS		"execq:workers"
#define KS_WORKERS_BEAT		"execq:workers:beat"

/* Sessions: the mirror, the index by start time, the running set. */
#define KS_SESSION		"execq:session:"
#define KS_SESSIONS		"execq:sessions"
#define KS_RUNNING		"execq:running"
/* Live output of a session or a streamed foreground item. */
#define KS_OUT			"execq:out:"

/* Approvals: a request, the index, the pending ones, the decisions. */
#define KS_APPROVAL		"execq:approval:"
#define KS_APPROVALS		"execq:approvals"
#define KS_APPROVALS_PENDING	"execq:approvals:pending"
#define KS_DECISIONS		"execq:decisions"

#endif
