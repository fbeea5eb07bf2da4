#ifndef EXECQ_BACKLOG_H
#define EXECQ_BACKLOG_H

/*
 * A queue's backlog as Redis shows it now, for the worker's /metrics
 * (asynchronous, on the queue's write connection) and for `execq queues`
 * (synchronous, on the client's rconn): per lane, the items waiting (not
 * yet delivered to the group "execq"), running (delivered, not yet
 * acknowledged) and the age of the oldest waiting one; per queue, the
 * delayed items (q:<queue>:delayed) and the dead letters
 * (q:<queue>:dead). One read, two round trips of pipelined commands:
 *
 *   1. TIME, ZCARD delayed, XLEN dead; per lane XLEN and XINFO GROUPS
 *   2. per lane with items waiting: XRANGE lane (<last-delivered> + COUNT 1
 *
 * waiting is the group's lag (Redis 7); where Redis gives none (before
 * 7.0, or an entry deleted after the group's last delivery) it is XLEN
 * minus the group's pending count, exact because the worker deletes
 * every entry it acknowledges. running is the group's pending count (what
 * XPENDING counts). A lane that does not exist counts 0; a lane with no
 * group yet counts every entry as waiting. Ages are by Redis's clock
 * (TIME against the entry id's milliseconds), never this host's.
 */

#include <stddef.h>

struct json_t;
struct queue;
struct rconn;
struct redisReply;

/* One lane: a stream q:<queue>:<name>. Plain data. */
struct backlog_lane {
	char			*key;		/* q:<queue>:<name> */
	char			*name;		/* "normal", "alice.normal" */
	unsigned long long	 waiting, running;
	double			 oldest_age_s;	/* the oldest waiting item's
						   age; 0: none waits */
	/* What the first round found (backlog_record). */
	long long		 len;		/* XLEN */
	int			 grouped;	/* the group "execq" exists */
	long long		 lag;		/* -1: Redis gave none */
	char			 last_id[50];	/* "(" and its last-delivered-id:
						   XRANGE's start after it */
};

/* A queue's backlog. Plain data; the read's results once it is done. */
struct backlog {
	char			*queue;
	char			*delayed_key, *dead_key;
	struct backlog_lane	*lanes;
	size_t			 nlanes;
	unsigned long long	 delayed, dead;
	long long		 now_ms;	/* Redis's TIME at the read */
	int			 failed;	/* a reply was missing or an
						   error: error says which */
	char			 error[160];
	size_t			*second;	/* lanes read in round 2 */
	size_t			 nsecond;
	struct backlog_async	*async;		/* the read under way */
};

/*
 * The lanes of queue: ctl, high, normal, low, then each agent's
 * (<agent>.<lane>, in the same order) for the names in agents (split by
 * spaces or commas; NULL: none), the lanes a worker with that `agents`
 * setting reads. Never NULL.
 */
struct backlog	*backlog_create(const char *queue, const char *agents);
/* NULL ok; a read under way calls no one back. */
/*
 * Names its keys for a Redis Cluster (cluster_tag: the queue as their
 * hash tag); again is harmless. backlog_read does it itself.
 */
void		 backlog_cluster(struct backlog *);
void		 backlog_free(struct backlog *);

/* One command: argv borrowed from the backlog, valid until it changes. */
#define BACKLOG_ARGC_MAX	8
struct backlog_cmd {
	int		 argc;
	const char	*argv[BACKLOG_ARGC_MAX];
	size_t		 len[BACKLOG_ARGC_MAX];
};
/* The commands of round (0 or 1); round 1 is known once 0 is recorded. */
size_t		 backlog_ncommands(const struct backlog *, int round);
void		 backlog_command(const struct backlog *, int round, size_t i,
		    struct backlog_cmd *);
/* Starts a read: forgets the last one's results. */
void		 backlog_begin(struct backlog *);
/*
 * The reply (borrowed; NULL: none came) of command i of round. After the
 * last of round 0, the counts are known and round 1's commands too.
 */
void		 backlog_record(struct backlog *, int round, size_t i,
		    const struct redisReply *);

/* The parts, for tests. */
struct backlog_group {
	int		 found;
	long long	 pending;
	long long	 lag;		/* -1: nil or absent (Redis < 7) */
	char		 last_id[48];
};
/* The group name's row of an XINFO GROUPS reply. 0, or -1: not a reply. */
int		 backlog_parse_groups(const struct redisReply *,
		    const char *name, struct backlog_group *);
/* The milliseconds of a stream entry id ("1700000000000-3"); -1: bad. */
long long	 backlog_id_ms(const char *id);
/* Seconds from then_ms to now_ms, 0 if not after. */
double		 backlog_age_s(long long then_ms, long long now_ms);

/*
 * Reads on a synchronous rconn (the client's). 0, or -1 when the
 * connection failed (rconn_errstr). An error reply sets failed.
 */
int		 backlog_read_sync(struct backlog *, struct rconn *);

/*
 * Reads on the queue's write connection (the worker's). cb is called once
 * when the read is done or failed (b->failed), never on the caller's
 * stack, never after queue_free or backlog_free. -1 (no callback) when
 * Redis is away or a read is under way.
 */
typedef void (*backlog_done_cb)(struct backlog *, void *arg);
int		 backlog_read(struct backlog *, struct queue *,
		    backlog_done_cb, void *arg);

/*
 * {"queue": ..., "lanes": [{"lane", "waiting", "running",
 * "oldest_age_s"}...], "delayed": n, "dead": n}: a new reference.
 */
struct json_t	*backlog_to_json(const struct backlog *);

#endif
