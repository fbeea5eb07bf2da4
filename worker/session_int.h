#ifndef EXECQ_SESSION_INT_H
#define EXECQ_SESSION_INT_H

/*
 * Private to worker/session*.c: the session module (worker/session.h) in
 * two files, the upper one using the lower, never the other way:
 *
 *   session.c      a session's life: the registry, start, its output,
 *                  its end and EXEC_CALLBACK, pruning, and its mirror in
 *                  Redis (the calls into queue/store.c)
 *   session_act.c  the PROCESS actions on sessions (list, poll, log,
 *                  write, send-keys, kill, wait), the polls and waits
 *                  held until output or the end, the offline reads of
 *                  <id>.log and <id>.json, held items' answers, tokens
 *
 * Both use worker/waiting.h, below them: session.c makes a running
 * session's watch and hears when it waits for input; its output, and
 * session_act.c's write and send-keys, tell the watch (waiting_activity).
 *
 * session.c calls down: session_wake (output, the end),
 * session_waiters_free (a session forgotten), sessions_has (a duplicate
 * id); session_act.c reads
 * the structs below and calls nothing in session.c. Every function keeps
 * the module's prefix, session_ (sessions_ for the public ones).
 */

#include <sys/queue.h>
#include <sys/types.h>

#include <stdint.h>

#include <jansson.h>

#include "logs/token.h"
#include "queue/item.h"
#include "worker/session.h"

struct config;
struct event;
struct event_base;
struct holder_link;
struct exec;
struct live;
struct metrics;
struct queue;
struct syncer;
struct shell;
struct waiter;			/* a held poll or wait (session_act.c) */
struct waiting;			/* worker/waiting.h */

/* One background or PTY session, running or ended (kept a while). */
struct session {
	LIST_ENTRY(session)	 entry;
	struct sessions		*ss;
	char			*id, *item_id, *command, *reply_to, *log_path;
	struct exec		*ex;		/* NULL once ended */
	pid_t			 pid;
	int			 pty;
	unsigned		 tail_lines;
	int64_t			 started_ms, ended_ms;
	int			 keep;		/* args.keep */
	int64_t			 mirrored_ms;	/* last_activity_ms as the
						   mirror has it */
	unsigned long long	 output_bytes;
	json_t			*final;		/* the callback, once ended */
	struct item_session_status status;	/* running, or how it ended */
	long long		 serial;	/* names it in a fence check */
	char			 token[TOKEN_LEN + 1];	/* its holder may act on it */
	struct live		*live;		/* execq:out:<id> */
	struct waiting		*wait;		/* looks for a prompt while it
						   runs; NULL: not looking */
	LIST_HEAD(, waiter)	 waiters;
	struct shell		*shell;		/* args.shell; NULL: none */
	int			 tier;		/* ... the policy tier its
						   commands are classified at */
	char			*acted_before;	/* adopted: the last exec,
						   write or send-keys an
						   earlier worker carried out */
};

/* The registry: this worker's sessions. */
struct sessions {
	struct event_base	*base;
	struct queue		*q;
	const struct config	*cfg;
	LIST_HEAD(, session)	 list;
	unsigned		 nrunning, nended;
	sessions_slot_cb	 slotcb;
	void			*arg;
	sessions_held_cb	 heldcb;	/* list: held items */
	void			*heldarg;
	long long		 serial;	/* the last session's */
	struct event		*ev_tick;	/* mirrors activity, each
						   second while any runs */
	struct syncer		*syncer;	/* reads logs off the loop */
	struct metrics		*metrics;	/* NULL: none */
	struct proxy		*proxy;		/* grants end with a session;
						   NULL: none */
	struct holder_link	*holder;	/* keeps them through a
						   restart; NULL: none */
};

/*
 * session_act.c. Output or the end of s: a wait is answered once s
 * ended; a poll reads again (it waits on if the read finds nothing new).
 */
void	session_wake(struct session *);
/* Drops s's held polls and waits unanswered (s is being forgotten). */
void	session_waiters_free(struct session *);

#endif
