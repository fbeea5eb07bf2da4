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
/*
 * Per queue, items that wait for their time (a sorted set scored by the
 * ms, Redis's clock, at which they are due; retries and delayed items)
 * with what each one is in a hash beside it (id -> lane, attempt and the
 * entry's fields), and the dead letters (a stream: the item and its last
 * answer).
 */
#define KS_DELAYED_FMT		"q:%s:delayed"	/* queue */
#define KS_DELAYED_ITEMS	"delayed:items"	/* after q:<queue>: */
#define KS_DEAD_FMT		"q:%s:dead"	/* queue */
/* Ids of requeued dead letters (a hash: id -> letter), after q:<queue>: */
#define KS_REQUEUED		"requeued"
/*
 * A queue's limits shared by the fleet (setting queue_limits): the items
 * running now (a sorted set of item ids scored by when their lease ends,
 * renewed by their worker's beat) and the start rate's token bucket (a
 * hash: tokens, ts).
 */
#define KS_LIMIT_RUNNING	"limit:running"	/* after q:<queue>: */
#define KS_LIMIT_BUCKET		"limit:bucket"	/* after q:<queue>: */
/* The consumer group of every work lane. */
#define KS_GROUP		"execq"

/*
 * Redis Cluster only: answers and callbacks for reply streams of other
 * queues (other shards) wait here (a hash: a mark -> "<reply stream>\n
 * <json>") until delivered, and each delivery leaves its mark beside the
 * reply stream, q:{<reply queue>}:sent:<mark>, so it happens once.
 */
#define KS_REPLIES		"execq:replies"
#define KS_SENT			"sent:"		/* after q:{<queue>}: */

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
/*
 * The fields of execq:session:<id>: a session's (worker, pid, command,
 * status, log_path, started_ms, reply_to, pty, output_bytes,
 * waiting_input, last_activity_ms (its last output or input, written at
 * most once a second), keep, and once it ended exit_code, ended_ms;
 * callback once its EXEC_CALLBACK went out) or
 * a held item's (worker, status, command, request, risk, reason,
 * started_ms, expires_ms, reply_to).
 */
#define KS_SF_WORKER		"worker"
#define KS_SF_PID		"pid"
#define KS_SF_COMMAND		"command"
#define KS_SF_STATUS		"status"
#define KS_SF_LOG_PATH		"log_path"
#define KS_SF_STARTED		"started_ms"
#define KS_SF_REPLY_TO		"reply_to"
#define KS_SF_PTY		"pty"
#define KS_SF_OUTPUT_BYTES	"output_bytes"
#define KS_SF_WAITING		"waiting_input"	/* "1" or "0" */
#define KS_SF_ACTIVITY		"last_activity_ms"
#define KS_SF_KEEP		"keep"
#define KS_SF_EXIT_CODE		"exit_code"
#define KS_SF_ENDED		"ended_ms"
#define KS_SF_CALLBACK		"callback"
#define KS_SF_REQUEST		"request"
#define KS_SF_RISK		"risk"
#define KS_SF_REASON		"reason"
#define KS_SF_EXPIRES		"expires_ms"
/* Live output of a session or a streamed foreground item. */
#define KS_OUT			"execq:out:"

/* Approvals: a request, the index, the pending ones, the decisions. */
#define KS_APPROVAL		"execq:approval:"
#define KS_APPROVALS		"execq:approvals"
#define KS_APPROVALS_PENDING	"execq:approvals:pending"
#define KS_DECISIONS		"execq:decisions"

#endif
