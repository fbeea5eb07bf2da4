#ifndef EXECQ_WORKER_H
#define EXECQ_WORKER_H

/*
 * The worker: wires the queue to exec. It takes items while it has free
 * process slots, checks them (parse, gate, cwd, env), claims them
 * (idempotency), runs them and answers; SIGCHLD, SIGTERM and SIGINT are
 * handled here and only here. Its files: worker/worker_int.h.
 */

#include <stdio.h>

struct config;
struct event_base;
struct worker;

/* NULL (logged) when the log dir or the exec module cannot be set up. */
struct worker	*worker_create(struct event_base *, const struct config *);
/*
 * --check-confinement: probes every layer of the boundary, prints one line
 * each to f, and returns 0 when all are on, else 1. Changes nothing: a
 * missing workspace or tmp dir is stood in for by a temporary one, and
 * no dead worker's cgroups are swept (worker/boundary.c).
 */
int		 worker_check_confinement(const struct config *, FILE *f);
/* Frees everything; running processes are killed. NULL ok. */
void		 worker_free(struct worker *);

#endif
