#ifndef EXECQ_QUEUE_H
#define EXECQ_QUEUE_H

/*
 * The reliable priority queue on Redis Streams. Work items are read from
 * q:<queue>:high, then :normal, then :low through the consumer group
 * "execq", never more than the worker has free slots. Control items
 * (PROCESS) come from q:<queue>:ctl and this worker's own inbox
 * q:<queue>:ctl:<consumer>, whatever the free slots. Answers are stored
 * and the item acknowledged in one atomic script; while Redis is away they
 * wait in memory and go out when it is back. Two connections: one for the
 * blocking read, one for everything else.
 */

#include <stddef.h>

struct event_base;
struct item_held;
struct queue;
struct rurl;
struct ssl_ctx_st;
struct syncer;

/* One delivered entry; every pointer is borrowed for the callback only. */
struct queue_entry {
	const char	*stream;	/* q:<queue>:<lane> */
	const char	*entry_id;	/* the stream entry id */
	const char	*body;		/* the "item" field; NULL if missing */
	size_t		 len;
	size_t		 size;		/* > max_item_bytes: the item's size,
					   and body holds only its head */
	int		 redelivered;	/* taken over from a dead worker */
	int		 control;	/* from a control lane (PROCESS) */
	const char	*owner;		/* from an agent's lane: the agent
					   (the ACL's user); NULL: shared */
	int		 claim;		/* claimed as it was read: an enum
					   queue_claim; 0: not claimed */
	const char	*claim_id;	/* ... the item id it claimed */
	const char	*answer;	/* ... QUEUE_CLAIM_ANSWERED's */
	size_t		 answer_len;
	unsigned	 attempt;	/* back from the delayed set as this
					   attempt; 0: sent so */
	int		 requeued;	/* a dead letter sent again */
};

typedef void (*queue_item_cb)(const struct queue_entry *, void *arg);

/* The outcome of queue_claim(). */
enum queue_claim {
	QUEUE_CLAIM_RUN = 1,		/* ours: run it */
	QUEUE_CLAIM_ANSWERED,		/* answered before: the stored answer */
	QUEUE_CLAIM_RUNNING,		/* another delivery holds it */
	QUEUE_CLAIM_LOST,		/* its worker died after starting it */
	QUEUE_CLAIM_FAILED,		/* Redis refused (OOM...): let go of
					   it; it stays pending and is taken
					   over later */
};
/* answer is borrowed; non-NULL only for QUEUE_CLAIM_ANSWERED. */
typedef void (*queue_claim_cb)(enum queue_claim, const char *answer,
    size_t len, void *arg);
/* The integer Redis answered (0 if it was not an integer). */
typedef void (*queue_reply_cb)(long long, void *arg);

struct queue_config {
	const struct rurl	*url;
	const char		*queue;
	const char		*consumer;
	unsigned		 claim_idle_ms;	/* then others take over */
	unsigned		 answer_ttl_s;
	size_t			 max_item_bytes;	/* larger: head only */
	const char		*state_dir;	/* the spool; NULL: none */
	struct syncer		*syncer;	/* fsyncs it; NULL: none */
	unsigned		 wait_replicas;	/* a write (answer, claim,
					   record) counts once this many
					   replicas have it (WAIT); 0: once
					   the primary has it */
	unsigned		 timeout_ms;	/* a command unanswered this
						   long: the connection is
						   made again; 0: 10 s */
	struct ssl_ctx_st	*tls_ctx;	/* rediss:// (required then):
						   rconn_tls_ctx's, the
						   queue's from queue_create
						   on; else NULL */
	const char		*agents;	/* "alice bob": their own
						   lanes are read too; NULL */
	const char		*tls_server_name;	/* SNI and the name
						   the certificate must
						   carry; NULL: the URL's
						   host (copied) */
};

/*
 * Connects (and keeps reconnecting, with backoff) and starts reading as
 * soon as queue_want() says there is room. cfg is copied; its tls_ctx is
 * the queue's (freed by queue_free). Never fails for an unreachable
 * Redis, or one whose certificate is refused: that is logged and retried. With a state_dir,
 * what a stopped worker on this host left in its spool is sent first.
 */
struct queue	*queue_create(struct event_base *, const struct queue_config *,
		    queue_item_cb, void *arg);
/* What the queue tells its user besides items. */
enum queue_event {
	QUEUE_EV_BEAT = 1,	/* about to take over the work of workers gone
				   silent: kill what dead ones left first */
	QUEUE_EV_LEASE_LOST,	/* our lease had lapsed (Redis did not hear
				   from us): our sessions may be lost */
	QUEUE_EV_RECONNECTED,	/* Redis is back, maybe without its data:
				   state kept there must be written again */
};
typedef void (*queue_event_cb)(enum queue_event, void *arg);
void		 queue_on_event(struct queue *, queue_event_cb, void *arg);
/*
 * Closes both connections; pending claims never call back. Answers that
 * neither Redis confirmed nor the spool holds are logged by id. NULL ok.
 */
void		 queue_free(struct queue *);
/* How many more items the worker can take now (its free slots). */
void		 queue_want(struct queue *, unsigned n);
/*
 * Stops taking work for good (shutdown); control items are still read and
 * answers still go out.
 */
void		 queue_stop_reading(struct queue *);
/* Says this worker is gone: nothing is forwarded to it any more. */
void		 queue_retire(struct queue *);
/*
 * Lets go of a claim made as the entry was read (queue_entry.claim
 * QUEUE_CLAIM_RUN), for an item that did not run: the id may run again.
 */
void		 queue_release(struct queue *, const char *item_id,
		    const char *entry_id);
/*
 * This life started the command of item id, delivered as entry_id. Should
 * the entry come to this worker again (its answer lost in a failover that
 * took the claim but not the answer to the new primary), its claim counts
 * the earlier run, as a dead worker's would: answered worker_lost, or run
 * again only within args.retries. The last QUEUE_RAN_KEEP are kept.
 */
void		 queue_started(struct queue *, const char *item_id,
		    const char *entry_id);
/*
 * Marks item id as taken by this worker (the idempotency key) and calls
 * back with what Redis knew. Retried across reconnects. Entries claimed
 * as they were read need none.
 */
void		 queue_claim(struct queue *, const char *item_id,
		    const char *entry_id, int redelivered, int retries,
		    int requeued, queue_claim_cb, void *arg);
/*
 * Cancels item_id before it runs, in one step: out of the delayed set
 * (cb gets QUEUE_CANCEL_DELAYED and the entry as it waited, the JSON the
 * promote script reads), else answered already (ANSWERED), else claimed
 * (CLAIMED: running, or held, by the worker text names, "" if none
 * says), else marked: json (its ERROR cancelled) becomes its answer, so
 * a worker that reaches it, now or later within answer_ttl_s, sends that
 * and runs nothing (MARKED). QUEUE_CLAIM_FAILED: Redis refused.
 */
enum queue_cancel {
	QUEUE_CANCEL_DELAYED = 1,
	QUEUE_CANCEL_ANSWERED,
	QUEUE_CANCEL_CLAIMED,
	QUEUE_CANCEL_MARKED,
};
void		 queue_cancel(struct queue *, const char *item_id,
		    const char *json, size_t len, queue_claim_cb, void *arg);
/*
 * The queue's limits shared by the fleet (queue/scripts.c's limit
 * script): cb gets 0 when item_id may start now (it holds a place among
 * max_running, for lease_ms, until queue_limit_done; a token taken), or
 * the ms to wait before asking again; -1 if Redis refused.
 */
void		 queue_limit_take(struct queue *, const char *item_id,
		    unsigned max_running, double max_per_s, unsigned lease_ms,
		    queue_reply_cb, void *arg);
/* Its lease renewed (at each beat), or its place given back. */
void		 queue_limit_renew(struct queue *, const char *item_id,
		    unsigned lease_ms);
void		 queue_limit_done(struct queue *, const char *item_id);
/*
 * An entry taken off the queue for now (its claim let go): it goes back
 * to the front of the entries held for room, offered again first once
 * queue_want gives room; nobody takes it over meanwhile.
 */
void		 queue_hold_again(struct queue *, const char *stream,
		    const char *entry_id, const char *body, size_t len,
		    const char *owner, unsigned attempt);
/* What an answer does to the item id's idempotency record. */
enum queue_store {
	QUEUE_STORE_NONE = 0,		/* nothing */
	QUEUE_STORE_ANSWER,		/* keep it as the item's answer */
	QUEUE_STORE_RELEASE,		/* forget the claim: it never ran */
	QUEUE_STORE_CALLBACK,		/* item_id is a session id: publish
					   once per session, and not after
					   the session was declared lost */
};

/*
 * Sends an answer to q:<reply_to>:<lane>, does store to the record of
 * item_id (when non-NULL), and when entry_id is non-NULL acknowledges and
 * deletes that entry of stream, all atomically. Copied; kept until Redis
 * has it.
 */
void		 queue_answer(struct queue *, const char *reply_to,
		    const char *lane, const char *item_id, enum queue_store,
		    const char *stream, const char *entry_id, const char *json,
		    size_t len);
/*
 * The same, keeping kept (not json) as the item's answer, for a sender
 * that asks again: what is sent once (a session's token) is not kept.
 */
void		 queue_answer_kept(struct queue *, const char *reply_to,
		    const char *lane, const char *item_id, enum queue_store,
		    const char *stream, const char *entry_id, const char *json,
		    size_t len, const char *kept, size_t kept_len);
/*
 * Every way an answer can go, for queue_answer_send(): the arguments of
 * queue_answer_kept() and what becomes of the entry besides.
 */
struct queue_answer {
	const char	*reply_to, *lane, *item_id;
	enum queue_store store;
	const char	*stream, *entry_id, *json, *kept;
	size_t		 len, kept_len;
	int		 dead;		/* the entry joins the dead letters
					   (q:<queue>:dead) with the answer */
	int		 sched;		/* the entry waits in q:<queue>:delayed
					   and comes back as attempt; json's
					   "due_ms":-1 says when */
	int64_t		 at_ms;		/* sched: due then (Redis's clock),
					   or ... */
	long		 delay_ms;	/* ... this long from now (at_ms 0) */
	unsigned	 attempt;
};
void		 queue_answer_send(struct queue *, const struct queue_answer *);
/*
 * Hands a PROCESS item to the worker owning session_id (through its
 * inbox q:<queue>:ctl:<consumer>) and acknowledges it here: the owner
 * its session hash names, else the worker that ran the id (its claim;
 * a foreground item's log is on that worker's host). An item from an
 * agent's lane (owner: the agent; else NULL) is still that agent's
 * there. cb gets 1 (forwarded), 0 (no other owner) or -1 (the owner is
 * gone).
 */
void		 queue_forward(struct queue *, const char *session_id,
		    const char *stream, const char *entry_id, const char *body,
		    size_t len, const char *owner, queue_reply_cb, void *arg);
/*
 * The answer to a one-shot read (queue_decisions_*): the entries, borrowed
 * for the call (n may be 0, at most QUEUE_READ_MAX), or failed = -1 (an
 * error reply or a lost connection). Never called after queue_free().
 */
#define QUEUE_READ_MAX	128
typedef void (*queue_read_cb)(const struct queue_entry *, size_t n,
    int failed, void *arg);
/* Redis's clock now (ms), as far as the last beat measured it. */
int64_t		 queue_redis_ms(const struct queue *);
/* This worker's consumer name. */
const char	*queue_consumer(const struct queue *);
/* Keeps an entry being worked on from being taken over (heartbeat). */
void		 queue_track(struct queue *, const char *stream,
		    const char *entry_id);
void		 queue_untrack(struct queue *, const char *stream,
		    const char *entry_id);
/* Answers and commands not yet confirmed by Redis (claims not counted). */
unsigned	 queue_backlog(const struct queue *);
/*
 * Writes every answer and command not yet confirmed by Redis to the spool
 * (shutdown: they are sent at the next start). Returns how many are
 * safe there; claims and reads are not kept.
 */
unsigned	 queue_spool_all(struct queue *);
/* 1 if both connections are up. */
int		 queue_connected(const struct queue *);

/*
 * This worker's status (JSON text, copied) for the fleet registry: the
 * hash execq:workers, field <consumer>, written with every heartbeat (and
 * at once with now), beside its time in execq:workers:beat: Redis's
 * time, never this host's. Entries not renewed for a day (by Redis's
 * clock) are removed by the next worker's beat.
 */
void		 queue_set_status(struct queue *, const char *json, int now);

struct queue_stats {
	int			connected;	/* both connections up */
	unsigned long long	reconnects;	/* connections made again */
	unsigned		outbox;		/* answers Redis has not
						   confirmed */
	unsigned		spooled;	/* ... of them in the spool */
	long long		waited_ms;	/* the longest wait for an
						   answer now (0: none) */
	int			stalled;	/* ... longer than the timeout,
						   or dropped for that and
						   not heard from since */
	int			replica;	/* the server is a replica */
	int			unreplicated;	/* too few replicas confirmed
						   the last WAIT */
	const char		*refused;	/* why Redis refused our last
						   write (borrowed); NULL */
};
void		 queue_stats(const struct queue *, struct queue_stats *);
/*
 * INFO <section> on the write connection: cb gets its text (borrowed for
 * the call), or NULL and Redis's error (an ACL that refuses INFO). cb is
 * never called when Redis is away, when the connection is lost first, or
 * when the queue is freed first.
 */
typedef void (*queue_info_cb)(const char *text, const char *err, void *arg);
void		 queue_info(struct queue *, const char *section,
		    queue_info_cb, void *arg);
/*
 * Whether this Redis lets in a client that gives no password (its
 * default user needs none): known once a connection came up. When we
 * log in, a second connection without AUTH sends PING to find out.
 */
enum queue_door {
	QUEUE_DOOR_UNKNOWN = 0,
	QUEUE_DOOR_LOCKED,		/* NOAUTH: a password is needed */
	QUEUE_DOOR_OPEN,		/* anyone gets in */
};
enum queue_door	 queue_door(const struct queue *);

/*
 * What the worker keeps in Redis for others to read (queue/store.c).
 * Every write goes out like an answer: kept until Redis has it, resent
 * after a reconnect, in the order of the calls on the one write
 * connection, behind the answers sent before it. Strings are copied.
 */

/* A session as its mirror execq:session:<id> shows it (borrowed). */
struct queue_session {
	const char		*id;
	long			 pid;
	const char		*command;
	const char		*status;	/* "running", or how it ended */
	const char		*log_path;
	long long		 started_ms;
	const char		*reply_to;
	int			 pty;
	unsigned long long	 output_bytes;
	int			 waiting_input;	/* blocked reading its input */
	long long		 last_activity_ms;	/* output or input */
	int			 keep;		/* args.keep */
	int			 ended;		/* then these two as well: */
	long long		 exit_code;
	long long		 ended_ms;
};
/* Writes the session's mirror (this worker's), then its TTL. */
void		 queue_session_mirror(struct queue *,
		    const struct queue_session *, unsigned ttl_s);
/*
 * Lists session id in execq:sessions by its start (dropping entries
 * older than a week) and in execq:running, where a worker that outlives
 * this one finds it if this one dies.
 */
void		 queue_session_index(struct queue *, const char *id,
		    long long started_ms);
/* Takes session id out of execq:running: it ended here. */
void		 queue_session_ended(struct queue *, const char *id);
/*
 * The fence check of session id, after our lease had lapsed: cb gets
 * serial if another worker declared the session lost meanwhile, else 0.
 */
void		 queue_session_fence(struct queue *, const char *id,
		    long long serial, queue_reply_cb, void *arg);
/*
 * A held item (h, borrowed) in the session mirror for ttl_s, listed in
 * execq:sessions by its start.
 */
void		 queue_held_mirror(struct queue *, const struct item_held *h,
		    const char *reply_to, long long ttl_s);
/* Takes held item id out of the mirror and of execq:sessions. */
void		 queue_held_drop(struct queue *, const char *id);

/*
 * A pending approval request: its record json as
 * execq:approval:<request> for ttl_s, the request in
 * execq:approvals:pending by expires_ms, json in the execq:approvals
 * stream.
 */
void		 queue_approval_publish(struct queue *, const char *request,
		    const char *json, long long ttl_s, long long expires_ms);
/* A request that ended: its record json for ttl_s, no longer pending. */
void		 queue_approval_settle(struct queue *, const char *request,
		    const char *json, long long ttl_s);
/*
 * Reads execq:decisions (not kept across reconnects; -1 when Redis is
 * away, and no callback): its last entry (where it ends now), or the
 * entries after cursor, QUEUE_READ_MAX at most.
 */
int		 queue_decisions_last(struct queue *, queue_read_cb,
		    void *arg);
int		 queue_decisions_after(struct queue *, const char *cursor,
		    queue_read_cb, void *arg);

/*
 * The live output stream execq:out:<id>, capped at QUEUE_LIVE_MAXLEN
 * entries: an entry of output, len bytes of data with "offset" where they
 * start, "fd" when fd >= 0, "skipped" when skipped > 0.
 */
#define QUEUE_LIVE_MAXLEN	1000
void		 queue_live_add(struct queue *, const char *id, int fd,
		    unsigned long long offset, unsigned long long skipped,
		    const char *data, size_t len);
/* Its last entry, {"end": end}, and the stream's TTL. */
void		 queue_live_end(struct queue *, const char *id,
		    const char *end, unsigned ttl_s);

#endif
