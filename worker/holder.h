#ifndef EXECQ_HOLDER_H
#define EXECQ_HOLDER_H

/*
 * Sessions that outlive the worker (setting hold_sessions). The process
 * execq-worker starts as becomes a small holder: a subreaper that starts
 * the worker as its child (the binary on disk again, so an upgrade takes
 * effect) and keeps, for every running session, a copy of its output
 * and input fds (passed with SCM_RIGHTS as the session starts) and what
 * the next worker needs to know of it. The sessions' processes are its
 * descendants: when the worker dies they become its children, and it
 * reaps them and keeps how they ended.
 *
 * When the worker ends, by SIGUSR2 (it hands over and exits) or by a
 * crash, the holder starts the next one at once (after a crash, with a
 * backoff), which adopts the sessions: their fds, their cgroup leaves,
 * their logs from where they stopped. SIGTERM and SIGINT go to the
 * worker, which ends its sessions as always; then the holder exits with
 * its status. A worker that fails before it is up the first time (a bad
 * config) is not started again: the holder exits with its status.
 *
 * The two talk over a SOCK_SEQPACKET pair: one JSON object a message,
 * with its fds. Worker to holder: hold (a new session: its record and
 * fds), state (the record's fields that changed), input_closed, exited
 * (reaped by the worker before a hand-over), drop (it ended: forget it),
 * up, leave (about to exit for the next worker).
 * Holder to worker: adopt (a record with its fds, and how it ended if it
 * did meanwhile) for each one held, then end; later exited (an adopted
 * session's main process, reaped by the holder).
 */

#include <sys/resource.h>
#include <sys/types.h>

#include <stddef.h>

struct event_base;
struct holder_link;
struct json_t;

/*
 * Runs the holder for the worker's argv (the config was checked: the
 * same argv starts each worker). Returns the exit code for main.
 */
int		 holder_main(char **argv);

/* A session held for the worker to adopt, as read at start. */
struct holder_record {
	struct json_t	*state;		/* the record, as last sent */
	int		 fds[3];	/* out (or the PTY), err, in; -1 */
	int		 exited;	/* it ended while no worker ran */
	int		 status;	/* ... its wait status */
	struct rusage	 ru;
};

/*
 * The worker's end, from EXECQ_HOLDER (then unset), with the records of
 * the sessions to adopt read already; NULL when there is no holder.
 */
struct holder_link *holder_link_open(void);
void		 holder_link_free(struct holder_link *);	/* NULL ok */
/* The holder's pid: it names the consumer and the cgroup folder. */
long		 holder_link_pid(const struct holder_link *);
/* The records read at start: n of them (the fds are the caller's). */
struct holder_record *holder_link_records(struct holder_link *, size_t *n);
/* The highest cgroup leaf index among the records, plus 1 (0: none). */
unsigned	 holder_link_leaves(const struct holder_link *);
/*
 * Says the worker is up, and watches for the exits the holder reports
 * (they go to exec_reaped).
 */
int		 holder_link_up(struct holder_link *, struct event_base *);
/* A new session: its record (borrowed) and fds (-1: none; copied). */
void		 holder_link_hold(struct holder_link *, const char *id,
		    struct json_t *state, const int fds[3]);
/* Fields of its record that changed (borrowed). */
void		 holder_link_state(struct holder_link *, const char *id,
		    struct json_t *fields);
/* Its input was closed: the holder closes its copy (EOF for it). */
void		 holder_link_input_closed(struct holder_link *,
		    const char *id);
/*
 * Its main process was reaped by this worker, but it is handed over
 * unfinished (its output still open): the holder keeps it as exited
 * (its pid is no session's any more), and the next worker is told.
 */
void		 holder_link_exited(struct holder_link *, const char *id,
		    int status, const struct rusage *);
/* It ended and was collected: the holder forgets it. */
void		 holder_link_drop(struct holder_link *, const char *id);
/* About to exit for the next worker, which the holder starts at once. */
void		 holder_link_leave(struct holder_link *);

#endif
