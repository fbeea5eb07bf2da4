#ifndef EXECQ_QUEUE_INT_H
#define EXECQ_QUEUE_INT_H

/*
 * The queue module's insides, shared by its files and by nothing else.
 * Its files, from the top down; each calls only the ones below it:
 *
 *   store.c    what the worker keeps in Redis for others to read: the
 *              session mirror, approvals and decisions, live output
 *   queue.c    the driver: the object, create, free, heartbeat, lease,
 *              registry, stats; told of connections by conn.c's callback
 *   shard.c    Redis Cluster: replies for other shards' queues, swept
 *              from the queue's pending replies and delivered once (an
 *              event of its own, which outbox.c and queue.c set off)
 *   reader.c   the lanes: fetch, blocking read, held and tracked entries,
 *              takeover (XAUTOCLAIM), one-shot reads
 *   outbox.c   what must reach Redis: commands built by appending
 *              (struct qcmd), claims, answers, their retry and backoff,
 *              the spool hand-off
 *   conn.c     the two Redis connections (queue/rconn.c: unix, TCP or
 *              TLS): connect, resolve, the login (AUTH; refused: again
 *              after 1 s to 60 s), SELECT, the open-door probe (a third
 *              connection, same address and TLS, without AUTH),
 *              ROLE (a node that is not the primary is refused),
 *              reconnect with backoff, the write kick; following a
 *              failover (READONLY, a role change, the sentinels'
 *              +switch-master: both connections dropped and made again),
 *              asking queue/sentinel.c (not a queue_ file: it knows no
 *              connection of ours) where the primary is
 *   scripts.c  the Lua scripts, each with its KEYS and ARGV in order
 *
 * reader.c lets go of claims through outbox.c; nothing calls up: conn.c
 * says "up" and "down" through the callback queue.c gives it. Every
 * function keeps the module's prefix, queue_.
 */

#include <sys/queue.h>

#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <event2/util.h>
#include <hiredis/hiredis.h>

#include "queue/cluster.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "queue/rconn.h"
#include "queue/scripts.h"
#include "queue/rurl.h"
#include "queue/spool.h"

struct event;
struct event_base;
struct sentinel_ask;
struct qshards;
struct sentinel_watch;
struct syncer;

#define QUEUE_GROUP		KS_GROUP
#define QUEUE_NCLASS		3	/* work lane classes: high, normal, low */
#define QUEUE_INBOX		1	/* lanes[1]: q:<queue>:ctl:<consumer> */
#define QUEUE_CTL_COUNT		64
#define QUEUE_BLOCK_MS		"10000"	/* a blocking read's BLOCK: what an
					   idle worker costs Redis (a read,
					   no fetch, each period); new work
					   and control items end it at once */
#define QUEUE_CTL_GRACE_MS	20	/* no room: the control-only read
					   waits this long, so a slot that
					   frees soon costs no read and no
					   CLIENT UNBLOCK */
#define QUEUE_REPLY_MAXLEN	"10000"
#define QUEUE_APPROVALS_MAXLEN	"10000"	/* the execq:approvals stream */
#define QUEUE_SESSIONS_KEEP_MS	(7LL * 86400 * 1000)	/* execq:sessions */
#define QUEUE_BACKOFF_MIN_MS	50
#define QUEUE_BACKOFF_MAX_MS	2000
#define QUEUE_ERR_BACKOFF_MAX_MS 8000	/* Redis says no (OOM, READONLY) */
#define QUEUE_AUTH_BACKOFF_MIN_MS 1000	/* Redis refused our login */
#define QUEUE_AUTH_BACKOFF_MAX_MS 60000
#define QUEUE_HEAD_BYTES	65536	/* of an item too large to take */
#define QUEUE_STATUS_KEEP_MS	"86400000"	/* a silent worker's status */
#define QUEUE_LIFE_LEN		16	/* hex digits of a life's mark */
#define QUEUE_RAN_KEEP		4096	/* started items remembered */
#define QUEUE_WAIT_MS		2000	/* WAIT for replicas this long */
#define QUEUE_TIMEOUT_MS	10000	/* no answer that long: a stall */


/* scripts.c */

struct queue;
struct qconn;

/* A connection came up (up 1) or went down (0); not while freeing. */
typedef void (*queue_conn_cb)(struct qconn *, int up);

/* One Redis connection and its reconnect timer. */
struct qconn {
	struct queue		*q;
	const char		*name;
	queue_conn_cb		 cb;		/* its owner's: queue.c */
	struct rconn		*rc;		/* NULL: none now */
	int			 linked;	/* rc came up (connected, TLS
						   done): down is a loss */
	int			 up;		/* ... and ROLE said primary */
	unsigned		 backoff_ms;
	struct event		*ev_retry;
	int			 ever_up;	/* connected once: a later
						   connect is a reconnect */
	int			 resolving;	/* a DNS lookup is under way */
	char			 addr[INET6_ADDRSTRLEN];	/* its answer */
	const char		*gai_error;	/* ... or why not */
	struct sentinel_ask	*ask;		/* asking where the primary is */
	char			 primary[256];	/* the sentinels' answer */
	int			 primary_port;	/* ... 0: none yet */
	int			 refused;	/* the last node was no primary */
	struct event		*ev_drop;	/* queue_conn_switch's */
	struct event		*ev_stall;	/* each second: stuck? */
	long long		 up_ms;		/* connected (monotonic) */
	long long		 busy_ms;	/* a command waits since */
	int			 stalled;	/* dropped for a stall, and
						   not heard from since */
	unsigned		 auth_ms;	/* login refused: the next
						   try's delay; 0: not */
	unsigned		 cluster_ms;	/* a Redis Cluster node: the
						   same; 0: not */
	struct rconn		*probe;		/* the open-door probe: a
						   second rconn to rc's
						   peer, same TLS; NULL */
	char			 at[CLUSTER_HOST_MAX];	/* the node rc was
						   made to, and its port */
	int			 at_port;
	int			 missed;	/* the last connect failed */
};

/* A command that must reach Redis: kept until it has a reply. */
struct qreq {
	TAILQ_ENTRY(qreq)	 entry;
	int			 argc;
	char			**argv;
	size_t			*argvlen;
	int			 sent;
	queue_claim_cb		 claimcb;	/* NULL for answers */
	queue_reply_cb		 replycb;	/* or this, or neither */
	void			*arg;
	int			 nospool;	/* wrong to replay later */
	int			 tagged;	/* its keys named for a cluster */
	int			 pends;		/* an answer whose reply waits
						   in the queue's pending
						   replies (cluster mode) */
	char			*answers;	/* the item (or entry) an answer
						   answers, for the log; NULL */
	struct spool_ref	 spool;		/* where it is kept on disk */
	/* Redis replied; it counts once replicas have it (WAIT): */
	int			 acked;
	long long		 got_int;	/* ... the reply, kept for then */
	int			 got_claim;
	char			*got_answer;
	size_t			 got_len;
};
TAILQ_HEAD(qreqs, qreq);

/*
 * A command being built: arguments appended in order (queue_arg...),
 * borrowed but for the formatted ones (queue_argf), which it owns until
 * it is sent or released.
 */
#define QUEUE_ARGC_MAX		32
struct qcmd {
	int			 argc;
	const char		*argv[QUEUE_ARGC_MAX];
	size_t			 len[QUEUE_ARGC_MAX];
	char			*own[QUEUE_ARGC_MAX];
};

/* An entry delivered by Redis that the worker had no room for yet. */
struct qheld {
	TAILQ_ENTRY(qheld)	 entry;
	char			*stream, *entry_id, *body;
	char			*owner;		/* the agent's; NULL */
	size_t			 len, size;
	int			 has_body, redelivered;
	unsigned		 attempt;
	int			 requeued;
};
TAILQ_HEAD(qhelds, qheld);

/*
 * A lane the worker reads: a shared one (any writer), the control inbox
 * of this worker, or an agent's own, q:<queue>:<agent>.<lane>, which the
 * ACL lets only that agent write: whatever comes from it is that agent's.
 */
struct qlane {
	char			*key;
	char			*owner;		/* the agent; NULL: shared */
};

/* An entry being worked on, refreshed so no one takes it over. */
struct qtrack {
	LIST_ENTRY(qtrack)	 entry;
	char			*stream, *entry_id;
};

struct queue {
	struct event_base	*base;
	struct rurl		 url;
	SSL_CTX			*tls_ctx;	/* rediss://: ours; else NULL */
	char			*tls_name;	/* SNI, checked name; NULL: the
						   host connected to */
	enum queue_door		 door;		/* conn.c's probe */
	char			*name, *consumer;
	char			 life[QUEUE_LIFE_LEN + 1];	/* our mark in
						   our claims, new at every
						   start */
	unsigned		 wait_replicas;	/* a write counts once this
						   many replicas have it */
	int			 waiting;	/* a WAIT is out */
	int			 unreplicated;	/* the last WAIT came short */
	char			*ran[QUEUE_RAN_KEEP];	/* "<id> <entry>" this
						   life started: a ring */
	uint32_t		 ranhash[QUEUE_RAN_KEEP];	/* ... each
						   one's hash, scanned first:
						   a claim's look is a few
						   cache lines, not 4096
						   string compares */
	unsigned		 nran;		/* next slot of ran */
	unsigned long long	 reclaims;	/* claims of an entry we ran
						   already: each its mark */
	struct qlane		*lanes;		/* control lanes, then each
						   class: shared, agents' */
	unsigned		 nlanes, nctl;
	unsigned		 nagents;	/* lanes of a class: 1 + this */
	unsigned		 turn;		/* whose lane a fetch reads first
						   in each class */
	char			*lane_prefix;	/* "q:<queue>:" */
	/*
	 * Redis Cluster (cluster.h): every key of ours carries the queue's
	 * name as its hash tag, and both connections go to the primary
	 * serving that slot. Replies to queues on other shards wait in
	 * execq:{<queue>}:replies until shard.c delivers them.
	 */
	int			 cluster;	/* on since the first node said
						   so; never off again */
	unsigned		 slot;		/* the queue's slot */
	struct cluster_map	 map;		/* the last CLUSTER SLOTS */
	unsigned		 map_next;	/* next node to try after a
						   failed connect */
	char			*k_claim;	/* "execq:claim:", tagged */
	char			*k_worker;	/* "execq:worker:" */
	char			*k_workers, *k_beat, *k_running;
	char			*k_replies;	/* pending replies */
	unsigned long long	 pend_serial;	/* of replies with no entry */
	struct event		*ev_sweep;	/* deliver pending replies */
	struct qshards		*shards;	/* shard.c's; NULL */
	unsigned		 claim_idle_ms, answer_ttl_s;
	size_t			 max_item_bytes;
	queue_item_cb		 itemcb;
	void			*arg;
	struct qconn		 rd, wr;
	unsigned		 want;
	int			 reading;	/* a read is outstanding */
	int			 ctl_only;	/* ... blocking on ctl lanes only */
	unsigned		 block_count;	/* ... its COUNT, per lane */
	unsigned		 fetch_asked;	/* a fetch's count */
	int			 drained;	/* the last read got less than
						   it asked from every lane:
						   block, not fetch, next */
	int			 fetch_queued;	/* ... and a fetch sent behind it */
	long long		 rd_client_id;	/* for CLIENT UNBLOCK */
	struct event		*ev_ctl;	/* the control-only read's
						   grace (QUEUE_CTL_GRACE_MS) */
	int			 ctl_due;	/* ... over: block now */
	int			 stopped;	/* no more work items */
	int			 retired;	/* worker key deleted */
	int			 freeing;
	struct qreqs		 out;		/* answers and claims */
	unsigned		 nout;
	struct spool		*spool;		/* NULL: no state dir */
	struct syncer		*resolver;	/* DNS; NULL: none needed */
	unsigned		 err_backoff_ms;	/* Redis said no */
	int			 err_wait;	/* ... so nothing goes out */
	time_t			 err_logged;
	unsigned		 err_quiet;	/* errors not logged since */
	unsigned		 read_backoff_ms;	/* reads refused */
	int			 let_go;	/* claims refused: read our own
						   pending entries again */
	int			 fetch_own;	/* ... this fetch does */
	int			 leased;	/* our lease key was set */
	int			 was_up;	/* the write side connected once */
	queue_event_cb		 eventcb;
	void			*eventarg;
	time_t			 read_logged;
	struct qhelds		 held;
	LIST_HEAD(, qtrack)	 tracked;
	struct event		*ev_beat;
	struct event		*ev_promote;	/* due delayed items, 1 s */
	unsigned		 promote_rounds;	/* this second's */
	int			 promote_quiet;	/* none delayed at the last
						   look: look every beat */
	unsigned		 promote_skipped;	/* ... ticks since */
	unsigned		 promote_every;	/* ... a beat's ticks */
	unsigned long long	 sched_sent;	/* answers that delayed an
						   item, sent */
	unsigned long long	 sched_seen;	/* ... as the last promote
						   went out */
	char			*status;	/* for execq:workers; NULL */
	char			*lost_cb;	/* item_lost_template() */
	unsigned long long	 reconnects;
	struct event		*ev_read_retry;
	struct event		*ev_flush;
	struct event		*ev_unblock;
	struct sentinel_watch	*watch;		/* +switch-master; NULL */
	unsigned		 timeout_ms;	/* a command unanswered that
						   long: a stall */
	int			 replica;	/* ROLE or READONLY says so */
	char			 refused[128];	/* Redis refused our last
						   write: why; "" if not */
	long long		 skew_ms;	/* Redis's clock less ours */
	int			 skewed;	/* our clock is a minute or
						   more off Redis's */
};

/* shard.c: replies to other shards (cluster mode) */
void	queue_shards_init(struct queue *q);
void	queue_shards_free(struct queue *q);
/* Replies delivered (added to their streams) by this worker. */
unsigned long long	queue_shards_delivered(const struct queue *q);

/* conn.c */
void	queue_kick(struct qconn *c);
/* The login on rc: AUTH with the URL's user and password, else PING. */
void	queue_login(struct queue *q, struct rconn *rc, rconn_reply_cb cb,
	    void *arg);
/* Keeps a CLUSTER SLOTS reply as q's map (host: for nodes that name
   none); -1 and the old map kept if it is not one. */
int	queue_map_set(struct queue *q, const redisReply *reply,
	    const char *host);
/* ROLE counted n replicas of the primary: wait for them, or go without. */
void	queue_replicas_seen(struct queue *q, long long n);
void	queue_create_groups(struct queue *q);
int	queue_numeric(const char *host);
void	queue_connect(struct qconn *c);
/* cb hears of every connect and disconnect of c. */
void	queue_conn_init(struct queue *q, struct qconn *c, const char *name,
	    queue_conn_cb cb);
void	queue_conn_release(struct qconn *c);
/*
 * The primary moved, or this one is no longer it (why, for the log):
 * both connections are dropped (what was in flight is sent again) and
 * made again, the sentinels asked anew. Safe inside reply callbacks.
 */
void	queue_conn_switch(struct queue *q, const char *why);
/* 1 (and a switch) if r is Redis refusing a write as a replica. */
int	queue_readonly(struct queue *q, const void *r);
/* ROLE on the write connection: not the primary any more, a switch. */
void	queue_role_beat(struct queue *q);
/* Listens to the sentinels of a Sentinel URL; and stops. */
void	queue_follow(struct queue *q);
void	queue_unfollow(struct queue *q);
/* How long c has waited for an answer now (ms; 0: nothing waits). */
long long	queue_conn_wait(const struct qconn *c, long long now);
/* ... and the longest wait that is not a stall. */
long long	queue_conn_limit(const struct qconn *c);

/* outbox.c */
/* The write connection went down: what waited for replicas goes again. */
void	queue_unack_all(struct queue *q);
/* 1 if this life started item id from entry_id (queue_started). */
int	queue_ran(const struct queue *q, const char *item_id,
	    const char *entry_id);
void	queue_cmd_init(struct qcmd *cmd);
void	queue_cmd_release(struct qcmd *cmd);
/* Appends s (a string), or len bytes of s, or a printf-made argument. */
void	queue_arg(struct qcmd *cmd, const char *s);
void	queue_argn(struct qcmd *cmd, const char *s, size_t len);
void	queue_argf(struct qcmd *cmd, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
struct qreq *	queue_req_new(int argc, const char **argv, const size_t *len);
/* Which of argv are keys (Redis Cluster's reading): [*first, +*n). */
void	queue_key_args(int argc, const char *const *argv, int *first,
	    int *n);
/* Names cmd's keys for a cluster (cluster_tag with the queue's name). */
void	queue_cmd_tag(struct queue *q, struct qcmd *cmd);
/* A request of cmd (copied), which is released. */
struct qreq *	queue_cmd_req(struct qcmd *cmd);
struct qreq *	queue_nospool(struct qreq *r);
void	queue_req_free(struct qreq *r);
unsigned	queue_spool_out(struct queue *q);
/* Logs the answers neither confirmed by Redis nor spooled (freeing). */
void	queue_log_unsaved(struct queue *q);
void	queue_flush_retry_cb(evutil_socket_t fd, short what, void *arg);
void	queue_flush(struct queue *q);
void	queue_push(struct queue *q, struct qreq *req);
/*
 * Any command, kept until Redis has it like an answer; cb (may be NULL)
 * gets its integer reply. cmd is copied and released.
 */
void	queue_send(struct queue *q, struct qcmd *cmd, queue_reply_cb cb,
	    void *arg);
unsigned	queue_backlog(const struct queue *q);
void	queue_spool_open(struct queue *q, const struct queue_config *cfg);

/* reader.c */
void	queue_read_retry_cb(evutil_socket_t fd, short what, void *arg);
/* The control-only read's grace is over (ev_ctl). */
void	queue_ctl_grace_cb(evutil_socket_t fd, short what, void *arg);
void	queue_read_next(struct queue *q);
/* Ends a control-only read now there is room (CLIENT UNBLOCK on wr). */
void	queue_unblock(struct queue *q);
void	queue_unblock_retry_cb(evutil_socket_t fd, short what, void *arg);
void	queue_autoclaim_cb(struct rconn *rc, redisReply *reply, void *arg);
/*
 * A one-shot read of stream entries (cmd: XREAD ... STREAMS key id,
 * XRANGE or XREVRANGE; COUNT at most QUEUE_READ_MAX), not kept across
 * reconnects: -1 when Redis is away (no callback). cmd is released. cb
 * gets the entries, borrowed for the call (n may be 0), or failed = -1
 * (an error reply or a lost connection). Never called after queue_free().
 */
int	queue_read(struct queue *q, struct qcmd *cmd, queue_read_cb cb,
	    void *arg);

#endif
