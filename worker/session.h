#ifndef EXECQ_SESSION_H
#define EXECQ_SESSION_H

/*
 * Background and PTY sessions: the registry (running ones, and finished
 * ones for session_ttl_s, at most session_keep), their mirror in Redis,
 * their live output stream, their EXEC_CALLBACK, and the process-manager
 * actions on them. Two files: session.c (a session's life) over
 * session_act.c (the actions); worker/session_int.h says more.
 */

#include <stddef.h>

#include "logs/errcode.h"

struct config;
struct event_base;
struct item;
struct item_held;
struct queue;
struct syncer;
struct json_t;
struct proxy;
struct sessions;

/*
 * The answer to a PROCESS action, JSON text borrowed for the call. A
 * code other than ERR_NONE means an ERROR answer with that code and the
 * message json.
 */
typedef void (*sessions_answer_cb)(enum errcode code, const char *json,
    size_t len, void *arg);
/* A session ended: a process slot is free again. */
typedef void (*sessions_slot_cb)(void *arg);

/*
 * syncer (may be NULL: then at once) reads logs for poll and log off the
 * loop; it must outlive the sessions' answers, and on shutdown hand back
 * unanswered reads with ECANCELED (syncer_free does).
 */
struct sessions	*sessions_create(struct event_base *, struct queue *,
		    const struct config *, struct syncer *, sessions_slot_cb,
		    void *arg);
/* Forgets everything; running sessions must have ended. NULL ok. */
void		 sessions_free(struct sessions *);
/* Running sessions (they hold process slots). */
unsigned	 sessions_running(const struct sessions *);
/* Ended sessions still kept (for poll, log, wait). */
unsigned	 sessions_ended(const struct sessions *);
/* Where ended sessions and their callbacks are counted (borrowed). */
struct metrics;
void		 sessions_set_metrics(struct sessions *, struct metrics *);
/*
 * Sessions that outlive the worker (worker/holder.h): each one started
 * from now on is held by hl (borrowed; NULL: none).
 */
struct holder_link;
void		 sessions_set_holder(struct sessions *, struct holder_link *);
/*
 * Takes over the sessions the holder kept from an earlier worker: how
 * many (each failure is logged, and that session is ended by the holder
 * once this worker is up... or left to it).
 */
unsigned	 sessions_adopt(struct sessions *);
/* Shell sessions running a command now (a hand-over waits for them). */
unsigned	 sessions_shells_busy(const struct sessions *);
/*
 * SIGUSR2: the running sessions go on under the holder, for the next
 * worker; this one forgets them (nothing signalled, no callback).
 */
void		 sessions_leave(struct sessions *);
/* Ends every running session (killed_by shutdown). */
void		 sessions_kill_all(struct sessions *);
/*
 * Our lease had lapsed: kills the running sessions that another worker
 * declared lost meanwhile (their one callback went out already).
 */
void		 sessions_fence(struct sessions *);
/* 1 if it carries this worker's operator token. */
int		 sessions_operator(const struct config *, const struct item *);
/*
 * Redis is back (maybe restarted without its data): the running sessions'
 * mirror and their place in execq:running are written again, so they are
 * still found, and declared lost if this worker dies.
 */
void		 sessions_remirror(struct sessions *);

/*
 * Starts item (claimed, checked) as a session in cwd with envp (both
 * borrowed), confined with network or not and the approved outside path
 * grant (or NULL). Returns the EXEC_STARTED answer (allocated), with the
 * session's token, and in *kept the same without it (what Redis keeps as
 * the item's answer), or NULL with *code and an allocated *cause.
 */
char		*sessions_start(struct sessions *, const struct item *,
		    const char *cwd, char *const *envp, int network,
		    const char *proxy_url, const char *grant, size_t *len,
		    char **kept, size_t *kept_len, enum errcode *code,
		    char **cause);
/* The proxy whose grant (by session id) ends with each session. */
void		 sessions_set_proxy(struct sessions *, struct proxy *);
/*
 * 1 if session id is known here (running or finished), else 0: then the
 * worker forwards the action to the owner.
 */
int		 sessions_has(struct sessions *, const char *id);
/* 1 if it may act on its session here (the session's token, or an
   operator's). */
int		 sessions_may(struct sessions *, const struct item *);
/*
 * A shell session's policy context: the tier its commands are classified
 * at (set as it starts), and its cwd now (allocated, NULL if unknown).
 * -1 if id is no shell session here.
 */
void		 sessions_shell_set_tier(struct sessions *, const char *id,
		    int tier);
int		 sessions_shell_context(struct sessions *, const char *id,
		    int *tier, char **cwd);
/*
 * Carries out a PROCESS item; cb answers it, now or later (poll with
 * wait_ms, wait). The item is borrowed for this call only.
 */
void		 sessions_act(struct sessions *, const struct item *,
		    sessions_answer_cb, void *arg);

/*
 * log, poll and wait on a session no worker knows any more (forgotten, or
 * run before a restart), from the files in this worker's log dir: <id>.log
 * and <id>.json for how it ended. 0 when answered, -1 if there is no such
 * log here.
 */
int		 sessions_act_offline(struct sessions *, const struct item *,
		    sessions_answer_cb, void *arg);

/*
 * Answers a PROCESS item on a held item (queue/item.h, borrowed): poll,
 * log and wait get its state at once (nothing has run, so no output;
 * wait does not wait for a human), write, send-keys and kill the error
 * "held".
 */
void		 sessions_act_held(const struct item *,
		    const struct item_held *, sessions_answer_cb,
		    void *arg);
/*
 * Items held here, shown by "list" with the sessions: the callback
 * appends an item_held_to_json() entry to the JSON array for each.
 */
typedef void (*sessions_held_cb)(struct json_t *array, void *arg);
void		 sessions_on_held(struct sessions *, sessions_held_cb, void *);
/*
 * Mirrors a held item to execq:session:<id> and execq:sessions (so
 * "execq ps" shows it and PROCESS items reach this worker), or, with
 * drop (an approved item that runs in the foreground), removes it.
 */
void		 sessions_mirror_held(struct sessions *,
		    const struct item_held *, const char *reply_to,
		    int drop);

#endif
