/*
 * A shell session's commands (worker/shell.h). Each exec writes into the
 * shell, in one write to its (empty) input pipe:
 *
 *	{ eval '<command, quoted>'; } </dev/null
 *	printf '\n%s %d\n' '<mark>' "$?"; printf '\n%s\n' '<mark>' >&2
 *
 * ("$?", no variable of ours, which a command could make readonly)
 * where <mark> is 128 random bits and the command's number, new for each
 * command. eval keeps a syntax error the command's (the shell goes on);
 * </dev/null keeps the command from eating what comes after it. The
 * command's stdout ends where "\n<mark> " begins on fd 1, its stderr
 * where "\n<mark>\n" begins on fd 2: output cannot forge a mark it has
 * not seen, and a mark printed is never used again. The shell runs with
 * job control (set -m), so each command is a process group of its own
 * that SIGINT can reach without the shell, and a handler for INT (trap :)
 * so the shell outlives a command that dies of it; commands start with
 * SIGINT at its default.
 */

#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
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
#include "logs/token.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "worker/shell.h"

#define SHELL_BASH		"/bin/bash"
#define SHELL_MARK_MAX		96	/* "\n<mark> <rc>\n" fits */
#define SHELL_SETUP		"set -m; trap : INT; unset HISTFILE\n"

/* What one stream of the running command has given. */
struct shell_stream {
	char			*buf;		/* its first cap + SHELL_MARK_MAX
						   bytes */
	size_t			 len;
	unsigned long long	 total;		/* bytes seen */
	char			 win[2 * SHELL_MARK_MAX];	/* the last */
	size_t			 wlen;
	long long		 end;		/* where its mark begins; -1 */
	int			 rc;		/* fd 1's mark: the exit code */
};

/* The shell, and the command it runs (one at a time). */
struct shell {
	struct event_base	*base;
	struct exec		*ex;		/* NULL once it ended */
	char			*id;		/* the session's */
	size_t			 cap;
	unsigned		 default_ms, grace_ms;
	unsigned		 seq;
	/* The running command; item_id NULL: none. */
	char			*item_id;
	char			 mark[TOKEN_LEN + 16];
	struct shell_stream	 out[2];	/* stdout, stderr */
	long long		 started_us;
	unsigned long long	 log_from;
	int			 timed_out;
	int			 killed;	/* its jobs were KILLed */
	struct event		*ev_timeout;
	shell_answer_cb		 cb;
	void			*arg;
};

const char *
shell_program(const char *worker_shell)
{
	const char	*base = strrchr(worker_shell, '/');

	base = base != NULL ? base + 1 : worker_shell;
	if (strcmp(base, "bash") == 0)
		return (worker_shell);
	return (access(SHELL_BASH, X_OK) == 0 ? SHELL_BASH : worker_shell);
}

const char *
shell_command(const char *worker_shell)
{
	static char	buf[PATH_MAX + 64];
	const char	*prog = shell_program(worker_shell);
	const char	*base = strrchr(prog, '/');

	base = base != NULL ? base + 1 : prog;
	if (strcmp(base, "bash") == 0)
		snprintf(buf, sizeof buf, "exec %s --noprofile --norc -s",
		    prog);
	else
		snprintf(buf, sizeof buf, "exec %s -s", prog);
	return (buf);
}

static void	shell_timeout_cb(evutil_socket_t, short, void *);

static char	*shell_quote(const char *);

struct shell *
shell_create(struct event_base *base, struct exec *ex, const char *session_id,
    size_t output_cap, unsigned default_timeout_ms, unsigned kill_grace_ms,
    const char *command)
{
	struct shell	*sh;
	char		*quoted, *text;

	sh = xcalloc(1, sizeof *sh);
	sh->base = base;
	sh->ex = ex;
	sh->id = xstrdup(session_id);
	sh->cap = output_cap;
	sh->default_ms = default_timeout_ms;
	sh->grace_ms = kill_grace_ms;
	if ((sh->ev_timeout = evtimer_new(base, shell_timeout_cb, sh)) == NULL)
		fatal("out of memory (libevent)");
	if (command == NULL)		/* adopted: set up long ago */
		return (sh);
	quoted = shell_quote(command);
	xasprintf(&text, "%s{ eval %s\n} </dev/null\n", SHELL_SETUP, quoted);
	if (exec_write(ex, text, strlen(text)) != (ssize_t)strlen(text))
		log_warn("shell %s: its set-up could not be written: %s",
		    session_id, strerror(errno));
	free(quoted);
	free(text);
	return (sh);
}

int
shell_busy(const struct shell *sh)
{
	return (sh->item_id != NULL);
}

char *
shell_cwd(const struct shell *sh)
{
	char	 path[64], buf[PATH_MAX];
	ssize_t	 n;

	if (sh->ex == NULL)
		return (NULL);
	snprintf(path, sizeof path, "/proc/%ld/cwd", (long)exec_pid(sh->ex));
	if ((n = readlink(path, buf, sizeof buf - 1)) <= 0)
		return (NULL);
	buf[n] = '\0';
	return (xstrdup(buf));
}

/* The bytes a stream gave before its mark, as a JSON string. */
static json_t *
shell_stream_json(const struct shell_stream *st, size_t cap, int *truncated)
{
	size_t	n = st->end >= 0 ? (size_t)st->end : st->total;

	if (n > cap) {
		n = cap;
		*truncated = 1;
	}
	if (n > st->len)
		n = st->len;
	return (item_json_text(st->buf != NULL ? st->buf : "", n));
}

/* The command is over (or the shell is): its answer, and the next may go. */
static void
shell_finish(struct shell *sh, enum errcode code, const char *why)
{
	json_t		*fields;
	shell_answer_cb	 cb = sh->cb;
	void		*arg = sh->arg;
	char		*item_id = sh->item_id, *text, *cwd;
	int		 truncated = 0, i;
	size_t		 len;

	evtimer_del(sh->ev_timeout);
	sh->item_id = NULL;
	if (code != ERR_NONE)
		cb(code, why, strlen(why), arg);
	else {
		fields = json_pack("{s:i, s:o, s:o, s:b, s:b, s:I, s:I, s:I}",
		    "exit_code", sh->out[0].end >= 0 ? sh->out[0].rc : -1,
		    "stdout", shell_stream_json(&sh->out[0], sh->cap,
		    &truncated),
		    "stderr", shell_stream_json(&sh->out[1], sh->cap,
		    &truncated),
		    "truncated", 0, "timed_out", sh->timed_out,
		    "duration_ms", (json_int_t)((clock_mono_us() -
		    sh->started_us) / 1000),
		    "log_from", (json_int_t)sh->log_from,
		    "log_to", (json_int_t)(sh->ex != NULL ?
		    exec_output_bytes(sh->ex) : sh->log_from));
		json_object_set_new(fields, "truncated", json_boolean(
		    truncated));
		if ((cwd = shell_cwd(sh)) != NULL)
			json_object_set_new(fields, "cwd", json_string(cwd));
		free(cwd);
		text = item_process_result_to_json(item_id, "exec", sh->id,
		    fields, &len);
		cb(ERR_NONE, text, len, arg);
		free(text);
	}
	for (i = 0; i < 2; i++) {
		free(sh->out[i].buf);
		memset(&sh->out[i], 0, sizeof sh->out[i]);
	}
	free(item_id);
}

/*
 * Looks for the mark in a stream's window: on fd 1 "\n<mark> <rc>\n",
 * on fd 2 "\n<mark>\n". 1 when found (end and rc set).
 */
static int
shell_find_mark(struct shell *sh, int i)
{
	struct shell_stream	*st = &sh->out[i];
	size_t			 mlen = strlen(sh->mark), k;
	const char		*p, *nl;
	char			*end;
	long			 rc;

	for (k = 0; k + 1 + mlen < st->wlen; k++) {
		p = st->win + k;
		if (p[0] != '\n' || memcmp(p + 1, sh->mark, mlen) != 0)
			continue;
		p += 1 + mlen;
		if ((nl = memchr(p, '\n', st->win + st->wlen - p)) == NULL)
			return (0);	/* the rest is on its way */
		if (i == 1) {
			if (nl != p)
				continue;
		} else {
			if (*p != ' ')
				continue;
			rc = strtol(p + 1, &end, 10);
			if (end != nl || rc < 0 || rc > 255)
				continue;
			st->rc = (int)rc;
		}
		st->end = (long long)(st->total - st->wlen + k);
		return (1);
	}
	return (0);
}

void
shell_output(struct shell *sh, int fd, const char *buf, size_t len)
{
	struct shell_stream	*st;
	size_t			 room, keep;
	int			 i = fd == 2 ? 1 : 0;

	if (sh->item_id == NULL)
		return;		/* between commands: the log has it */
	st = &sh->out[i];
	if (st->end >= 0)
		return;		/* after its mark: a background job's */
	room = sh->cap + SHELL_MARK_MAX;
	if (st->len < room) {
		keep = len < room - st->len ? len : room - st->len;
		st->buf = xrealloc(st->buf, st->len + keep + 1);
		memcpy(st->buf + st->len, buf, keep);
		st->len += keep;
	}
	/* The window: its last bytes and these, the last of them kept. */
	while (len > 0) {
		keep = len < sizeof st->win / 2 ? len : sizeof st->win / 2;
		if (st->wlen + keep > sizeof st->win) {
			memmove(st->win, st->win + st->wlen -
			    (sizeof st->win - keep), sizeof st->win - keep);
			st->wlen = sizeof st->win - keep;
		}
		memcpy(st->win + st->wlen, buf, keep);
		st->wlen += keep;
		st->total += keep;
		buf += keep;
		len -= keep;
		if (shell_find_mark(sh, i))
			break;
	}
	if (sh->out[0].end >= 0 && sh->out[1].end >= 0)
		shell_finish(sh, ERR_NONE, NULL);
}

/* SIGINT (or sig) to each process group the shell's children lead. */
static int
shell_signal_jobs(struct shell *sh, int sig)
{
	char	 path[96], buf[4096], *p, *end;
	FILE	*f;
	pid_t	 shell_pid, kid, pg, done[64];
	size_t	 n = 0, i;
	int	 hit = 0;

	if (sh->ex == NULL)
		return (0);
	shell_pid = exec_pid(sh->ex);
	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children",
	    (long)shell_pid, (long)shell_pid);
	if ((f = fopen(path, "re")) == NULL)
		return (0);
	if (fgets(buf, sizeof buf, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	for (p = buf; *p != '\0'; p = end) {
		kid = (pid_t)strtol(p, &end, 10);
		if (end == p)
			break;
		if ((pg = getpgid(kid)) <= 0 || pg == getpgid(shell_pid))
			continue;
		for (i = 0; i < n && done[i] != pg; i++)
			/* nothing */;
		if (i < n || n == sizeof done / sizeof done[0])
			continue;
		done[n++] = pg;
		if (kill(-pg, sig) == 0)
			hit++;
	}
	return (hit);
}

int
shell_interrupt(struct shell *sh)
{
	return (shell_signal_jobs(sh, SIGINT));
}

/*
 * Past its timeout: interrupted; still there after the grace, killed;
 * and if its end mark has still not come a grace later, the command took
 * the mark's way out (its stdout or stderr closed or sent away: exec
 * >/dev/null), and nothing the shell prints can be told apart any more:
 * the command is answered with what it gave, and the shell is ended.
 */
static void
shell_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct shell	*sh = arg;
	struct timeval	 tv;

	(void)fd;
	(void)what;
	if (sh->item_id == NULL)
		return;
	tv.tv_sec = sh->grace_ms / 1000;
	tv.tv_usec = (sh->grace_ms % 1000) * 1000;
	if (!sh->timed_out) {
		sh->timed_out = 1;
		log_info("shell %s: command %s past its timeout: interrupted",
		    sh->id, sh->item_id);
		(void)shell_signal_jobs(sh, SIGINT);
		evtimer_add(sh->ev_timeout, &tv);
		return;
	}
	if (!sh->killed) {
		sh->killed = 1;
		(void)shell_signal_jobs(sh, SIGKILL);
		evtimer_add(sh->ev_timeout, &tv);
		return;
	}
	log_warn("shell %s: command %s gave no end mark after it was killed "
	    "(its stdout or stderr closed or sent away?): the shell is ended",
	    sh->id, sh->item_id);
	if (sh->ex != NULL)
		exec_kill(sh->ex, SIGKILL, EXEC_END_KILLED);
	shell_finish(sh, ERR_NONE, NULL);
}

/* command in single quotes, for eval. */
static char *
shell_quote(const char *command)
{
	const char	*p;
	char		*out, *o;

	o = out = xmalloc(strlen(command) * 4 + 3);
	*o++ = '\'';
	for (p = command; *p != '\0'; p++) {
		if (*p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else
			*o++ = *p;
	}
	*o++ = '\'';
	*o = '\0';
	return (out);
}

int
shell_exec(struct shell *sh, const char *item_id, const char *command,
    long timeout_ms, shell_answer_cb cb, void *arg, enum errcode *code,
    char **cause)
{
	struct timeval	 tv;
	char		*quoted, *text, secret[TOKEN_LEN + 1];
	ssize_t		 n;
	int		 i;

	if (sh->ex == NULL) {
		*code = ERR_SESSION_ENDED;
		xasprintf(cause, "shell session %s has ended", sh->id);
		return (-1);
	}
	if (sh->item_id != NULL) {
		*code = ERR_SESSION_BUSY;
		xasprintf(cause, "shell session %s runs %s now: one command at "
		    "a time (wait for its answer, or interrupt it)", sh->id,
		    sh->item_id);
		return (-1);
	}
	token_new(secret);
	snprintf(sh->mark, sizeof sh->mark, "%s:%u", secret, ++sh->seq);
	quoted = shell_quote(command);
	xasprintf(&text, "{ eval %s\n} </dev/null\n"
	    "printf '\\n%%s %%d\\n' '%s' \"$?\"; "
	    "printf '\\n%%s\\n' '%s' >&2\n", quoted, sh->mark, sh->mark);
	free(quoted);
	for (i = 0; i < 2; i++) {
		memset(&sh->out[i], 0, sizeof sh->out[i]);
		sh->out[i].end = -1;
	}
	sh->log_from = exec_output_bytes(sh->ex);
	sh->started_us = clock_mono_us();
	sh->timed_out = sh->killed = 0;
	sh->item_id = xstrdup(item_id);
	sh->cb = cb;
	sh->arg = arg;
	n = exec_write(sh->ex, text, strlen(text));
	if (n != (ssize_t)strlen(text)) {
		/* A part went in: the shell is not ours to trust any more. */
		*code = ERR_SESSION_ENDED;
		xasprintf(cause, "shell session %s does not take its input "
		    "(%s)", sh->id, n == -1 ? strerror(errno) :
		    "its input is full");
		free(sh->item_id);
		sh->item_id = NULL;
		free(text);
		if (n > 0)
			(void)shell_signal_jobs(sh, SIGKILL);
		return (-1);
	}
	free(text);
	if (timeout_ms <= 0)
		timeout_ms = sh->default_ms;
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	evtimer_add(sh->ev_timeout, &tv);
	return (0);
}

void
shell_ended(struct shell *sh)
{
	char	*why;

	sh->ex = NULL;
	if (sh->item_id == NULL)
		return;
	xasprintf(&why, "shell session %s ended while the command ran (an "
	    "exit in it, or a kill)", sh->id);
	shell_finish(sh, ERR_SESSION_ENDED, why);
	free(why);
}

void
shell_free(struct shell *sh)
{
	int	i;

	if (sh == NULL)
		return;
	for (i = 0; i < 2; i++)
		free(sh->out[i].buf);
	free(sh->item_id);
	event_free(sh->ev_timeout);
	free(sh->id);
	free(sh);
}
