#ifndef EXECQ_WORKER_INT_H
#define EXECQ_WORKER_INT_H

/*
 * Private to worker/: the worker module in several files, as the queue's
 * (queue/queue_int.h) and the classifier's (policy/cls.h) are. Nothing
 * outside worker/ includes this; worker/worker.h is the module's face.
 *
 * The files, parts below the driver (none calls back up into worker.c;
 * where a part must reach it, it is given a function pointer):
 *
 *   job.c       a job's states and its slot (worker_job_move), the want
 *               the queue is told, and the one way a job ends
 *               (worker_drop, worker_finish, worker_fail); the audit line
 *   admit.c     the gate, the limits, the tier and the policy's decision
 *   attempt.c   delays, retries and dead letters: an item's attempts
 *   held.c      held items: the approval's bookkeeping and the memory of
 *               the ones that ended without running
 *   boundary.c  start-up: the dirs, the boundary, tier auto, the policy
 *               the worker classifies with; --check-confinement
 *   publish.c   what the worker shows: /metrics, /healthz, the registry
 *   signals.c   SIGCHLD, SIGHUP, SIGTERM/SIGINT and the shutdown steps
 *   worker.c    the driver: one item from delivery to its answer, and
 *               the wiring (worker_create, worker_free)
 *
 * Depends one way: worker.c -> signals.c -> held.c, publish.c -> job.c;
 * admit.c, attempt.c -> job.c; boundary.c alone.
 */

#include <sys/queue.h>

#include <stdio.h>

#include "exec/confine.h"
#include "exec/exec.h"
#include "logs/token.h"
#include "policy/classify.h"
#include "policy/decide.h"
#include "queue/queue.h"
#include "queue/rurl.h"
#include "worker/approval.h"
#include "worker/status.h"

struct approvals;
struct audit;
struct cgroup_pool;
struct config;
struct event;
struct holder_link;
struct event_base;
struct http;
struct item;
struct item_held;
struct json_t;
struct live;
struct metrics;
struct queue;
struct queue_entry;
struct sessions;
struct syncer;

/*
 * A job's states; worker_job_move is the only thing that changes one,
 * and with it the slot count, njobs and the want the queue is told.
 *
 *   NEW -> CHECKING (a work lane) or CONTROL (a control lane)
 *   CHECKING -> CONTROL (a PROCESS item), CLAIMING, ENDED
 *   CLAIMING -> PARKED, RUNNING, ENDED
 *   PARKED -> RUNNING (approved), ENDED
 *   CONTROL, RUNNING -> ENDED
 */
enum job_state {
	JOB_NEW = 0,	/* allocated, not counted yet */
	JOB_CHECKING,	/* delivered: parsed, checked, classified; a slot */
	JOB_CONTROL,	/* a PROCESS item, or a control lane's entry: acted
			   on here or forwarded; no slot */
	JOB_CLAIMING,	/* Redis says whether the id may run; a slot */
	JOB_PARKED,	/* held for approval (j->approval); no slot */
	JOB_RUNNING,	/* its command (j->ex) or its session starts and
			   runs; a slot */
	JOB_ENDED,	/* answered or let go: unlinked, freed at once */
};

/* One accepted stream entry, from delivery until its answer is queued. */
struct job {
	LIST_ENTRY(job)	 entry;
	struct worker	*w;
	enum job_state	 state;		/* worker_job_move only */
	char		*stream, *entry_id;
	char		*owner;		/* from an agent's lane: the agent */
	char		*owner_reply;	/* ... and its default reply queue */
	struct item	*item;
	char		*cwd;
	char		**envp;
	struct exec	*ex;		/* RUNNING, foreground */
	char		 token[TOKEN_LEN + 1];	/* ... its session token: sent once in
					   its answer, kept in <id>.json */
	enum cls_tier	 tier;
	struct decision	 dec;		/* the policy's (policy/decide.h) */
	struct approval	*approval;	/* PARKED */
	char		*request;	/* approved: the request id */
	char		*approved_by;
	char		*grant;		/* dec.grant_path, once approved:
					   exec_grant_record's record of
					   the path since it was held */
	char		*proxy_url;	/* its credential at the proxy (its
					   dec.domains), once started; NULL */
	long long	 received_us;	/* delivered (monotonic) */
	struct live	*live;		/* args.stream: execq:out:<id> */
	unsigned long long out_bytes[3];	/* ... per fd, for its end */
	char		*claim_id;	/* claimed by the read, for us, and
					   not used yet: let go of it if the
					   item never runs; else NULL */
	unsigned	 attempt;	/* which run of the item: 1, 2, ... */
	int		 waited;	/* back from the delayed set */
	const char	*retry_end;	/* the last attempt's why (static) */
	int		 dead;		/* its answer ends its attempts: the
					   entry joins the dead letters */
	char		*body;		/* a cancel: the item, to forward;
					   with limits, the item as read */
	size_t		 body_len;
	int		 limited;	/* holds a place among the queue's
					   max_running (attempt.c) */
	void		(*limit_go)(struct job *);	/* once it may */
	struct event	*ev_limit;	/* approved, waits for the limits */
};

#define WORKER_OWNER_REPLIES	"replies"	/* <agent>.replies */
#define WORKER_HELD_KEEP	64	/* ended held items remembered */
#define WORKER_SPARE_MAX	64	/* files made ahead, at most */

/* An item whose approval request ended without running it (held.c). */
struct held_end {
	char		*id, *state, *request, *command, *risk, *rule, *reason,
			*by;
	long long	 created_ms, expires_ms;
};

struct worker {
	struct event_base	*base;
	const struct config	*cfg;
	struct exec_config	 ecfg;
	struct rurl		 url;
	struct queue		*q;
	struct sessions		*sessions;
	struct approvals	*approvals;
	struct proxy		*proxy;		/* the egress proxy; NULL:
						   none could be made */
	char			**net_domains;	/* network_domains, split */
	char			**agents;	/* agents, split */
	unsigned		 limit_running;	/* queue_limits: 0: none */
	double			 limit_rate;	/* ... a second; 0: none */
	int			 limit_wait;	/* over them: take nothing */
	struct event		*ev_limit;	/* ... until this fires */
	struct item_retry	*retry;		/* the queue's default; NULL */
	char			**net_private;	/* network_private_hosts */
	struct audit		*audit;
	LIST_HEAD(, job)	 jobs;
	unsigned		 njobs;		/* all jobs */
	unsigned		 nslots;	/* ... of them holding a slot */
	int			 stopping;
	int			 retired;	/* worker key deleted */
	enum cls_tier		 tier;		/* the queue's, auto resolved */
	const char		*tier_name;
	struct cls_policy	 policy;	/* the config's; when confined,
						   read_paths count as inside */
	char			**allow;	/* policy.allow_paths, owned */
	struct event		*ev_chld, *ev_term, *ev_int;
	struct event		*ev_stop;	/* shutdown steps */
	long long		 stop_deadline_ms;	/* then exit anyway */
	int			 logs_broken;	/* no log can be written */
	struct event		*ev_logs;	/* ... so look again */
	struct syncer		*syncer;	/* fsyncs logs and the spool */
	struct cgroup_pool	*pool;		/* exec's; NULL: none */
	struct held_end		 ended[WORKER_HELD_KEEP];	/* a ring */
	unsigned		 nended;
	struct metrics		*metrics;
	struct http		*http;		/* NULL: no side door */
	struct event		*ev_hup;	/* reopen the logs */
	struct event		*ev_usr2;	/* hand over to the holder */
	struct holder_link	*holder;	/* NULL: no holder */
	int			 handover;	/* SIGUSR2: stopping for the
						   next worker */
	long long		 started_ms;	/* wall clock */
	char			 host[256];
	struct status_layer	 layers[STATUS_MAX_LAYERS];
	int			 nlayers;
	int			 confined;	/* every layer on */
};

/* The layers of the boundary, all of them, for the self-check. */
struct worker_boundary {
	struct confine		*confine;
	struct cgroup_pool	*pool;
	struct confine_layer	 layers[CONFINE_NLAYERS + 2];
	int			 n;
	int			 full;		/* every layer is on */
};

/* job.c */
/*
 * A new job for the stream entry e, linked and counted: CHECKING, or
 * CONTROL from a control lane. The slot it takes was counted by the queue
 * as it delivered e, so the queue is not told again.
 */
struct job	*worker_job_create(struct worker *,
		    const struct queue_entry *e);
/*
 * The one place a job changes state (fatal on a move the list above does
 * not have): the slot is taken or given back, and the queue told; every
 * end tells it too. ENDED unlinks the job; its caller frees it.
 */
void		 worker_job_move(struct job *, enum job_state);
/* Frees a job's memory (it is unlinked already). */
void		 worker_job_free(struct job *);
/* Tells the queue how many more items fit. */
void		 worker_update_want(struct worker *);
/*
 * A log could not be made: if none can be written in the log dir, stop
 * taking items until one can (ev_logs, signals.c, looks again each second).
 */
void		 worker_check_logs(struct worker *);
/*
 * The reply queue for job j's answer: reply_to, else the worker's default;
 * for an agent's item, reply_to only when it is the agent's own
 * (<agent>.*), else the agent's default, <agent>.replies.
 */
const char	*worker_reply_to(const struct job *, const char *reply_to);
/* 1 if name is agent's own: "<agent>." and more. */
int		 worker_owned_name(const char *agent, const char *name);
/* The item type as metrics label it. */
const char	*worker_type_label(const struct job *);
/* An answer (code "ok", or an ERROR's) was queued for job j. */
void		 worker_answered(struct job *, enum errcode code);
/*
 * The ways a job ends, the only ones. drop: forgets it (its entry is
 * acknowledged elsewhere, or stays pending), letting go of an unused
 * claim; finish: its answer goes out with the ack; finish_kept: the same,
 * keeping kept (the answer less its session token) as the id's answer;
 * fail: an ERROR answer. j is freed on return.
 */
void		 worker_drop(struct job *);
void		 worker_finish(struct job *, enum errcode code,
		    const char *reply_to, const char *id, enum queue_store,
		    const char *json, size_t len);
void		 worker_finish_kept(struct job *, enum errcode code,
		    const char *reply_to, const char *id, enum queue_store,
		    const char *json, size_t len, const char *kept,
		    size_t kept_len);
void		 worker_fail(struct job *, const char *reply_to,
		    const char *id, enum errcode code, const char *message,
		    enum queue_store);
/* 1 if an answer with this code means no worker can run the item. */
int		 worker_dead_code(enum errcode);
/* Job j's retry policy: its args.retry, else the queue's; NULL: none. */
const struct item_retry *worker_attempt_policy(const struct job *);
/* One line in the audit log about job j (reason NULL: the policy's). */
void		 worker_audit(struct job *, const char *event, const char *by,
		    const char *reason);

/* admit.c: each answers the job (it is freed) and returns -1 on a no. */
/* The gate and the limits; then the cwd and the environment. */
/*
 * An agent's item (from its own lane) keeps to the agent's namespace: its
 * id and reply_to begin with "<agent>."; without a reply_to it is
 * answered on <agent>.replies. 0, or -1: refused (answered).
 */
int		 worker_check_owner(struct job *);
int		 worker_check(struct job *);
/* The tier and the policy's decision (j->dec): refused is answered. */
int		 worker_classify(struct job *);
/*
 * The same for a PROCESS exec in a shell session of this worker: its
 * command at the session's tier, in its cwd; run (an audit line), or
 * refused (answered, -1). One the policy would hold is refused too.
 */
int		 worker_classify_shell(struct job *);

/* attempt.c */
/*
 * A claimed item sent with args.delay_ms or a not_before_ms still to
 * come, not back from that wait yet, waits in Redis:
 * 1 (j answered EXEC_SCHEDULED and freed), or 0: it runs now.
 */
int		 worker_attempt_defer(struct job *);
/*
 * A run of j ended so (last: its answer): 1 if another attempt follows
 * (scheduled, j answered EXEC_SCHEDULED and freed); 0: this was the last
 * (j->retry_end and j->dead say why), and the caller answers j.
 */
int		 worker_attempt_retry(struct job *, int spawn_failed,
		    int timed_out, int signal, int exit_code, const char *last,
		    size_t last_len);
/* 1 if the queue has limits job j has not passed yet. */
int		 worker_limited(const struct job *);
/*
 * Asks the queue's limits whether j may start; go(j) once it may. Over
 * them, a claimed job goes back to the front of the entries held for
 * room (its claim let go) and the worker takes nothing until the wait
 * the limits said is over (ev_limit); an approved one waits here.
 */
void		 worker_limit_take(struct job *, void (*go)(struct job *));
/* The worker's ev_limit: it takes items again. */
void		 worker_limit_open_cb(int, short, void *);
/* At each beat: the leases of the places this worker's jobs hold. */
void		 worker_limit_renew(struct worker *);
/*
 * A PROCESS cancel (job j, from entry e): the item it names, if it has
 * not run, never runs and its sender gets ERROR cancelled: held here,
 * delayed, or queued (or not sent yet: marked); one held by another
 * worker is forwarded there. j is answered (or forwarded) and freed.
 */
void		 worker_cancel(struct job *, const struct queue_entry *e);

/* held.c */
/*
 * Parks job j (already PARKED): its approval request goes out, decided
 * calls back when a human decides (worker.c's worker_decided_cb: held.c
 * reaches the driver only through this pointer). A grant's path is
 * recorded as it is now (j->dec.grant_path becomes the record).
 */
void		 worker_held_park(struct job *, approval_done_cb decided);
/*
 * The bookkeeping of a decision about j's request a (the request id, the
 * audit line, the mirror, the memory of one that did not run); the caller
 * then starts or answers the job.
 */
void		 worker_held_decided(struct job *, struct approval *a,
		    enum approval_outcome, const char *by, const char *reason);
/*
 * Ends held job j without running it (why: the audit line's reason;
 * code and message: its ERROR, store: what it does to the claim).
 */
void		 worker_held_cancel(struct job *, const char *why,
		    enum errcode code, const char *message, enum queue_store);
/* The item id as held here now, or as it ended: 0, or -1 if neither. */
int		 worker_held_find(struct worker *, const char *id,
		    struct item_held *);
/* "list" shows the items held here with the sessions (sessions.h). */
void		 worker_held_list_cb(struct json_t *, void *);
/* Shutdown: held commands are answered; they never ran. */
void		 worker_held_cancel_all(struct worker *);
/* Frees the memory of ended held items. */
void		 worker_held_release(struct worker *);

/* boundary.c */
/* Makes and checks the log and state dirs: 0, or -1 (logged). */
int		 worker_dirs(const struct config *);
/* Old logs go at start-up (running sessions' logs stay). */
void		 worker_cleanup_logs(const struct config *);
/*
 * Prepares the boundary: confinement, cgroup v2 leaves, v1 limits. probe:
 * as --check-confinement, which sweeps no dead worker's cgroups.
 * name_pid names the cgroup folder (0: this process; under a holder the
 * holder's), with at least leaves leaves (those of the sessions handed
 * over may lie past max_procs). 0, or -1 (logged) when the worker must
 * not start.
 */
int		 worker_boundary(const struct config *, const struct rurl *,
		    int probe, long name_pid, unsigned leaves,
		    struct worker_boundary *);
/*
 * The self-check at start-up: one line per layer; tier auto resolved,
 * the policy the worker classifies with set. 0, or -1 (logged): do not
 * start.
 */
int		 worker_confine_decide(struct worker *,
		    struct worker_boundary *);

/* publish.c */
/* The fleet registry's entry; now: written at once, else at the beat. */
void		 worker_publish(struct worker *, int now);
/* The HTTP side door: 0, or -1 (logged). */
int		 worker_http(struct worker *);
/* Frees what /metrics keeps of the queue's backlog (after http_free). */
void		 worker_backlog_free(void);

/* signals.c */
/* The signal events and the shutdown and log-probe timers: 0 or -1. */
int		 worker_signals(struct worker *);

#endif
