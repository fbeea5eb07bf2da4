/* The holder that keeps sessions through a worker restart, and its link. */

#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "exec/exec.h"
#include "logs/clock.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "worker/holder.h"

#define HOLDER_ENV		"EXECQ_HOLDER"	/* "<fd>:<holder pid>" */
#define HOLDER_MSG_MAX		(256 * 1024)	/* one message */
#define HOLDER_BACKOFF_MIN_MS	500		/* after a crash */
#define HOLDER_BACKOFF_MAX_MS	30000
#define HOLDER_STEADY_MS	60000		/* a life that long: the
						   backoff starts over */
#define HOLDER_KILL_WAIT_MS	5000		/* sessions killed: reaped
						   within this, or left */

static const char *const holder_roles[3] = { "out", "err", "in" };

/* Sends msg with the fds that are not -1 (their roles in "fds"). */
static int
holder_send(int sock, json_t *msg, const int fds[3])
{
	struct msghdr	 mh;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	union {
		char		buf[CMSG_SPACE(3 * sizeof (int))];
		struct cmsghdr	align;
	} u;
	json_t		*roles;
	char		*text;
	int		 pass[3], n = 0, i, rc;

	roles = json_array();
	for (i = 0; fds != NULL && i < 3; i++) {
		if (fds[i] == -1)
			continue;
		pass[n++] = fds[i];
		json_array_append_new(roles, json_string(holder_roles[i]));
	}
	json_object_set_new(msg, "fds", roles);
	if ((text = json_dumps(msg, JSON_COMPACT)) == NULL)
		fatal("out of memory (json)");
	memset(&mh, 0, sizeof mh);
	iov.iov_base = text;
	iov.iov_len = strlen(text);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (n > 0) {
		memset(&u, 0, sizeof u);
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(n * sizeof (int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n * sizeof (int));
		memcpy(CMSG_DATA(cm), pass, n * sizeof (int));
	}
	do
		rc = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (rc == -1 && errno == EINTR);
	free(text);
	return (rc == -1 ? -1 : 0);
}

/*
 * One message, its fds by role in fds[3] (-1: none; the caller's). NULL
 * at the end (errno 0), on an error, or (flags MSG_DONTWAIT) with EAGAIN
 * when there is none yet.
 */
static json_t *
holder_recv(int sock, int fds[3], int flags)
{
	struct msghdr	 mh;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	union {
		char		buf[CMSG_SPACE(3 * sizeof (int))];
		struct cmsghdr	align;
	} u;
	json_t		*msg, *roles;
	/* One thread of each process reads its link: one buffer, kept. */
	static char	 buf[HOLDER_MSG_MAX];
	int		 got[3], ngot = 0, i, k;
	ssize_t		 n;

	fds[0] = fds[1] = fds[2] = -1;
	memset(&mh, 0, sizeof mh);
	iov.iov_base = buf;
	iov.iov_len = HOLDER_MSG_MAX;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof u.buf;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
	while (n == -1 && errno == EINTR);
	if (n <= 0) {
		if (n == 0)
			errno = 0;
		return (NULL);
	}
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		ngot = (cm->cmsg_len - CMSG_LEN(0)) / sizeof (int);
		if (ngot > 3)
			ngot = 3;
		memcpy(got, CMSG_DATA(cm), ngot * sizeof (int));
	}
	msg = json_loadb(buf, n, 0, NULL);
	roles = json_object_get(msg, "fds");
	for (i = 0; i < ngot; i++) {
		const char *r = json_string_value(json_array_get(roles, i));

		for (k = 0; r != NULL && k < 3; k++)
			if (strcmp(r, holder_roles[k]) == 0 && fds[k] == -1)
				break;
		if (r != NULL && k < 3)
			fds[k] = got[i];
		else
			close(got[i]);
	}
	if (msg == NULL) {
		for (i = 0; i < 3; i++)
			if (fds[i] != -1)
				close(fds[i]);
		errno = EPROTO;
		return (NULL);
	}
	json_object_del(msg, "fds");
	return (msg);
}

/* A wait status as a message's fields. */
static void
holder_status_set(json_t *msg, int status, const struct rusage *ru)
{
	json_object_update_new(msg, json_pack("{s:i, s:I, s:I, s:I}",
	    "status", status,
	    "utime_us", (json_int_t)(ru->ru_utime.tv_sec * 1000000LL +
	    ru->ru_utime.tv_usec),
	    "stime_us", (json_int_t)(ru->ru_stime.tv_sec * 1000000LL +
	    ru->ru_stime.tv_usec),
	    "maxrss", (json_int_t)ru->ru_maxrss));
}

/* ... and back. */
static void
holder_status_get(json_t *msg, int *status, struct rusage *ru)
{
	long long	u, s;

	memset(ru, 0, sizeof *ru);
	*status = (int)json_integer_value(json_object_get(msg, "status"));
	u = json_integer_value(json_object_get(msg, "utime_us"));
	s = json_integer_value(json_object_get(msg, "stime_us"));
	ru->ru_utime.tv_sec = u / 1000000;
	ru->ru_utime.tv_usec = u % 1000000;
	ru->ru_stime.tv_sec = s / 1000000;
	ru->ru_stime.tv_usec = s % 1000000;
	ru->ru_maxrss = json_integer_value(json_object_get(msg, "maxrss"));
}

/* The holder process. */

/* One session held. */
struct held {
	LIST_ENTRY(held)	 entry;
	char			*id;
	pid_t			 pid;
	json_t			*state;
	int			 fds[3];
	int			 exited;
	int			 status;
	struct rusage		 ru;
};

/* The holder: its worker, the sessions it holds, what it does next. */
struct holder {
	char			**argv;
	char			 exe[PATH_MAX];
	pid_t			 worker;	/* -1: none running */
	int			 sock;		/* to it; -1: none */
	int			 up;		/* it said up, this life */
	int			 ever_up;
	int			 leaving;	/* it said leave */
	int			 stopping;	/* TERM or INT came */
	int			 last;		/* a last worker was started to
						   end the sessions held */
	int			 sfd;		/* signalfd */
	int64_t			 restart_ms;	/* start the next then */
	int64_t			 life_ms;	/* this life started */
	unsigned		 backoff_ms;
	int			 rc;		/* to exit with */
	LIST_HEAD(, held)	 held;
};

static struct held *
holder_find_id(struct holder *h, const char *id)
{
	struct held	*s;

	LIST_FOREACH(s, &h->held, entry)
		if (id != NULL && strcmp(s->id, id) == 0)
			return (s);
	return (NULL);
}

static void
holder_forget(struct held *s)
{
	int	i;

	LIST_REMOVE(s, entry);
	for (i = 0; i < 3; i++)
		if (s->fds[i] != -1)
			close(s->fds[i]);
	json_decref(s->state);
	free(s->id);
	free(s);
}

/* A message from the worker. */
static void
holder_message(struct holder *h, json_t *msg, int fds[3])
{
	const char	*t = json_string_value(json_object_get(msg, "t"));
	const char	*id = json_string_value(json_object_get(msg, "id"));
	struct held	*s = holder_find_id(h, id);
	int		 i;

	if (t == NULL)
		t = "";
	if (strcmp(t, "hold") == 0 && s == NULL && id != NULL) {
		s = xcalloc(1, sizeof *s);
		s->id = xstrdup(id);
		s->pid = (pid_t)json_integer_value(json_object_get(msg, "pid"));
		json_object_del(msg, "t");
		s->state = json_incref(msg);
		memcpy(s->fds, fds, sizeof s->fds);
		fds[0] = fds[1] = fds[2] = -1;
		LIST_INSERT_HEAD(&h->held, s, entry);
	} else if (strcmp(t, "state") == 0 && s != NULL) {
		json_object_del(msg, "t");
		json_object_update(s->state, msg);
	} else if (strcmp(t, "input_closed") == 0 && s != NULL) {
		if (s->fds[2] != -1)
			close(s->fds[2]);
		s->fds[2] = -1;
	} else if (strcmp(t, "exited") == 0 && s != NULL) {
		/* Its pid may be another's now: never signalled, matched. */
		s->exited = 1;
		holder_status_get(msg, &s->status, &s->ru);
	} else if (strcmp(t, "drop") == 0 && s != NULL)
		holder_forget(s);
	else if (strcmp(t, "up") == 0) {
		h->up = h->ever_up = 1;
		log_info("holder: worker %ld is up", (long)h->worker);
	} else if (strcmp(t, "leave") == 0)
		h->leaving = 1;
	for (i = 0; i < 3; i++)
		if (fds[i] != -1)
			close(fds[i]);
}

/* Starts a worker and hands it the sessions held. */
static void
holder_start(struct holder *h)
{
	struct held	*s;
	json_t		*msg;
	sigset_t	 mask;
	char		 env[64];
	int		 sp[2], fd;
	pid_t		 pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET|SOCK_CLOEXEC, 0, sp) == -1) {
		log_warn("holder: socketpair: %s", strerror(errno));
		h->restart_ms = clock_mono_ms() + HOLDER_BACKOFF_MAX_MS;
		return;
	}
	if ((pid = fork()) == -1) {
		log_warn("holder: fork: %s", strerror(errno));
		close(sp[0]);
		close(sp[1]);
		h->restart_ms = clock_mono_ms() + HOLDER_BACKOFF_MAX_MS;
		return;
	}
	if (pid == 0) {
		/*
		 * The worker: dies with its holder, starts afresh. The
		 * signals the holder passes on stay blocked (pending) until
		 * the worker has its handlers (worker_signals): a SIGUSR2
		 * that came the moment it was started must be a hand-over,
		 * not its death by the default action.
		 */
		sigemptyset(&mask);
		sigaddset(&mask, SIGTERM);
		sigaddset(&mask, SIGINT);
		sigaddset(&mask, SIGHUP);
		sigaddset(&mask, SIGUSR2);
		sigprocmask(SIG_SETMASK, &mask, NULL);
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		/*
		 * A group of its own: a Ctrl-C at a terminal reaches the
		 * holder, which passes it on once, not the worker twice.
		 */
		(void)setpgid(0, 0);
		if ((fd = dup(sp[1])) == -1)	/* without CLOEXEC */
			_exit(1);
		snprintf(env, sizeof env, "%d:%ld", fd, (long)getppid());
		setenv(HOLDER_ENV, env, 1);
		execv(h->exe, h->argv);
		fprintf(stderr, "execq-worker: holder: %s: %s\n", h->exe,
		    strerror(errno));
		_exit(127);
	}
	close(sp[1]);
	h->worker = pid;
	h->sock = sp[0];
	h->up = h->leaving = 0;
	h->life_ms = clock_mono_ms();
	LIST_FOREACH(s, &h->held, entry) {
		msg = json_deep_copy(s->state);
		json_object_set_new(msg, "t", json_string("adopt"));
		json_object_set_new(msg, "exited", json_boolean(s->exited));
		if (s->exited)
			holder_status_set(msg, s->status, &s->ru);
		if (holder_send(h->sock, msg, s->fds) == -1)
			log_warn("holder: session %s: %s", s->id,
			    strerror(errno));
		json_decref(msg);
	}
	msg = json_pack("{s:s}", "t", "end");
	(void)holder_send(h->sock, msg, NULL);
	json_decref(msg);
	log_info("holder: started worker %ld with %s session(s) to adopt",
	    (long)pid, LIST_EMPTY(&h->held) ? "no" : "its");
}

/* sig to every session held that still runs, and its tree. */
static void
holder_signal_all(struct holder *h, int sig)
{
	struct held	*s;
	const char	*cg;
	char		 path[PATH_MAX];
	int		 fd;

	LIST_FOREACH(s, &h->held, entry) {
		cg = json_string_value(json_object_get(s->state, "cgroup"));
		if (cg != NULL && sig == SIGKILL) {
			snprintf(path, sizeof path, "%s/cgroup.kill", cg);
			if ((fd = open(path, O_WRONLY|O_CLOEXEC)) != -1) {
				if (write(fd, "1", 1) == -1)
					log_debug("holder: %s: %s", path,
					    strerror(errno));
				close(fd);
			}
		}
		if (s->exited)
			continue;	/* its pid may be another's now */
		kill(-s->pid, sig);
		kill(s->pid, sig);
	}
}

/* Reaps what ended: the worker, sessions, orphans. */
static void
holder_reap(struct holder *h)
{
	struct held	*s;
	struct rusage	 ru;
	json_t		*msg;
	pid_t		 pid;
	int		 status;

	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		if (pid == h->worker) {
			h->worker = -1;
			h->rc = WIFEXITED(status) ? WEXITSTATUS(status) :
			    128 + WTERMSIG(status);
			continue;
		}
		LIST_FOREACH(s, &h->held, entry)
			if (s->pid == pid && !s->exited)
				break;
		if (s == NULL)
			continue;		/* an orphan of theirs */
		s->exited = 1;
		s->status = status;
		s->ru = ru;
		if (h->sock == -1 || h->worker == -1)
			continue;		/* the next worker is told */
		msg = json_pack("{s:s, s:s, s:i}", "t", "exited", "id", s->id,
		    "pid", (int)pid);
		holder_status_set(msg, status, &ru);
		(void)holder_send(h->sock, msg, NULL);
		json_decref(msg);
	}
}

/*
 * Stopping with sessions held and no worker to end them (SIGTERM in a
 * crash's backoff, or just after a hand-over): one last worker is started
 * with SIGTERM waiting for it. It adopts them and ends them as a stop
 * always does, callbacks and all; the holder ends only what that one
 * could not (it failed to start: a config broken meanwhile).
 */
static int
holder_wants_last(const struct holder *h)
{
	return (!h->last && h->ever_up && !LIST_EMPTY(&h->held));
}

/* The worker ended: what next (start another, or exit: return 1). */
static int
holder_worker_ended(struct holder *h)
{
	int64_t	now = clock_mono_ms();

	if (h->sock != -1)
		close(h->sock);
	h->sock = -1;
	if (h->leaving && !h->stopping) {
		log_info("holder: the worker handed over; starting the next");
		h->backoff_ms = 0;
		h->restart_ms = now;
		return (0);
	}
	if (h->stopping && holder_wants_last(h))
		return (0);		/* the loop starts it */
	if (h->stopping || !h->ever_up || h->rc == 0) {
		/* Stopped (or could not start): so are the sessions. */
		if (!h->ever_up && h->rc != 0)
			log_warn("holder: the worker exited with %d before it "
			    "was up; not starting it again", h->rc);
		return (1);
	}
	if (now - h->life_ms >= HOLDER_STEADY_MS)
		h->backoff_ms = 0;
	h->backoff_ms = h->backoff_ms == 0 ? HOLDER_BACKOFF_MIN_MS :
	    h->backoff_ms * 2;
	if (h->backoff_ms > HOLDER_BACKOFF_MAX_MS)
		h->backoff_ms = HOLDER_BACKOFF_MAX_MS;
	h->restart_ms = now + h->backoff_ms;
	log_warn("holder: the worker ended (%d) without handing over; "
	    "starting the next in %u ms, which adopts the sessions", h->rc,
	    h->backoff_ms);
	return (0);
}

/* No worker, and stopping: the sessions end too, then the holder. */
static void
holder_end_sessions(struct holder *h)
{
	struct held	*s;
	int64_t		 until = clock_mono_ms() + HOLDER_KILL_WAIT_MS;
	int		 left;

	holder_signal_all(h, SIGKILL);
	do {
		holder_reap(h);
		left = 0;
		LIST_FOREACH(s, &h->held, entry)
			left += !s->exited;
		if (left > 0)
			usleep(10000);
	} while (left > 0 && clock_mono_ms() < until);
	while ((s = LIST_FIRST(&h->held)) != NULL)
		holder_forget(s);
}

/* Reads what the worker said (all of it once it ended: drain). */
static void
holder_read(struct holder *h, int drain)
{
	json_t	*msg;
	int	 fds[3];

	while (h->sock != -1) {
		if ((msg = holder_recv(h->sock, fds, MSG_DONTWAIT)) != NULL) {
			holder_message(h, msg, fds);
			json_decref(msg);
			if (!drain)
				return;
			continue;
		}
		if (errno == EAGAIN && !drain)
			return;
		close(h->sock);		/* its end is gone */
		h->sock = -1;
	}
}

int
holder_main(char **argv)
{
	struct holder		 h;
	struct signalfd_siginfo	 si;
	struct pollfd		 pfd[2];
	sigset_t		 set;
	ssize_t			 n;
	int64_t			 wait;
	pid_t			 was;

	memset(&h, 0, sizeof h);
	h.argv = argv;
	h.worker = -1;
	h.sock = -1;
	LIST_INIT(&h.held);
	n = readlink("/proc/self/exe", h.exe, sizeof h.exe - 1);
	if (n <= 0) {
		log_warn("holder: /proc/self/exe: %s", strerror(errno));
		return (1);
	}
	h.exe[n] = '\0';
	/* Replaced by an upgrade: the new file at the same path. */
	if (n > 10 && strcmp(h.exe + n - 10, " (deleted)") == 0)
		h.exe[n - 10] = '\0';
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1) {
		log_warn("holder: subreaper: %s", strerror(errno));
		return (1);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((h.sfd = signalfd(-1, &set, SFD_CLOEXEC)) == -1) {
		log_warn("holder: signalfd: %s", strerror(errno));
		return (1);
	}
	log_info("holder %ld: sessions outlive each worker (hold_sessions)",
	    (long)getpid());
	for (;;) {
		if (h.worker == -1) {
			if (h.stopping && !holder_wants_last(&h))
				break;
			if (h.stopping) {
				log_info("holder: stopping; a last worker ends "
				    "the sessions held");
				h.last = 1;
				holder_start(&h);
				if (h.worker != -1)	/* waits, blocked */
					kill(h.worker, SIGTERM);
				continue;
			}
			wait = h.restart_ms - clock_mono_ms();
			if (wait <= 0) {
				holder_start(&h);
				wait = -1;
			}
		} else
			wait = -1;
		pfd[0].fd = h.sfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = h.sock;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, wait > INT_MAX ? INT_MAX : (int)wait) == -1 &&
		    errno != EINTR)
			fatal("holder: poll: %s", strerror(errno));
		if (h.sock != -1 && (pfd[1].revents & (POLLIN|POLLHUP|POLLERR)))
			holder_read(&h, 0);
		if (!(pfd[0].revents & POLLIN) ||
		    read(h.sfd, &si, sizeof si) != sizeof si)
			continue;
		switch (si.ssi_signo) {
		case SIGCHLD:
			was = h.worker;
			holder_reap(&h);
			if (was == -1 || h.worker != -1)
				break;
			holder_read(&h, 1);	/* what it said last */
			if (holder_worker_ended(&h))
				goto out;
			break;
		case SIGTERM:
		case SIGINT:
			h.stopping = 1;
			if (h.worker != -1)
				kill(h.worker, (int)si.ssi_signo);
			break;
		default:		/* HUP, USR2: the worker's */
			if (h.worker != -1)
				kill(h.worker, (int)si.ssi_signo);
			break;
		}
	}
out:
	if (!LIST_EMPTY(&h.held)) {
		log_warn("holder: ending the sessions no worker runs");
		holder_end_sessions(&h);
	}
	close(h.sfd);
	log_info("holder: exiting (%d)", h.rc);
	return (h.rc);
}

/* The worker's end of it. */

struct holder_link {
	int			 sock;
	long			 pid;
	struct holder_record	*records;
	size_t			 nrecords;
	struct event		*ev;
};

struct holder_link *
holder_link_open(void)
{
	struct holder_link	*hl;
	const char		*env = getenv(HOLDER_ENV);
	json_t			*msg;
	const char		*t;
	char			*colon;
	int			 fds[3], fd;
	long			 pid;

	if (env == NULL)
		return (NULL);
	fd = (int)strtol(env, &colon, 10);
	pid = *colon == ':' ? strtol(colon + 1, NULL, 10) : 0;
	unsetenv(HOLDER_ENV);
	if (pid != (long)getppid() || fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
		log_warn("holder: %s does not name our parent; running "
		    "without it", HOLDER_ENV);
		return (NULL);
	}
	hl = xcalloc(1, sizeof *hl);
	hl->sock = fd;
	hl->pid = pid;
	while ((msg = holder_recv(fd, fds, 0)) != NULL) {
		struct holder_record	*r;

		t = json_string_value(json_object_get(msg, "t"));
		if (t != NULL && strcmp(t, "end") == 0) {
			json_decref(msg);
			break;
		}
		if (t == NULL || strcmp(t, "adopt") != 0) {
			json_decref(msg);
			continue;
		}
		hl->records = xreallocarray(hl->records, hl->nrecords + 1,
		    sizeof *hl->records);
		r = &hl->records[hl->nrecords++];
		memset(r, 0, sizeof *r);
		memcpy(r->fds, fds, sizeof r->fds);
		r->exited = json_is_true(json_object_get(msg, "exited"));
		if (r->exited)
			holder_status_get(msg, &r->status, &r->ru);
		json_object_del(msg, "t");
		r->state = msg;
	}
	if (hl->nrecords > 0)
		log_info("holder: %zu session(s) to adopt", hl->nrecords);
	return (hl);
}

/* Closes what the records still hold (the holder has its own copies). */
static void
holder_link_forget_records(struct holder_link *hl)
{
	size_t	i;
	int	k;

	for (i = 0; i < hl->nrecords; i++) {
		for (k = 0; k < 3; k++)
			if (hl->records[i].fds[k] != -1)
				close(hl->records[i].fds[k]);
		json_decref(hl->records[i].state);
	}
	free(hl->records);
	hl->records = NULL;
	hl->nrecords = 0;
}

void
holder_link_free(struct holder_link *hl)
{
	if (hl == NULL)
		return;
	holder_link_forget_records(hl);
	if (hl->ev != NULL)
		event_free(hl->ev);
	close(hl->sock);
	free(hl);
}

long
holder_link_pid(const struct holder_link *hl)
{
	return (hl != NULL ? hl->pid : 0);
}

struct holder_record *
holder_link_records(struct holder_link *hl, size_t *n)
{
	*n = hl != NULL ? hl->nrecords : 0;
	return (hl != NULL ? hl->records : NULL);
}

unsigned
holder_link_leaves(const struct holder_link *hl)
{
	json_int_t	leaf;
	unsigned	n = 0;
	size_t		i;

	for (i = 0; hl != NULL && i < hl->nrecords; i++) {
		leaf = json_integer_value(json_object_get(hl->records[i].state,
		    "leaf"));
		if (json_is_integer(json_object_get(hl->records[i].state,
		    "leaf")) && leaf >= 0 && leaf < 65536 && leaf + 1 > n)
			n = (unsigned)leaf + 1;
	}
	return (n);
}

/* The holder reaped an adopted session (or said nothing more). */
static void
holder_link_cb(evutil_socket_t fd, short what, void *arg)
{
	struct holder_link	*hl = arg;
	struct rusage		 ru;
	json_t			*msg;
	const char		*t;
	int			 fds[3], status, k;

	(void)what;
	if ((msg = holder_recv(fd, fds, MSG_DONTWAIT)) == NULL) {
		if (errno == EAGAIN)
			return;
		log_warn("holder: the link is gone (%s)", errno == 0 ? "closed"
		    : strerror(errno));
		event_del(hl->ev);
		return;
	}
	for (k = 0; k < 3; k++)
		if (fds[k] != -1)
			close(fds[k]);
	t = json_string_value(json_object_get(msg, "t"));
	if (t != NULL && strcmp(t, "exited") == 0) {
		holder_status_get(msg, &status, &ru);
		if (!exec_reaped_id(json_string_value(json_object_get(msg,
		    "id")), (pid_t)json_integer_value(json_object_get(msg,
		    "pid")), status, &ru))
			log_debug("holder: exit of a pid not ours any more");
	}
	json_decref(msg);
}

int
holder_link_up(struct holder_link *hl, struct event_base *base)
{
	json_t	*msg;
	int	 k;

	if (hl == NULL)
		return (0);
	/* What was not adopted is closed now (the holder has its copy). */
	holder_link_forget_records(hl);
	hl->ev = event_new(base, hl->sock, EV_READ|EV_PERSIST, holder_link_cb,
	    hl);
	if (hl->ev == NULL || event_add(hl->ev, NULL) == -1)
		return (-1);
	msg = json_pack("{s:s}", "t", "up");
	k = holder_send(hl->sock, msg, NULL);
	json_decref(msg);
	return (k);
}

/* Sends a message of type t about session id, with fields (or NULL). */
static void
holder_link_say(struct holder_link *hl, const char *t, const char *id,
    json_t *fields, const int fds[3])
{
	json_t	*msg;

	if (hl == NULL)
		return;
	msg = fields != NULL ? json_deep_copy(fields) : json_object();
	json_object_set_new(msg, "t", json_string(t));
	if (id != NULL)
		json_object_set_new(msg, "id", json_string(id));
	if (holder_send(hl->sock, msg, fds) == -1)
		log_warn("holder: %s%s%s: %s", t, id != NULL ? " " : "",
		    id != NULL ? id : "", strerror(errno));
	json_decref(msg);
}

void
holder_link_hold(struct holder_link *hl, const char *id, json_t *state,
    const int fds[3])
{
	holder_link_say(hl, "hold", id, state, fds);
}

void
holder_link_state(struct holder_link *hl, const char *id, json_t *fields)
{
	holder_link_say(hl, "state", id, fields, NULL);
}

void
holder_link_input_closed(struct holder_link *hl, const char *id)
{
	holder_link_say(hl, "input_closed", id, NULL, NULL);
}

void
holder_link_exited(struct holder_link *hl, const char *id, int status,
    const struct rusage *ru)
{
	json_t	*o = json_object();

	holder_status_set(o, status, ru);
	holder_link_say(hl, "exited", id, o, NULL);
	json_decref(o);
}

void
holder_link_drop(struct holder_link *hl, const char *id)
{
	holder_link_say(hl, "drop", id, NULL, NULL);
}

void
holder_link_leave(struct holder_link *hl)
{
	holder_link_say(hl, "leave", NULL, NULL, NULL);
}
