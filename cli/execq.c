/*
 * execq: the command-line client. It puts items on a worker's queues,
 * waits for the answers on a private reply queue and shows them.
 *
 *   execq [--redis URL] run [OPTIONS] [--] CMD [ARG...]
 *   execq [--redis URL] submit [OPTIONS] [--raw TEXT | [--] CMD [ARG...]]
 *   execq [--redis URL] spawn|ps|logs|send|keys|kill|wait|callbacks ...
 *   execq cleanup [OPTIONS]
 *
 * Exit status: the command's own for run; 124 when it (or a wait) timed
 * out; 125 when execq itself failed (no Redis, no answer, an ERROR
 * answer); 2 on a usage error. Keys and JSON are in docs/PROTOCOL.md.
 *
 * Layout: small helpers (names, ids, quoting), options, the Redis session
 * (connect, send, wait for the answer), run and submit, then main. The
 * other subcommands live in session.c, process.c and logs.c (cli/cli.h).
 */

#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/rurl.h"

#define EXECQ_VERSION		"0.1.0"

#define EXECQ_DEFAULT_URL	"redis://127.0.0.1:6379"
#define EXECQ_RUN_SOCKET	".tmp/run/redis.sock"	/* from 'make run' */
#define EXECQ_CONNECT_S		2
#define EXECQ_COMMAND_S		10	/* socket timeout per command */
#define EXECQ_BLOCK_MS		1000	/* longest XREAD BLOCK */
#define EXECQ_TIMEOUT_S		30	/* the worker's default timeout */
#define EXECQ_WAIT_SLACK_S	30	/* default --wait: timeout + this */
#define EXECQ_SPAWN_WAIT_S	30	/* default spawn --wait */
#define EXECQ_MAX_SECONDS	(365.0 * 86400)
#define EXECQ_NAME_MAX		128
#define EXECQ_ID_LEN		26

/* Crockford base32: no I, L, O or U. */
static const char	execq_base32_chars[] =
    "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

static const struct option execq_global_longopts[] = {
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "version",		no_argument,	   NULL, EXECQ_OPT_VERSION },
	{ NULL,			0,		   NULL, 0 }
};

/* run and submit share one table; run refuses submit's two extras. */
static const struct option execq_longopts[] = {
	{ "timeout",		required_argument, NULL, EXECQ_OPT_TIMEOUT },
	{ "cwd",		required_argument, NULL, EXECQ_OPT_CWD },
	{ "tier",		required_argument, NULL, EXECQ_OPT_TIER },
	{ "env",		required_argument, NULL, EXECQ_OPT_ENV },
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "priority",		required_argument, NULL, EXECQ_OPT_PRIORITY },
	{ "id",			required_argument, NULL, EXECQ_OPT_ID },
	{ "wait",		required_argument, NULL, EXECQ_OPT_WAIT },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "raw",		required_argument, NULL, EXECQ_OPT_RAW },
	{ "reply-default",	required_argument, NULL,
	    EXECQ_OPT_REPLY_DEFAULT },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

static int	execq_cmd_run(const char *, int, char **);
static int	execq_cmd_submit(const char *, int, char **);

static const struct execq_cmd {
	const char	*name;
	int		(*fn)(const char *redis, int argc, char **argv);
	const char	*summary;
} execq_cmds[] = {
	{ "run",	execq_cmd_run,
	    "run a command on a worker; replay its output and exit status" },
	{ "submit",	execq_cmd_submit,
	    "send one item and print the worker's answer as JSON" },
	{ "spawn",	execq_cmd_spawn,
	    "start a background session; print its id" },
	{ "ps",		execq_cmd_ps,
	    "list sessions (running ones; --all: recent ones too)" },
	{ "logs",	execq_cmd_logs,
	    "print a session's output; -f: follow it until it ends" },
	{ "send",	execq_cmd_send,
	    "write text (or bytes, or EOF) to a session's stdin" },
	{ "keys",	execq_cmd_keys,
	    "send key names (Enter, C-c, Up...) to a session's terminal" },
	{ "kill",	execq_cmd_kill,
	    "signal a session's process tree (default TERM)" },
	{ "wait",	execq_cmd_wait,
	    "wait for a session to end; print its final status as JSON" },
	{ "callbacks",	execq_cmd_callbacks,
	    "print EXEC_CALLBACKs as they arrive on a reply queue" },
	{ "cleanup",	execq_cmd_cleanup,
	    "remove old log files of ended sessions (local, no Redis)" },
	{ "classify",	execq_cmd_classify,
	    "what the command policy would do with a command (runs nothing)" },
	{ "approvals",	execq_cmd_approvals,
	    "list the commands waiting for a human's approval" },
	{ "approve",	execq_cmd_approve,
	    "approve a held command: its worker runs it" },
	{ "reject",	execq_cmd_reject,
	    "reject a held command: its worker answers 'rejected'" },
};

/* Prints "execq: <message>" on stderr. */
void
execq_error(const char *fmt, ...)
{
	va_list	ap;

	fflush(stdout);
	fputs("execq: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* After getopt's own message: points at the help; returns 2. */
int
execq_usage_hint(const char *cmd)
{
	fprintf(stderr, "Try 'execq%s%s --help'.\n", cmd != NULL ? " " : "",
	    cmd != NULL ? cmd : "");
	return (EXECQ_EXIT_USAGE);
}

/* Prints a usage error for subcommand cmd (NULL: none); returns 2. */
int
execq_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list	ap;

	fputs("execq: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return (execq_usage_hint(cmd));
}

/* Milliseconds on the monotonic clock. */
long long
execq_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* Milliseconds since the Unix epoch, to compare with started_ms. */
long long
execq_epoch_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* 1 if s is a usable queue name or item id: [A-Za-z0-9_.:-]{1,128}. */
int
execq_name_valid(const char *s)
{
	size_t	len;

	len = strlen(s);
	if (len == 0 || len > EXECQ_NAME_MAX || *s == '.')
		return (0);
	return (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_.:-") == len);
}

/* Fills buf with random bytes; exits 125 if the kernel cannot. */
static void
execq_random(void *buf, size_t len)
{
	unsigned char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = getrandom(p, len, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			execq_error("getrandom: %s", strerror(errno));
			exit(EXECQ_EXIT_FAIL);
		}
		p += n;
		len -= n;
	}
}

/* Writes the first nchars * 5 bits of buf as Crockford base32 into out. */
static void
execq_base32(const unsigned char *buf, size_t nchars, char *out)
{
	size_t		i, bit;
	unsigned	v, j;

	for (i = 0; i < nchars; i++) {
		v = 0;
		for (j = 0, bit = i * 5; j < 5; j++, bit++)
			v = (v << 1) | ((buf[bit / 8] >> (7 - bit % 8)) & 1);
		out[i] = execq_base32_chars[v];
	}
}

/* A ULID: 48-bit milliseconds then 80 random bits, 26 base32 characters. */
char *
execq_make_id(void)
{
	struct timespec	 ts;
	unsigned char	 rnd[10];
	uint64_t	 ms;
	char		*id;
	int		 i;

	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	id = xmalloc(EXECQ_ID_LEN + 1);
	for (i = 9; i >= 0; i--) {
		id[i] = execq_base32_chars[ms & 31];
		ms >>= 5;
	}
	execq_random(rnd, sizeof rnd);
	execq_base32(rnd, 16, id + 10);
	id[EXECQ_ID_LEN] = '\0';
	return (id);
}

/* Replaces each byte outside [A-Za-z0-9_.:-] with '_', in place. */
static void
execq_sanitize_name(char *s)
{
	char	*p;

	for (p = s; *p != '\0'; p++) {
		if (strchr("_.:-", *p) == NULL &&
		    !(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9'))
			*p = '_';
	}
}

/* "cli.<hostname>.<pid>.<6 random>", made safe as a queue name. */
static char *
execq_reply_name(void)
{
	char		 host[256], suffix[7], *name;
	unsigned char	 rnd[4];

	if (gethostname(host, sizeof host) == -1 || *host == '\0')
		strcpy(host, "host");
	host[64] = '\0';	/* keeps the whole name under 128 */
	execq_sanitize_name(host);
	execq_random(rnd, sizeof rnd);
	execq_base32(rnd, 6, suffix);
	suffix[6] = '\0';
	xasprintf(&name, "cli.%s.%ld.%s", host, (long)getpid(), suffix);
	return (name);
}

/*
 * "execq.<user>": where spawn asks for callbacks and where callbacks
 * looks by default, so both agree without being told. The user is $USER,
 * else the password entry, else the uid.
 */
char *
execq_user_queue(void)
{
	struct passwd	*pw;
	const char	*user;
	char		*name;

	user = getenv("USER");
	if ((user == NULL || *user == '\0') &&
	    (pw = getpwuid(getuid())) != NULL)
		user = pw->pw_name;
	if (user == NULL || *user == '\0')
		xasprintf(&name, "execq.%lu", (unsigned long)getuid());
	else
		xasprintf(&name, "execq.%.*s", EXECQ_NAME_MAX - 6, user);
	execq_sanitize_name(name);
	return (name);
}

/* Appends word to the buffer at *s, in single quotes if the shell needs. */
static void
execq_quote_word(char **s, size_t *len, const char *word)
{
	const char	*safe = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "abcdefghijklmnopqrstuvwxyz0123456789_./=:,+@%-";
	const char	*p;
	char		*o;

	/* Worst case: every byte is ' (4 bytes each), two quotes, a space. */
	*s = xrealloc(*s, *len + strlen(word) * 4 + 4);
	o = *s + *len;
	if (*len > 0)
		*o++ = ' ';
	if (*word != '\0' && strspn(word, safe) == strlen(word))
		o = stpcpy(o, word);
	else {
		*o++ = '\'';
		for (p = word; *p != '\0'; p++) {
			if (*p == '\'')
				o = stpcpy(o, "'\\''");
			else
				*o++ = *p;
		}
		*o++ = '\'';
	}
	*o = '\0';
	*len = o - *s;
}

/* One word is a shell command as is; several are quoted and joined. */
char *
execq_join_command(int argc, char **argv)
{
	char	*s = NULL;
	size_t	 len = 0;
	int	 i;

	if (argc == 1)
		return (xstrdup(argv[0]));
	for (i = 0; i < argc; i++)
		execq_quote_word(&s, &len, argv[i]);
	return (s);
}

/* Parses a positive number of seconds; -1 if it is not one. */
int
execq_parse_seconds(const char *s, double *out)
{
	char	*end;
	double	 v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0) ||
	    v > EXECQ_MAX_SECONDS)
		return (-1);
	*out = v;
	return (0);
}

/* Parses a decimal integer from min to max; -1 if it is not one. */
int
execq_parse_long(const char *s, long min, long max, long *out)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return (-1);
	*out = v;
	return (0);
}

/* fwrite and fflush; -1 (said) if stdout or stderr is gone. */
int
execq_write_all(FILE *f, const void *buf, size_t len)
{
	if ((len > 0 && fwrite(buf, 1, len, f) != len) || fflush(f) == EOF) {
		execq_error("%s: %s", f == stdout ? "stdout" : "write",
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* Adds --env K=V to o->env; -1 (said) if it is not K=V or not UTF-8. */
static int
execq_opts_add_env(struct execq_opts *o, const char *cmd, const char *arg)
{
	const char	*eq;
	char		*key;
	int		 rc;

	if ((eq = strchr(arg, '=')) == NULL || eq == arg) {
		execq_usage_error(cmd, "--env wants NAME=VALUE, not '%s'", arg);
		return (-1);
	}
	if (o->env == NULL)
		o->env = json_object();
	key = xstrndup(arg, eq - arg);
	rc = json_object_set_new(o->env, key, json_string(eq + 1));
	free(key);
	if (rc == -1)
		execq_usage_error(cmd, "--env '%s' is not valid UTF-8", arg);
	return (rc);
}

/* Applies one parsed option; -1 (said) on a bad value. */
int
execq_opts_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	switch (ch) {
	case EXECQ_OPT_TIMEOUT:
		if (execq_parse_seconds(arg, &o->timeout_s) == -1)
			goto bad;
		return (0);
	case EXECQ_OPT_WAIT:
		if (execq_parse_seconds(arg, &o->wait_s) == -1)
			goto bad;
		return (0);
	case EXECQ_OPT_ENV:
		return (execq_opts_add_env(o, cmd, arg));
	case EXECQ_OPT_CWD:
		o->cwd = arg;
		return (0);
	case EXECQ_OPT_TIER:
		o->tier = arg;
		return (0);
	case EXECQ_OPT_QUEUE:
		o->queue = arg;
		return (0);
	case EXECQ_OPT_PRIORITY:
		o->lane = arg;
		return (0);
	case EXECQ_OPT_ID:
		o->id = arg;
		return (0);
	case EXECQ_OPT_REDIS:
		o->redis = arg;
		return (0);
	case EXECQ_OPT_RAW:
		o->raw = arg;
		o->submit_only = 1;
		return (0);
	case EXECQ_OPT_REPLY_DEFAULT:
		o->reply_default = arg;
		o->submit_only = 1;
		return (0);
	}
bad:
	execq_usage_error(cmd, "%s wants a number of seconds > 0, not '%s'",
	    ch == EXECQ_OPT_WAIT ? "--wait" : "--timeout", arg);
	return (-1);
}

/* Checks names and combinations once every option is known. */
static int
execq_opts_check(struct execq_opts *o, const char *cmd)
{
	if (!execq_name_valid(o->queue))
		goto badname;
	if (strcmp(o->lane, "high") != 0 && strcmp(o->lane, "normal") != 0 &&
	    strcmp(o->lane, "low") != 0) {
		execq_usage_error(cmd, "--priority is high, normal or low, "
		    "not '%s'", o->lane);
		return (-1);
	}
	if (o->id != NULL && !execq_name_valid(o->id)) {
		execq_usage_error(cmd, "bad --id '%s': it must match "
		    EXECQ_NAME_RULE, o->id);
		return (-1);
	}
	if (o->reply_to != NULL && !execq_name_valid(o->reply_to)) {
		execq_usage_error(cmd, "bad --reply-to '%s': it must match "
		    EXECQ_NAME_RULE, o->reply_to);
		return (-1);
	}
	if (!execq_name_valid(o->reply_default)) {
		execq_usage_error(cmd, "bad --reply-default '%s'",
		    o->reply_default);
		return (-1);
	}
	if (o->command != NULL && *o->command == '\0') {
		execq_usage_error(cmd, "the command is empty");
		return (-1);
	}
	return (0);

badname:
	execq_usage_error(cmd, "bad queue name '%s': it must match "
	    EXECQ_NAME_RULE, o->queue);
	return (-1);
}

/* The options loop every subcommand shares (see cli/cli.h). */
int
execq_opts_getopt(struct execq_opts *o, const char *cmd, int argc,
    char **argv, const char *shortopts, const struct option *longopts,
    execq_opts_set_fn set, void (*usage)(FILE *))
{
	int	ch;

	if (set == NULL)
		set = execq_opts_set;
	optind = 0;	/* GNU: start over, argv[0] is the subcommand */
	while ((ch = getopt_long(argc, argv, shortopts, longopts,
	    NULL)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			return (1);
		}
		if (ch == '?') {		/* getopt said why */
			execq_usage_hint(cmd);
			return (-1);
		}
		if (set(o, cmd, ch, optarg) == -1)
			return (-1);
	}
	return (0);
}

/* Parses options and command words: 0, 1 after --help, -1 (said) if bad. */
int
execq_opts_parse(struct execq_opts *o, const char *cmd, int argc,
    char **argv, const struct option *longopts, execq_opts_set_fn set,
    void (*usage)(FILE *))
{
	int	rc;

	if ((rc = execq_opts_getopt(o, cmd, argc, argv, "+h", longopts, set,
	    usage)) != 0)
		return (rc);
	if (optind < argc)
		o->command = execq_join_command(argc - optind, argv + optind);
	if (o->wait_s == 0 && o->background)	/* EXEC_STARTED is at once */
		o->wait_s = EXECQ_SPAWN_WAIT_S;
	else if (o->wait_s == 0 && o->raw == NULL)	/* raw: submit_raw */
		o->wait_s = (o->timeout_s > 0 ? o->timeout_s :
		    EXECQ_TIMEOUT_S) + EXECQ_WAIT_SLACK_S;
	return (execq_opts_check(o, cmd));
}

/* Defaults for every subcommand; redis is the global --redis, if any. */
void
execq_opts_init(struct execq_opts *o, const char *redis)
{
	const char	*queue;

	memset(o, 0, sizeof *o);
	o->redis = redis;
	queue = getenv("EXECQ_QUEUE");
	o->queue = (queue != NULL && *queue != '\0') ? queue :
	    EXECQ_DEFAULT_QUEUE;
	o->lane = "normal";
	o->reply_default = EXECQ_DEFAULT_REPLIES;
	o->tail_lines = -1;
}

/* Frees what parsing allocated. */
void
execq_opts_release(struct execq_opts *o)
{
	json_decref(o->env);
	free(o->command);
	memset(o, 0, sizeof *o);
}

/* Seconds as JSON: an integer when whole, so the item reads naturally. */
static json_t *
execq_json_seconds(double v)
{
	long long	whole;

	whole = (long long)v;
	return (whole == v ? json_integer(whole) : json_real(v));
}

/* A session's extra EXEC arguments (PROTOCOL.md section 11). */
static void
execq_item_session_args(const struct execq_opts *o, json_t *args)
{
	json_object_set_new(args, "background", json_true());
	if (o->pty)
		json_object_set_new(args, "pty", json_true());
	if (o->rows > 0)
		json_object_set_new(args, "rows", json_integer(o->rows));
	if (o->cols > 0)
		json_object_set_new(args, "cols", json_integer(o->cols));
	if (o->idle_timeout_s > 0)
		json_object_set_new(args, "idle_timeout_s",
		    execq_json_seconds(o->idle_timeout_s));
	if (o->tail_lines >= 0)
		json_object_set_new(args, "tail_lines",
		    json_integer(o->tail_lines));
}

/* The EXEC item as compact JSON, or NULL (said) if a string is not UTF-8. */
char *
execq_item_json(const struct execq_opts *o, const char *id,
    const char *reply)
{
	json_t		*args, *root = NULL;
	char		*text = NULL;

	if ((args = json_pack("{s:s}", "command", o->command)) == NULL)
		goto out;
	if (o->cwd != NULL &&
	    json_object_set_new(args, "cwd", json_string(o->cwd)) == -1)
		goto out;
	if (o->tier != NULL &&
	    json_object_set_new(args, "tier", json_string(o->tier)) == -1)
		goto out;
	if (o->timeout_s > 0)
		json_object_set_new(args, "timeout_s",
		    execq_json_seconds(o->timeout_s));
	if (o->background)
		execq_item_session_args(o, args);
	if (o->env != NULL)
		json_object_set(args, "env", o->env);
	root = json_pack("{s:s, s:s, s:s, s:O}", "id", id, "type", "EXEC",
	    "reply_to", reply, "args", args);
	if (root != NULL)
		text = json_dumps(root, JSON_COMPACT);
out:
	if (text == NULL)
		execq_error("the command or --cwd is not valid UTF-8");
	json_decref(args);
	json_decref(root);
	return (text);
}

/*
 * Sends one command; the reply, or NULL (said, "Redis at URL: WHAT: why")
 * if the connection failed or Redis answered with an error.
 */
redisReply *
execq_command(struct execq_session *s, const char *what, const char *fmt,
    ...)
{
	redisReply	*r;
	va_list		 ap;

	va_start(ap, fmt);
	r = redisvCommand(s->c, fmt, ap);
	va_end(ap);
	if (r == NULL) {
		execq_error("Redis at %s: %s: %s", s->display, what,
		    s->c->errstr);
		return (NULL);
	}
	if (r->type == REDIS_REPLY_ERROR) {
		execq_error("Redis at %s: %s: %s", s->display, what, r->str);
		freeReplyObject(r);
		return (NULL);
	}
	return (r);
}

/* Picks the address: flag, $EXECQ_REDIS_URL, ./.tmp/run/redis.sock, local. */
static int
execq_redis_url(const char *flag, struct rurl *u, char **cause)
{
	const char	*url = flag;
	struct stat	 sb;

	if (url == NULL || *url == '\0')
		url = getenv("EXECQ_REDIS_URL");
	if (url != NULL && *url != '\0')
		return (rurl_parse(url, u, cause));
	if (stat(EXECQ_RUN_SOCKET, &sb) == 0) {
		/* Relative, so a deep checkout stays under sun_path's limit. */
		memset(u, 0, sizeof *u);
		u->port = 6379;
		u->path = xstrdup(EXECQ_RUN_SOCKET);
		return (0);
	}
	return (rurl_parse(EXECQ_DEFAULT_URL, u, cause));
}

/* AUTH and SELECT as the URL asks; -1 (said) if refused. */
static int
execq_login(struct execq_session *s, const struct rurl *u)
{
	redisReply	*r;
	char		 db[16];

	if (u->password != NULL) {
		if (u->user != NULL)
			r = execq_command(s, "AUTH", "AUTH %s %s", u->user,
			    u->password);
		else
			r = execq_command(s, "AUTH", "AUTH %s", u->password);
		if (r == NULL)
			return (-1);
		freeReplyObject(r);
	}
	if (u->db == 0)
		return (0);
	snprintf(db, sizeof db, "%d", u->db);
	if ((r = execq_command(s, "SELECT", "SELECT %s", db)) == NULL)
		return (-1);
	freeReplyObject(r);
	return (0);
}

/* Connects (2 s timeout) and logs in; 0, or an exit code (said). */
int
execq_session_open(struct execq_session *s, const struct execq_opts *o)
{
	struct rurl	 u;
	struct timeval	 tv = { EXECQ_CONNECT_S, 0 };
	char		*cause = NULL;
	int		 rc = EXECQ_EXIT_FAIL;

	memset(s, 0, sizeof *s);
	if (execq_redis_url(o->redis, &u, &cause) == -1) {
		execq_error("%s", cause);
		free(cause);
		return (EXECQ_EXIT_USAGE);
	}
	s->display = rurl_display(&u);
	s->queue = xstrdup(o->queue);
	xasprintf(&s->item_key, "q:%s:%s", o->queue, o->lane);
	if (u.path != NULL)
		s->c = redisConnectUnixWithTimeout(u.path, tv);
	else
		s->c = redisConnectWithTimeout(u.host, u.port, tv);
	if (s->c == NULL || s->c->err) {
		execq_error("cannot reach Redis at %s: %s (start one with "
		    "'make run', or set EXECQ_REDIS_URL)", s->display,
		    s->c != NULL ? s->c->errstr : "out of memory");
		goto out;
	}
	tv.tv_sec = EXECQ_COMMAND_S;
	if (redisSetTimeout(s->c, tv) != REDIS_OK)
		execq_error("Redis at %s: %s", s->display, s->c->errstr);
	else if (execq_login(s, &u) == 0)
		rc = 0;
out:
	rurl_release(&u);
	return (rc);
}

/* Deletes the private reply streams, disconnects and frees. */
void
execq_session_close(struct execq_session *s)
{
	redisReply	*r;
	char		*normal, *high;

	if (s->c != NULL && s->c->err == 0 && s->reply != NULL) {
		xasprintf(&normal, "q:%s:normal", s->reply);
		xasprintf(&high, "q:%s:high", s->reply);
		if ((r = execq_command(s, "DEL", "DEL %s %s", normal,
		    high)) != NULL)
			freeReplyObject(r);
		free(normal);
		free(high);
	}
	if (s->c != NULL)
		redisFree(s->c);
	free(s->display);
	free(s->queue);
	free(s->item_key);
	free(s->reply);
	free(s->answer_key);
	free(s->cursor);
	free(s->notice_key);
	free(s->notice_cursor);
	memset(s, 0, sizeof *s);
}

/* Answers go to a new private queue, read from its start. */
void
execq_session_private_reply(struct execq_session *s)
{
	s->reply = execq_reply_name();
	xasprintf(&s->answer_key, "q:%s:normal", s->reply);
	s->cursor = xstrdup("0");
	xasprintf(&s->notice_key, "q:%s:high", s->reply);
	s->notice_cursor = xstrdup("0");
}

/* The newest entry id of a stream, "0" if it has none; NULL (said). */
char *
execq_stream_last_id(struct execq_session *s, const char *key)
{
	redisReply	*r, *e;
	char		*id;

	r = execq_command(s, "XREVRANGE", "XREVRANGE %s + - COUNT 1", key);
	if (r == NULL)
		return (NULL);
	if (r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
	    (e = r->element[0])->type == REDIS_REPLY_ARRAY &&
	    e->elements > 0 && e->element[0]->type == REDIS_REPLY_STRING)
		id = xstrdup(e->element[0]->str);
	else
		id = xstrdup("0");
	freeReplyObject(r);
	return (id);
}

/* The entries of a one-stream XREAD reply; NULL if NIL or misshapen. */
const redisReply *
execq_xread_entries(const redisReply *r)
{
	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->element[0]->type != REDIS_REPLY_ARRAY ||
	    r->element[0]->elements != 2 ||
	    r->element[0]->element[1]->type != REDIS_REPLY_ARRAY)
		return (NULL);
	return (r->element[0]->element[1]);
}

/* An entry's id, or NULL if the entry is not [id, [field, value...]]. */
const char *
execq_entry_id(const redisReply *e)
{
	if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
	    e->element[0]->type != REDIS_REPLY_STRING)
		return (NULL);
	return (e->element[0]->str);
}

/* The value of an entry's field name, or NULL (absent, or deleted). */
const redisReply *
execq_entry_field(const redisReply *e, const char *name)
{
	const redisReply	*f;
	size_t			 j;

	if (execq_entry_id(e) == NULL ||
	    (f = e->element[1])->type != REDIS_REPLY_ARRAY)
		return (NULL);
	for (j = 0; j + 1 < f->elements; j += 2) {
		if (f->element[j]->type == REDIS_REPLY_STRING &&
		    strcmp(f->element[j]->str, name) == 0 &&
		    f->element[j + 1]->type == REDIS_REPLY_STRING)
			return (f->element[j + 1]);
	}
	return (NULL);
}

/* Ctrl-C ends a follower at once: nothing is buffered, nothing to say. */
static void
execq_sigint(int sig)
{
	(void)sig;
	_exit(EXECQ_EXIT_INTERRUPTED);
}

/* Makes SIGINT exit 130 without a word (logs -f, callbacks). */
void
execq_quiet_sigint(void)
{
	struct sigaction	sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = execq_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

/* Reads answers from a shared queue, after its newest entry; -1 (said). */
int
execq_session_shared_reply(struct execq_session *s, const char *name)
{
	xasprintf(&s->answer_key, "q:%s:normal", name);
	s->cursor = execq_stream_last_id(s, s->answer_key);
	if (s->cursor == NULL)
		return (-1);
	/* An APPROVAL_REQUEST for our item would come here. */
	xasprintf(&s->notice_key, "q:%s:high", name);
	s->notice_cursor = execq_stream_last_id(s, s->notice_key);
	return (s->notice_cursor != NULL ? 0 : -1);
}

/* Frees an answer; NULL members ok. */
void
execq_answer_release(struct execq_answer *a)
{
	json_decref(a->root);
	free(a->text);
	memset(a, 0, sizeof *a);
}

/* 1 if the answer's type is one w wants. */
static int
execq_answer_type_ok(const json_t *root, const struct execq_want *w)
{
	const char		*type;
	const char * const	*t;

	if (w->types == NULL)
		return (1);
	if ((type = json_string_value(json_object_get(root, "type"))) == NULL)
		return (0);
	for (t = w->types; *t != NULL; t++) {
		if (strcmp(type, *t) == 0)
			return (1);
	}
	return (0);
}

/*
 * Takes one "item" value if it is the answer we wait for: its id equals
 * w->id, or is null or absent and w->null_id says that a worker that
 * could not read the id answered us; and its type is one of w->types.
 * 1 if taken into *a.
 */
static int
execq_answer_take(const redisReply *v, const struct execq_want *w,
    struct execq_answer *a)
{
	json_t		*root, *id;

	if (v->type != REDIS_REPLY_STRING)
		return (0);
	root = json_loadb(v->str, v->len, JSON_ALLOW_NUL, NULL);
	if (!json_is_object(root))
		goto skip;
	id = json_object_get(root, "id");
	if (id == NULL || json_is_null(id)) {
		if (!w->null_id)
			goto skip;
	} else if (w->id == NULL || !json_is_string(id) ||
	    strcmp(json_string_value(id), w->id) != 0)
		goto skip;
	if (!execq_answer_type_ok(root, w))
		goto skip;
	a->root = root;
	a->text = xmalloc(v->len + 1);
	memcpy(a->text, v->str, v->len);
	a->text[v->len] = '\0';
	a->len = v->len;
	return (1);

skip:
	json_decref(root);
	return (0);
}

/* Entries of one stream of an XREAD reply, or NULL. */
static const redisReply *
execq_xread_stream(const redisReply *r, size_t k, const char **name)
{
	const redisReply	*st;

	if (r->type != REDIS_REPLY_ARRAY || k >= r->elements ||
	    (st = r->element[k])->type != REDIS_REPLY_ARRAY ||
	    st->elements != 2 || st->element[0]->type != REDIS_REPLY_STRING ||
	    st->element[1]->type != REDIS_REPLY_ARRAY)
		return (NULL);
	*name = st->element[0]->str;
	return (st->element[1]);
}

/*
 * An APPROVAL_REQUEST for our item: says so on stderr, once, and moves
 * the deadline to the request's expiry (plus slack).
 */
static void
execq_notice(const redisReply *v, const struct execq_want *w,
    long long *deadline)
{
	json_t		*o;
	const char	*type, *id, *req;
	long long	 left;

	if ((o = json_loadb(v->str, v->len, 0, NULL)) == NULL)
		return;
	type = json_string_value(json_object_get(o, "type"));
	id = json_string_value(json_object_get(o, "id"));
	req = json_string_value(json_object_get(o, "request"));
	if (type != NULL && strcmp(type, "APPROVAL_REQUEST") == 0 &&
	    id != NULL && w->id != NULL && strcmp(id, w->id) == 0 &&
	    req != NULL) {
		left = json_integer_value(json_object_get(o, "expires_ms")) -
		    execq_epoch_ms();
		execq_error("held for approval (%s): %s",
		    json_string_value(json_object_get(o, "rule")),
		    json_string_value(json_object_get(o, "reason")));
		execq_error("waiting up to %lld s; approve with 'execq approve "
		    "%s', or 'execq reject %s --reason ...'", left / 1000, req,
		    req);
		if (execq_now_ms() + left + EXECQ_SLACK_MS > *deadline)
			*deadline = execq_now_ms() + left + EXECQ_SLACK_MS;
	}
	json_decref(o);
}

/*
 * Looks through one stream's entries, moving its cursor; 1 if *a was
 * taken (answers), or notices read (the high lane).
 */
static int
execq_answer_scan(char **cursor, const redisReply *entries,
    const struct execq_want *w, struct execq_answer *a, long long *deadline)
{
	const redisReply	*e, *f;
	size_t			 i, j;

	for (i = 0; i < entries->elements; i++) {
		e = entries->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING)
			continue;
		free(*cursor);
		*cursor = xstrdup(e->element[0]->str);
		if ((f = e->element[1])->type != REDIS_REPLY_ARRAY)
			continue;	/* a deleted entry */
		for (j = 0; j + 1 < f->elements; j += 2) {
			if (f->element[j]->type != REDIS_REPLY_STRING ||
			    strcmp(f->element[j]->str, "item") != 0)
				continue;
			if (a == NULL)
				execq_notice(f->element[j + 1], w, deadline);
			else if (execq_answer_take(f->element[j + 1], w, a))
				return (1);
		}
	}
	return (0);
}

/* One XREAD reply: answers and, on a private queue, notices. */
static int
execq_answer_read(struct execq_session *s, const redisReply *r,
    const struct execq_want *w, struct execq_answer *a, long long *deadline)
{
	const redisReply	*entries;
	const char		*name;
	size_t			 k;
	int			 found = 0;

	for (k = 0; (entries = execq_xread_stream(r, k, &name)) != NULL;
	    k++) {
		if (s->notice_key != NULL && strcmp(name, s->notice_key) == 0)
			execq_answer_scan(&s->notice_cursor, entries, w, NULL,
			    deadline);
		else if (!found)
			found = execq_answer_scan(&s->cursor, entries, w, a,
			    deadline);
	}
	return (found);
}

/*
 * Waits up to wait_ms for the answer, blocking at most EXECQ_BLOCK_MS at a
 * time. 1 with *a filled, 0 at the deadline, -1 (said) on a Redis error.
 */
int
execq_answer_wait(struct execq_session *s, const struct execq_want *w,
    long long wait_ms, struct execq_answer *a)
{
	redisReply	*r;
	long long	 deadline, left;
	char		 block[32];
	int		 found;

	deadline = execq_now_ms() + wait_ms;
	for (;;) {
		if ((left = deadline - execq_now_ms()) <= 0)
			return (0);
		/* BLOCK 0 would mean forever. */
		snprintf(block, sizeof block, "%lld",
		    left > EXECQ_BLOCK_MS ? EXECQ_BLOCK_MS : left);
		if (s->notice_key != NULL)
			r = execq_command(s, "XREAD", "XREAD COUNT 16 BLOCK %s "
			    "STREAMS %s %s %s %s", block, s->answer_key,
			    s->notice_key, s->cursor, s->notice_cursor);
		else
			r = execq_command(s, "XREAD", "XREAD COUNT 16 BLOCK %s "
			    "STREAMS %s %s", block, s->answer_key, s->cursor);
		if (r == NULL)
			return (-1);
		found = (r->type != REDIS_REPLY_NIL &&
		    execq_answer_read(s, r, w, a, &deadline));
		freeReplyObject(r);
		if (found)
			return (1);
	}
}

/* Says that nobody answered in time and that the item is still queued. */
static void
execq_no_answer(const struct execq_session *s, const struct execq_opts *o,
    const char *id)
{
	execq_error("no answer from a worker on queue '%s' within %g s "
	    "(is execq-worker running with this Redis and queue?)",
	    o->queue, o->wait_s);
	execq_error("the item%s%s stays on %s: a worker may still run it "
	    "later", id != NULL ? " " : "", id != NULL ? id : "",
	    s->item_key);
}

/* XADDs text as the item and waits for the answer: 0, or an exit code. */
static int
execq_exchange(struct execq_session *s, const struct execq_opts *o,
    const char *text, const struct execq_want *w, struct execq_answer *a)
{
	redisReply	*r;

	r = execq_command(s, "XADD", "XADD %s * item %b", s->item_key, text,
	    strlen(text));
	if (r == NULL)
		return (EXECQ_EXIT_FAIL);
	freeReplyObject(r);
	switch (execq_answer_wait(s, w, (long long)(o->wait_s * 1000 + 0.5),
	    a)) {
	case 1:
		return (0);
	case 0:
		execq_no_answer(s, o, w->id);
		return (EXECQ_EXIT_FAIL);
	default:
		return (EXECQ_EXIT_FAIL);
	}
}

/*
 * Builds the EXEC item for o->command and sends it: 0, or an exit code.
 * A foreground item is answered on a new private queue. A session's
 * reply_to must outlive us, since its EXEC_CALLBACK comes much later: it
 * is --reply-to or execq.<user>, shared, so EXEC_STARTED is read from
 * its newest entry before the XADD on, and only with our id.
 */
int
execq_exchange_exec(struct execq_session *s, const struct execq_opts *o,
    const char * const *types, struct execq_answer *a)
{
	struct execq_want	 w;
	char			*id, *reply, *text = NULL;
	int			 rc = EXECQ_EXIT_FAIL;

	id = (o->id != NULL) ? xstrdup(o->id) : execq_make_id();
	w.id = id;
	w.types = types;
	w.null_id = !o->background;
	if (!o->background) {
		execq_session_private_reply(s);
		reply = xstrdup(s->reply);
	} else {
		reply = (o->reply_to != NULL) ? xstrdup(o->reply_to) :
		    execq_user_queue();
		if (execq_session_shared_reply(s, reply) == -1)
			goto out;
	}
	if ((text = execq_item_json(o, id, reply)) == NULL)
		rc = EXECQ_EXIT_USAGE;
	else
		rc = execq_exchange(s, o, text, &w, a);
out:
	free(text);
	free(reply);
	free(id);
	return (rc);
}

/* Writes a JSON string's bytes (NULs included) to f. */
static void
execq_write_string(FILE *f, const json_t *v)
{
	if (json_is_string(v))
		fwrite(json_string_value(v), 1, json_string_length(v), f);
}

/* Prints "execq: <code>: <message>" for an ERROR answer; returns 125. */
int
execq_print_error(const json_t *root)
{
	const json_t	*err;
	const char	*code, *msg;

	err = json_object_get(root, "error");
	code = json_string_value(json_object_get(err, "code"));
	msg = json_string_value(json_object_get(err, "message"));
	execq_error("%s: %s", code != NULL ? code : "error",
	    msg != NULL ? msg : "(no message)");
	return (EXECQ_EXIT_FAIL);
}

/* Replays an EXEC_RESULT on stdout and stderr; returns the exit code. */
static int
execq_print_result(const json_t *root)
{
	const json_t	*code;
	const char	*log_path;
	double		 duration_ms;

	execq_write_string(stdout, json_object_get(root, "stdout"));
	if (fflush(stdout) == EOF) {
		execq_error("stdout: %s", strerror(errno));
		return (EXECQ_EXIT_FAIL);
	}
	execq_write_string(stderr, json_object_get(root, "stderr"));
	if (json_is_true(json_object_get(root, "truncated"))) {
		log_path = json_string_value(json_object_get(root,
		    "log_path"));
		execq_error("output truncated; full log: %s",
		    log_path != NULL ? log_path : "(none)");
	}
	if (json_is_true(json_object_get(root, "timed_out"))) {
		duration_ms = json_number_value(json_object_get(root,
		    "duration_ms"));
		execq_error("timed out after %.1f s; the process tree was "
		    "killed", duration_ms / 1000);
		return (EXECQ_EXIT_TIMED_OUT);
	}
	code = json_object_get(root, "exit_code");
	if (!json_is_integer(code) || json_integer_value(code) < 0 ||
	    json_integer_value(code) > 255) {
		execq_error("bad answer from the worker: no exit_code 0-255");
		return (EXECQ_EXIT_FAIL);
	}
	return ((int)json_integer_value(code));
}

/* run --help. */
static void
execq_run_usage(FILE *f)
{
	fputs("usage: execq run [OPTIONS] [--] CMD [ARG...]\n"
	    "\n"
	    "Runs CMD on an execq-worker, replays its stdout and stderr here,\n"
	    "and exits with its exit status. One word is a shell command as\n"
	    "is (execq run 'ls | wc -l'); several words are quoted and\n"
	    "joined, so they run as that argv (execq run -- sh -c 'exit 3').\n"
	    "\n"
	    "Options:\n"
	    "  --timeout S     kill the command after S seconds "
	    "(default: the worker's)\n"
	    "  --cwd DIR       working directory on the worker\n"
	    "  --tier TIER     read_only or read_write: lower the queue's "
	    "tier\n"
	    "  --env K=V       set an environment variable (repeatable)\n"
	    "  --queue Q       work queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --priority P    high, normal or low (default: normal)\n"
	    "  --id ID         item id (default: a new ULID)\n"
	    "  --wait S        give up after S seconds "
	    "(default: timeout, else 30, + 30)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: the command's; 124 if it timed out; 125 if execq\n"
	    "failed or the worker refused the item; 2 on a usage error.\n", f);
}

/* The answers that end a run. */
static const char * const execq_run_types[] = { "EXEC_RESULT", "ERROR",
    NULL };

/* execq run: submit, wait, replay the output, exit with the command's code. */
static int
execq_cmd_run(const char *redis, int argc, char **argv)
{
	struct execq_opts	 o;
	struct execq_session	 s;
	struct execq_answer	 a = { NULL, NULL, 0 };
	const char		*type;
	int			 rc;

	execq_opts_init(&o, redis);
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_parse(&o, "run", argc, argv, execq_longopts,
	    NULL, execq_run_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (o.submit_only) {
		rc = execq_usage_error("run", "--raw and --reply-default are "
		    "submit options");
		goto out;
	}
	if (o.command == NULL) {
		rc = execq_usage_error("run", "no command given");
		goto out;
	}
	if ((rc = execq_session_open(&s, &o)) != 0 ||
	    (rc = execq_exchange_exec(&s, &o, execq_run_types, &a)) != 0)
		goto out;
	type = json_string_value(json_object_get(a.root, "type"));
	if (strcmp(type, "ERROR") == 0)
		rc = execq_print_error(a.root);
	else
		rc = execq_print_result(a.root);
out:
	execq_answer_release(&a);
	execq_session_close(&s);
	execq_opts_release(&o);
	return (rc);
}

/* submit --help. */
static void
execq_submit_usage(FILE *f)
{
	fputs("usage: execq submit [OPTIONS] [--] CMD [ARG...]\n"
	    "       execq submit [OPTIONS] --raw TEXT\n"
	    "\n"
	    "Sends one EXEC item (CMD as for 'execq run') and prints the\n"
	    "worker's answer, EXEC_RESULT or ERROR, as one line of JSON.\n"
	    "\n"
	    "Options: those of 'execq run', and\n"
	    "  --raw TEXT          send TEXT verbatim as the item (to test\n"
	    "                      bad input); the answer is read from TEXT's\n"
	    "                      reply_to, else from the worker's default\n"
	    "                      reply queue\n"
	    "  --reply-default Q   the worker's default reply queue "
	    "(default: replies)\n"
	    "\n"
	    "Exit status: 0 if an answer came, even an ERROR; 125 if none\n"
	    "came or execq failed; 2 on a usage error.\n", f);
}

/*
 * submit --raw: the worker may not be able to read an id or reply_to from
 * TEXT, so read TEXT's reply_to if it has a usable one, else the default
 * reply queue, from its newest entry before the XADD on.
 */
static int
execq_submit_raw(struct execq_session *s, struct execq_opts *o,
    struct execq_answer *a)
{
	struct execq_want	 w = { NULL, NULL, 1 };
	json_t			*root;
	const char		*reply;
	double			 timeout;
	int			 rc = EXECQ_EXIT_FAIL;

	root = json_loads(o->raw, 0, NULL);	/* NULL if not JSON */
	w.id = json_string_value(json_object_get(root, "id"));
	reply = json_string_value(json_object_get(root, "reply_to"));
	if (reply == NULL || !execq_name_valid(reply))
		reply = o->reply_default;
	if (o->wait_s == 0) {
		timeout = json_number_value(json_object_get(json_object_get(
		    root, "args"), "timeout_s"));
		if (!(timeout > 0 && timeout <= EXECQ_MAX_SECONDS))
			timeout = EXECQ_TIMEOUT_S;
		o->wait_s = timeout + EXECQ_WAIT_SLACK_S;
	}
	if (execq_session_shared_reply(s, reply) == 0)
		rc = execq_exchange(s, o, o->raw, &w, a);
	json_decref(root);
	return (rc);
}

/* execq submit: send one item, print the answer as received. */
static int
execq_cmd_submit(const char *redis, int argc, char **argv)
{
	struct execq_opts	 o;
	struct execq_session	 s;
	struct execq_answer	 a = { NULL, NULL, 0 };
	int			 rc;

	execq_opts_init(&o, redis);
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_parse(&o, "submit", argc, argv, execq_longopts,
	    NULL, execq_submit_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if ((o.raw == NULL) == (o.command == NULL)) {
		rc = execq_usage_error("submit", "give either a command or "
		    "--raw TEXT");
		goto out;
	}
	if (o.raw != NULL && (o.id != NULL || o.cwd != NULL ||
	    o.env != NULL || o.timeout_s > 0)) {
		rc = execq_usage_error("submit", "--raw TEXT is sent as is: "
		    "--id, --cwd, --env and --timeout do not apply");
		goto out;
	}
	if ((rc = execq_session_open(&s, &o)) != 0)
		goto out;
	if (o.raw != NULL)
		rc = execq_submit_raw(&s, &o, &a);
	else
		rc = execq_exchange_exec(&s, &o, NULL, &a);
	if (rc == 0) {
		fwrite(a.text, 1, a.len, stdout);
		fputc('\n', stdout);
		if (fflush(stdout) == EOF) {
			execq_error("stdout: %s", strerror(errno));
			rc = EXECQ_EXIT_FAIL;
		}
	}
out:
	execq_answer_release(&a);
	execq_session_close(&s);
	execq_opts_release(&o);
	return (rc);
}

/* execq --help: only the subcommands that exist. */
static void
execq_usage(FILE *f)
{
	size_t	i;

	fputs("usage: execq [--redis URL] COMMAND [OPTIONS] [ARGS]\n"
	    "\n"
	    "Runs shell commands on an execq-worker through a Redis queue.\n"
	    "\n"
	    "Commands:\n", f);
	for (i = 0; i < sizeof execq_cmds / sizeof execq_cmds[0]; i++)
		fprintf(f, "  %-9s  %s\n", execq_cmds[i].name,
		    execq_cmds[i].summary);
	fputs("\n"
	    "Options:\n"
	    "  --redis URL   redis://[[user]:password@]host[:port][/db] or\n"
	    "                unix://[[user]:password@]/path[?db=N]; default:\n"
	    "                $EXECQ_REDIS_URL, else ./" EXECQ_RUN_SOCKET "\n"
	    "                if it exists ('make run'), else "
	    EXECQ_DEFAULT_URL "\n"
	    "  -h, --help    show this help; 'execq COMMAND --help' for one\n"
	    "  --version     print the version\n"
	    "\n"
	    "Every command but cleanup also takes --redis URL and --queue Q\n"
	    "(the worker queue: $EXECQ_QUEUE, else " EXECQ_DEFAULT_QUEUE
	    "; for callbacks, the\n"
	    "reply queue: execq.$USER).\n"
	    "\n"
	    "Session tokens: spawn keeps each session's token in\n"
	    "$XDG_STATE_HOME/execq/tokens (else ~/.local/state/execq/tokens);\n"
	    "logs, send, keys, kill and wait send it. $EXECQ_TOKEN\n"
	    "overrides it; $EXECQ_OPERATOR_TOKEN acts as an operator (any\n"
	    "session).\n"
	    "\n"
	    "Exit status:\n"
	    "  0      success (run: the command's own exit status instead)\n"
	    "  1      cleanup: the log directory cannot be read\n"
	    "  2      usage error\n"
	    "  124    run: the command timed out; wait: the session is still\n"
	    "         running; callbacks: --timeout passed before --count\n"
	    "  125    execq failed: no Redis, no answer, or an ERROR answer\n"
	    "  130    logs -f, callbacks: interrupted (Ctrl-C)\n", f);
}

/* Global options, then the subcommand with argv[0] = "execq <name>". */
int
main(int argc, char **argv)
{
	const struct execq_cmd	*cmd = NULL;
	const char		*redis = NULL;
	char			 name[64];
	size_t			 i;
	int			 ch;

	log_init("execq", LOG_LEVEL_WARN);	/* xmalloc's fatal() */
	while ((ch = getopt_long(argc, argv, "+h", execq_global_longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'h':
			execq_usage(stdout);
			return (0);
		case EXECQ_OPT_VERSION:
			printf("execq %s\n", EXECQ_VERSION);
			return (0);
		case EXECQ_OPT_REDIS:
			redis = optarg;
			break;
		default:
			return (execq_usage_hint(NULL));
		}
	}
	if (optind >= argc)
		return (execq_usage_error(NULL, "no command given"));
	for (i = 0; i < sizeof execq_cmds / sizeof execq_cmds[0]; i++) {
		if (strcmp(argv[optind], execq_cmds[i].name) == 0)
			cmd = &execq_cmds[i];
	}
	if (cmd == NULL)
		return (execq_usage_error(NULL, "unknown command '%s'",
		    argv[optind]));
	snprintf(name, sizeof name, "execq %s", cmd->name);
	argv[optind] = name;	/* getopt's messages say "execq run: ..." */
	return (cmd->fn(redis, argc - optind, argv + optind));
}
