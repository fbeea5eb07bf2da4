/*
 * execq logs and execq cleanup: a session's output, and old log files.
 *
 * logs asks the owning worker for the log file (PROCESS log, base64, so
 * the bytes are exact), 1 MiB per answer. logs -f reads the live stream
 * execq:out:<id> instead: its "data" entries are the output as it came,
 * and a last "end" entry holds the final status. What the stream lacks
 * (bytes the worker "skipped" when output came too fast, or everything
 * once the stream expired) comes from the log, through the worker. When
 * the stream is silent, the session hash says whether the session ended.
 *
 * The log is the command's output, so it goes out byte for byte, except
 * to a terminal (without --raw): there it is escaped as logs/display.h
 * says, lines and tabs kept, because it is text someone else's command
 * wrote, read later by a person who did not choose to run it, and an
 * escape sequence in it could rewrite what the terminal shows (erase a
 * line, fake a prompt or a result), retitle it, or on some terminals
 * set the clipboard or answer back as if typed. As less(1) shows control
 * characters unless told -r: colours and a full-screen program's
 * output then show as \e[...; --raw, or a pipe, gives the bytes.
 *
 * cleanup runs logs/cleanup.c on this host's log dir, without Redis.
 */

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "queue/item.h"
#include "logs/cleanup.h"
#include "logs/display.h"
#include "logs/xmalloc.h"
#include "queue/client.h"

#define EXECQ_LOG_CHUNK		(1024 * 1024)	/* bytes per log answer */
#define EXECQ_FOLLOW_BLOCK_MS	1000
#define EXECQ_END_GRACE_POLLS	2	/* ended, but no "end" entry yet */
#define EXECQ_DEFAULT_LOG_DIR	".tmp/exec"
#define EXECQ_DEFAULT_MAX_AGE_H	24.0

/* logs options. */
struct execq_logs_opts {
	struct execq_opts	 o;	/* first: set() casts */
	int			 follow;
	int			 raw;	/* --raw: never escaped */
	long			 lines;	/* 0: all */
};

/*
 * Where the log's bytes go: as they are, or escaped for a terminal, with
 * what a piece left cut short (a UTF-8 character, a \r before a \n?)
 * for the next. One for the process: logs prints one session's log.
 */
static struct {
	int	escape;
	char	carry[4];
	size_t	ncarry;
} execq_logs_out;

static const struct option execq_logs_longopts[] = {
	{ "follow",		no_argument,	   NULL, 'f' },
	{ "lines",		required_argument, NULL, 'n' },
	{ "raw",		no_argument,	   NULL, EXECQ_OPT_RAW },
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* Where logs -f stands. */
struct execq_follow {
	struct execq_session	*s;
	const char		*id;
	char			*key;		/* execq:out:<id> */
	char			*cursor;	/* last stream entry read */
	long long		 pos;		/* log bytes shown so far */
	long long		 stream_pos;	/* stream read up to here */
	int			 ended_polls;
};

/* cleanup options. */
struct execq_cleanup_opts {
	struct execq_opts	 o;	/* first: set() casts */
	const char		*log_dir;
	double			 max_age_h;
	int			 dry_run;
	int			 verbose;
	int			 missing_ok;	/* no log dir is no error */
};

static const struct option execq_cleanup_longopts[] = {
	{ "log-dir",		required_argument, NULL, EXECQ_OPT_LOG_DIR },
	{ "max-age-hours",	required_argument, NULL, EXECQ_OPT_MAX_AGE },
	{ "dry-run",		no_argument,	   NULL, EXECQ_OPT_DRY_RUN },
	{ "missing-ok",		no_argument,	   NULL, EXECQ_OPT_MISSING_OK },
	{ "verbose",		no_argument,	   NULL, 'v' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* logs --help. */
static void
execq_logs_usage(FILE *f)
{
	fputs("usage: execq logs [-f] [--lines N] [--raw] ID\n"
	    "\n"
	    "Prints the output of session ID, byte for byte, from its log\n"
	    "file on the worker that runs (or ran) it. To a terminal, control\n"
	    "characters and escape sequences are shown escaped (\\e[31m, \\r,\n"
	    "\\u202e) and a backslash as \\\\; lines and tabs stay.\n"
	    "\n"
	    "Options:\n"
	    "  -f, --follow    print the output as it comes (from the\n"
	    "                  stream execq:out:ID) until the session ends,\n"
	    "                  then say on stderr how it ended\n"
	    "  -n, --lines N   only the last N lines (with -f: then follow)\n"
	    "  --raw           the bytes as they are, on a terminal too\n"
	    "  --queue Q       work queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: 0, also when the session failed; 125 on an ERROR\n"
	    "(unknown_session...), no answer or a Redis failure; 130 when\n"
	    "-f is interrupted (Ctrl-C).\n", f);
}

/* logs' own options. */
static int
execq_logs_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	struct execq_logs_opts	*lo = (struct execq_logs_opts *)o;

	switch (ch) {
	case 'f':
		lo->follow = 1;
		return (0);
	case EXECQ_OPT_RAW:
		lo->raw = 1;
		return (0);
	case 'n':
		if (execq_parse_long(arg, 1, 100000, &lo->lines) == 0)
			return (0);
		execq_usage_error(cmd, "--lines wants 1 to 100000, not '%s'",
		    arg);
		return (-1);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/*
 * Writes len bytes of the log to stdout, escaped for a terminal if so
 * (the top); a piece cut short waits for the next. 0, or -1 (said).
 */
static int
execq_logs_print(const char *p, size_t len)
{
	char	*buf, *shown;
	size_t	 n, used;
	int	 rc;

	if (!execq_logs_out.escape)
		return (execq_write_all(stdout, p, len));
	n = execq_logs_out.ncarry + len;
	buf = xmalloc(n + 1);
	memcpy(buf, execq_logs_out.carry, execq_logs_out.ncarry);
	memcpy(buf + execq_logs_out.ncarry, p, len);
	shown = display_escape(buf, n, DISPLAY_LINES|DISPLAY_MORE, &used);
	execq_logs_out.ncarry = n - used;	/* 3 at the most */
	memcpy(execq_logs_out.carry, buf + used, execq_logs_out.ncarry);
	rc = execq_write_all(stdout, shown, strlen(shown));
	free(shown);
	free(buf);
	return (rc);
}

/* The log ended: what the last piece left waiting, escaped as it is. */
static int
execq_logs_print_end(void)
{
	char	*shown;
	int	 rc;

	if (execq_logs_out.ncarry == 0)
		return (0);
	shown = display_escape(execq_logs_out.carry, execq_logs_out.ncarry,
	    DISPLAY_LINES, NULL);
	execq_logs_out.ncarry = 0;
	rc = execq_write_all(stdout, shown, strlen(shown));
	free(shown);
	return (rc);
}

/* Writes an answer's output (output_b64, else output) to stdout. */
static int
execq_logs_write(const json_t *res)
{
	const json_t	*b64;
	char		*bytes;
	size_t		 len;
	int		 rc;

	b64 = json_object_get(res, "output_b64");
	if (!json_is_string(b64)) {	/* a worker that ignored encoding */
		b64 = json_object_get(res, "output");
		return (execq_logs_print(json_string_value(b64),
		    json_string_length(b64)) == 0 ? 0 : EXECQ_EXIT_FAIL);
	}
	if (item_base64_decode(json_string_value(b64), json_string_length(b64),
	    &bytes, &len) == -1) {
		execq_error("bad answer from the worker: output_b64 is not "
		    "base64");
		return (EXECQ_EXIT_FAIL);
	}
	rc = execq_logs_print(bytes, len) == 0 ? 0 : EXECQ_EXIT_FAIL;
	free(bytes);
	return (rc);
}

/* The args of one log action: the last lines, else a 1 MiB range. */
static json_t *
execq_logs_args(const char *id, long lines, long long offset,
    long long end)
{
	json_t		*args;
	long long	 length = EXECQ_LOG_CHUNK;

	args = json_pack("{s:s, s:s, s:s}", "action", "log", "session_id",
	    id, "encoding", "base64");
	if (lines > 0) {
		json_object_set_new(args, "lines", json_integer(lines));
		return (args);
	}
	if (end >= 0 && end - offset < length)
		length = end - offset;
	json_object_set_new(args, "offset", json_integer(offset));
	json_object_set_new(args, "length", json_integer(length));
	return (args);
}

/*
 * Prints the log of id from offset (or its last lines) up to end (-1: its
 * size when asked), one answer at a time. 0 with *next at the first byte
 * not printed, or an exit code (said).
 */
static int
execq_logs_range(struct execq_session *s, const char *id, long lines,
    long long offset, long long end, long long *next)
{
	struct execq_answer	 a = { NULL, NULL, 0 };
	json_t			*args, *res;
	long long		 from, size;
	int			 rc;

	*next = offset;
	for (;;) {
		if (end >= 0 && offset >= end)	/* length 0 means "all" */
			return (0);
		args = execq_logs_args(id, lines, offset, end);
		rc = execq_process(s, args, 0, &a);
		json_decref(args);
		if (rc != 0)
			return (rc);
		res = execq_process_result(a.root);
		from = lines > 0 ? json_integer_value(json_object_get(res,
		    "offset")) : offset;
		*next = json_integer_value(json_object_get(res, "next_offset"));
		size = json_integer_value(json_object_get(res, "size"));
		rc = execq_logs_write(res);
		execq_answer_release(&a);
		if (rc != 0)
			return (rc);
		if (*next >= size || (end >= 0 && *next >= end))
			return (0);
		if (*next <= from && lines == 0) {	/* would loop forever */
			execq_error("bad answer from the worker: the log does "
			    "not move on at offset %lld of %lld", *next, size);
			return (EXECQ_EXIT_FAIL);
		}
		offset = *next;
		lines = 0;
	}
}

/* "killed by user (SIGTERM)", "completed, exit 0", ...: how it ended. */
static void
execq_logs_say_end(const char *id, const json_t *st)
{
	const char	*status, *by, *sig;
	const json_t	*code;
	char		 buf[32], how[64] = "", sigs[48] = "", exit[48] = "";

	(void)execq_logs_print_end();	/* the log, then how it ended */
	status = json_string_value(json_object_get(st, "status"));
	by = json_string_value(json_object_get(st, "killed_by"));
	if ((sig = execq_signal_name(json_object_get(st, "signal"),
	    buf)) != NULL)
		snprintf(sigs, sizeof sigs, " (%s)", sig);
	if (by != NULL && strcmp(by, "shutdown") == 0)
		snprintf(how, sizeof how, " at worker shutdown");
	else if (by != NULL)
		snprintf(how, sizeof how, " by %s", by);
	code = json_object_get(st, "exit_code");
	if (json_is_integer(code))
		snprintf(exit, sizeof exit, ", exit %lld",
		    (long long)json_integer_value(code));
	if (status == NULL)
		execq_error("session %s ended", id);
	else if (strcmp(status, "killed") == 0)
		execq_error("session %s killed%s%s", id, how, sigs);
	else if (strcmp(status, "timed_out") == 0)
		execq_error("session %s timed out%s", id, by != NULL &&
		    strcmp(by, "idle") == 0 ? " (no output for its idle "
		    "timeout)" : "");
	else if (strcmp(status, "lost") == 0)
		execq_error("session %s lost: its worker stopped", id);
	else
		execq_error("session %s %s%s%s", id, status, exit, sigs);
}

/*
 * Writes one "data" entry, less what was shown already. The stream holds
 * the log from its first byte on, in order, except where an entry says
 * the worker dropped "skipped" bytes (output faster than the live stream
 * takes): the log has those, and since the entry does not say whether
 * they came before or after its data, both come from the log. An entry
 * that says where its data sits in the log ("offset") is exact.
 */
static int
execq_follow_data(struct execq_follow *fw, const redisReply *e,
    const redisReply *data)
{
	const redisReply	*f;
	long long		 at = fw->stream_pos, skipped = 0, skip;
	int			 rc;

	if ((f = execq_entry_field(e, "skipped")) != NULL)
		skipped = strtoll(f->str, NULL, 10);
	if ((f = execq_entry_field(e, "offset")) != NULL)
		at = strtoll(f->str, NULL, 10);
	else if (skipped > 0) {
		fw->stream_pos = at + skipped + data->len;
		return (fw->stream_pos <= fw->pos ? 0 : execq_logs_range(fw->s,
		    fw->id, 0, fw->pos, fw->stream_pos, &fw->pos));
	}
	fw->stream_pos = at + data->len;
	if (at > fw->pos && (rc = execq_logs_range(fw->s, fw->id, 0,
	    fw->pos, at, &fw->pos)) != 0)	/* a gap: the log has it */
		return (rc);
	if ((skip = fw->pos - at) < 0)
		skip = 0;
	if (skip < (long long)data->len && execq_logs_print(data->str + skip,
	    data->len - skip) == -1)
		return (EXECQ_EXIT_FAIL);
	if (fw->stream_pos > fw->pos)
		fw->pos = fw->stream_pos;
	return (0);
}

/*
 * The session ended without an "end" entry: show the rest from the log
 * (unless the hash's output_bytes says the stream had it all), then how.
 */
static int
execq_follow_finish(struct execq_follow *fw, const json_t *st)
{
	const json_t	*total;
	long long	 next;
	int		 rc = 0;

	total = json_object_get(st, "output_bytes");
	if (!json_is_integer(total) || fw->pos < json_integer_value(total))
		rc = execq_logs_range(fw->s, fw->id, 0, fw->pos, -1, &next);
	if (st != NULL)
		execq_logs_say_end(fw->id, st);
	return (rc);
}

/*
 * Reads entries; 1 when the "end" entry came (said), 0 to go on, or an
 * exit code (as a negative number) on a failure.
 */
static int
execq_follow_entries(struct execq_follow *fw, const redisReply *entries)
{
	const redisReply	*e, *v;
	json_t			*st;
	size_t			 i;
	int			 rc;

	for (i = 0; i < entries->elements; i++) {
		e = entries->element[i];
		if (execq_entry_id(e) == NULL)
			continue;
		free(fw->cursor);
		fw->cursor = xstrdup(execq_entry_id(e));
		if ((v = execq_entry_field(e, "data")) != NULL &&
		    (rc = execq_follow_data(fw, e, v)) != 0)
			return (-rc);
		if ((v = execq_entry_field(e, "end")) != NULL) {
			st = json_loadb(v->str, v->len, 0, NULL);
			execq_logs_say_end(fw->id, st);
			json_decref(st);
			return (1);
		}
	}
	return (0);
}

/*
 * Nothing new in the stream: ask the session hash. 1 when done (the rest
 * printed, the end said), 0 to go on, or a negative exit code.
 */
static int
execq_follow_idle(struct execq_follow *fw)
{
	redisReply	*r;
	json_t		*st;
	const char	*status;
	int		 exists, rc = 0;

	if ((r = execq_reply(fw->s, "EXISTS", client_exists(fw->s->c,
	    fw->key))) == NULL)
		return (-EXECQ_EXIT_FAIL);
	exists = r->type == REDIS_REPLY_INTEGER && r->integer > 0;
	freeReplyObject(r);
	if (execq_session_get(fw->s, fw->id, &st) == -1)
		return (-EXECQ_EXIT_FAIL);
	status = json_string_value(json_object_get(st, "status"));
	/* No hash: expired (the log may remain), or never was. */
	if ((st == NULL || execq_status_ended(status)) && (!exists ||
	    ++fw->ended_polls >= EXECQ_END_GRACE_POLLS))
		rc = execq_follow_finish(fw, st);
	else {
		json_decref(st);
		return (0);
	}
	json_decref(st);
	return (rc == 0 ? 1 : -rc);
}

/* logs -f: follow execq:out:<id> until its end; an exit code. */
static int
execq_logs_follow(struct execq_session *s, const char *id, long lines)
{
	struct execq_follow	 fw;
	redisReply		*r;
	const redisReply	*entries;
	const char		*key, *cursor;
	int			 rc = 0, first = 1;

	memset(&fw, 0, sizeof fw);
	fw.s = s;
	fw.id = id;
	fw.key = client_out_key(s->c, id);
	fw.cursor = xstrdup("0");
	if (lines > 0 &&
	    (rc = execq_logs_range(s, id, lines, 0, -1, &fw.pos)) != 0)
		goto out;
	execq_quiet_sigint();
	while (rc == 0) {
		/* The first read does not block: a gone stream is seen now. */
		key = fw.key;
		cursor = fw.cursor;
		r = execq_reply(s, "XREAD", client_xread(s->c, 100, first ? -1 :
		    EXECQ_FOLLOW_BLOCK_MS, 1, &key, &cursor));
		first = 0;
		if (r == NULL) {
			rc = -EXECQ_EXIT_FAIL;
			break;
		}
		if ((entries = execq_xread_entries(r)) != NULL &&
		    entries->elements > 0)
			rc = execq_follow_entries(&fw, entries);
		else
			rc = execq_follow_idle(&fw);
		freeReplyObject(r);
	}
out:
	free(fw.key);
	free(fw.cursor);
	return (rc < 0 ? -rc : (rc == 1 ? 0 : rc));
}

/* execq logs: print (or follow) a session's output. */
int
execq_cmd_logs(const char *redis, int argc, char **argv)
{
	struct execq_logs_opts	 lo;
	struct execq_session	 s;
	long long		 next;
	int			 rc;

	memset(&lo, 0, sizeof lo);
	execq_opts_init(&lo.o, redis);
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_getopt(&lo.o, "logs", argc, argv, "hfn:",
	    execq_logs_longopts, execq_logs_set, execq_logs_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (argc - optind != 1) {
		rc = execq_usage_error("logs", argc - optind < 1 ?
		    "no session id given" : "one session id at a time");
		goto out;
	}
	if (!execq_name_valid(argv[optind])) {
		rc = execq_usage_error("logs", "bad session id '%s': it must "
		    "match " EXECQ_NAME_RULE, argv[optind]);
		goto out;
	}
	if ((rc = execq_process_open(&s, &lo.o, "logs")) != 0)
		goto out;
	execq_logs_out.escape = !lo.raw && isatty(STDOUT_FILENO);
	if (lo.follow)
		rc = execq_logs_follow(&s, argv[optind], lo.lines);
	else
		rc = execq_logs_range(&s, argv[optind], lo.lines, 0, -1, &next);
	if (execq_logs_print_end() != 0 && rc == 0)
		rc = EXECQ_EXIT_FAIL;
out:
	execq_session_close(&s);
	execq_opts_release(&lo.o);
	return (rc);
}

/* cleanup --help. */
static void
execq_cleanup_usage(FILE *f)
{
	fputs("usage: execq cleanup [--log-dir DIR] [--max-age-hours N] "
	    "[--dry-run]\n"
	    "                     [--missing-ok] [-v]\n"
	    "\n"
	    "Removes the files of finished items (<id>.log, <id>.json,\n"
	    ".<id>.json.tmp, always together) from this host's log directory\n"
	    "once the newest of them is older than N hours. A command still\n"
	    "running keeps its files, whatever their age: the worker holds a\n"
	    "lock on its log (a session's <id>.json also says it runs). The\n"
	    "worker's start-up clean-up (log_max_age_hours) is the same rule.\n"
	    "Needs no Redis: run it where the worker runs, e.g. from cron.\n"
	    "\n"
	    "Options:\n"
	    "  --log-dir DIR        the worker's log_dir (default: "
	    "$EXECQ_LOG_DIR,\n"
	    "                       else " EXECQ_DEFAULT_LOG_DIR ")\n"
	    "  --max-age-hours N    age limit in hours, fractions allowed "
	    "(default 24);\n"
	    "                       0 means cleanup is off, as "
	    "log_max_age_hours 0\n"
	    "                       does in the worker: nothing is removed\n"
	    "  --dry-run            remove nothing; list what would go\n"
	    "  --missing-ok         a log directory that does not exist is "
	    "not an error\n"
	    "                       (a worker that never ran here)\n"
	    "  -v, --verbose        list each file removed\n"
	    "  -h, --help           show this help\n"
	    "\n"
	    "Exit status: 0; 1 if the directory cannot be read; 2 if it does "
	    "not exist\n"
	    "(without --missing-ok: a typo in a cron line must not pass "
	    "silently) or\n"
	    "on a usage error.\n", f);
}

/* cleanup's options. */
static int
execq_cleanup_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	struct execq_cleanup_opts	*co = (struct execq_cleanup_opts *)o;
	char				*end;

	switch (ch) {
	case EXECQ_OPT_LOG_DIR:
		co->log_dir = arg;
		return (0);
	case EXECQ_OPT_MAX_AGE:
		errno = 0;
		co->max_age_h = strtod(arg, &end);
		if (errno == 0 && end != arg && *end == '\0' &&
		    co->max_age_h >= 0 && co->max_age_h <= 24 * 365 * 100)
			return (0);
		execq_usage_error(cmd, "--max-age-hours wants a number of "
		    "hours >= 0, not '%s'", arg);
		return (-1);
	case EXECQ_OPT_DRY_RUN:
		co->dry_run = 1;
		return (0);
	case EXECQ_OPT_MISSING_OK:
		co->missing_ok = 1;
		return (0);
	case 'v':
		co->verbose = 1;
		return (0);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* Lists one file cleanup_logs() removed (or would). */
static void
execq_cleanup_file_cb(const char *path, void *arg)
{
	const struct execq_cleanup_opts	*co = arg;

	if (co->dry_run)
		execq_line(stdout, "would remove %s", path);
	else if (co->verbose)
		execq_line(stdout, "removed %s", path);
}

/* execq cleanup: age-based clean-up of the local log dir. */
int
execq_cmd_cleanup(const char *redis, int argc, char **argv)
{
	struct execq_cleanup_opts	 co;
	struct cleanup_stats		 st;
	struct stat			 sb;
	const char			*env;
	int				 rc;

	memset(&co, 0, sizeof co);
	memset(&st, 0, sizeof st);
	execq_opts_init(&co.o, redis);
	co.max_age_h = EXECQ_DEFAULT_MAX_AGE_H;
	if ((rc = execq_opts_getopt(&co.o, "cleanup", argc, argv, "hv",
	    execq_cleanup_longopts, execq_cleanup_set,
	    execq_cleanup_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (optind < argc) {
		rc = execq_usage_error("cleanup", "unexpected '%s'",
		    argv[optind]);
		goto out;
	}
	if (co.log_dir == NULL)
		co.log_dir = ((env = getenv("EXECQ_LOG_DIR")) != NULL &&
		    *env != '\0') ? env : EXECQ_DEFAULT_LOG_DIR;
	if (stat(co.log_dir, &sb) == -1 && errno == ENOENT) {
		if (co.missing_ok) {
			execq_line(stdout, "no log directory %s: nothing to "
			    "remove", co.log_dir);
			rc = fflush(stdout) == EOF ? 1 : 0;
			goto out;
		}
		execq_error("the log directory %s does not exist (a typo? "
		    "--missing-ok accepts that)", co.log_dir);
		rc = EXECQ_EXIT_USAGE;
		goto out;
	}
	if (co.max_age_h == 0) {
		execq_line(stdout, "cleanup is off: --max-age-hours 0 keeps "
		    "every log, as log_max_age_hours 0 does in the worker "
		    "(to remove every finished item, give a small age such "
		    "as 0.001)");
		rc = fflush(stdout) == EOF ? 1 : 0;
		goto out;
	}
	if (cleanup_logs(co.log_dir, co.max_age_h, co.dry_run,
	    execq_cleanup_file_cb, &co, &st) == -1) {
		execq_error("cannot read %s: %s", co.log_dir, strerror(errno));
		rc = 1;
		goto out;
	}
	printf("%s %u file%s (%llu bytes), %s %u of running commands, "
	    "%u recent\n", co.dry_run ? "would remove" : "removed",
	    st.removed, st.removed == 1 ? "" : "s", st.bytes,
	    co.dry_run ? "would keep" : "kept", st.kept_running,
	    st.kept_recent);
	if (fflush(stdout) == EOF) {
		execq_error("stdout: %s", strerror(errno));
		rc = 1;
	}
out:
	execq_opts_release(&co.o);
	return (rc);
}
