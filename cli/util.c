/*
 * execq: small helpers every subcommand uses: messages (an ERROR answer's
 * too), clocks, ids, names, quoting, number parsing, writes, tables.
 */

#include <sys/ioctl.h>
#include <sys/random.h>

#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "logs/clock.h"
#include "logs/display.h"
#include "logs/xmalloc.h"

/* Crockford base32: no I, L, O or U. */
static const char	execq_base32_chars[] =
    "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/*
 * A write that found its pipe's reader gone (EPIPE: main.c ignores
 * SIGPIPE so that a reset Redis connection is an error, not our end):
 * ends the client by SIGPIPE, silently, as a filter ends under 'execq
 * ... | head' (git's check_pipe). Any other errno returns.
 */
static void
execq_check_pipe(int err)
{
	if (err != EPIPE)
		return;
	signal(SIGPIPE, SIG_DFL);
	raise(SIGPIPE);
	_exit(128 + SIGPIPE);		/* SIGPIPE blocked: the same code */
}

/*
 * prefix, then fmt formatted and escaped as a whole (logs/display.h),
 * then a newline, on f: the text may quote a Redis error, a worker's
 * answer, a file name, and no part of it may move the terminal or forge
 * a line of its own.
 */
static void	execq_vline(FILE *, const char *prefix, const char *,
		    va_list) __attribute__((format(printf, 3, 0)));

/* Where execq_error keeps its last message too (execq_error_keep). */
static char	**execq_error_kept;

static void
execq_vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
	char	*msg, *shown;

	if (vasprintf(&msg, fmt, ap) == -1) {
		fprintf(f, "%sout of memory\n", prefix);
		return;
	}
	shown = display_str(msg);
	fprintf(f, "%s%s\n", prefix, shown);
	free(shown);
	free(msg);
}

void
execq_error_keep(char **where)
{
	execq_error_kept = where;
}

void
execq_line(FILE *f, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	execq_vline(f, "", fmt, ap);
	va_end(ap);
}

/*
 * Prints "execq: <message>" on stderr. Called with errno EPIPE after
 * stdout failed (the callers' fflush(stdout) checks, "stdout: %s"), it
 * says nothing: the reader is gone, and the client ends as by SIGPIPE.
 */
void
execq_error(const char *fmt, ...)
{
	va_list	 ap;
	char	*msg, *both;

	if (ferror(stdout))
		execq_check_pipe(errno);
	fflush(stdout);
	va_start(ap, fmt);
	execq_vline(stderr, "execq: ", fmt, ap);
	va_end(ap);
	if (execq_error_kept == NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		msg = NULL;
	va_end(ap);
	if (msg != NULL && *execq_error_kept != NULL) {
		xasprintf(&both, "%s; %s", *execq_error_kept, msg);
		free(msg);
		msg = both;
	}
	if (msg != NULL) {
		free(*execq_error_kept);
		*execq_error_kept = msg;
	}
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

	va_start(ap, fmt);
	execq_vline(stderr, "execq: ", fmt, ap);
	va_end(ap);
	return (execq_usage_hint(cmd));
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
execq_make_id(const struct execq_session *s)
{
	unsigned char	 rnd[10];
	uint64_t	 ms;
	char		*id, *mine;
	int		 i;

	ms = (uint64_t)clock_wall_ms();
	id = xmalloc(EXECQ_ID_LEN + 1);
	for (i = 9; i >= 0; i--) {
		id[i] = execq_base32_chars[ms & 31];
		ms >>= 5;
	}
	execq_random(rnd, sizeof rnd);
	execq_base32(rnd, 16, id + 10);
	id[EXECQ_ID_LEN] = '\0';
	if (s->user == NULL)
		return (id);
	xasprintf(&mine, "%s.%s", s->user, id);
	free(id);
	return (mine);
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
char *
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

/*
 * fwrite and fflush; -1 (said) if stdout or stderr failed. A reader
 * gone (EPIPE) ends the client by SIGPIPE instead (execq_check_pipe).
 */
int
execq_write_all(FILE *f, const void *buf, size_t len)
{
	if ((len > 0 && fwrite(buf, 1, len, f) != len) || fflush(f) == EOF) {
		execq_check_pipe(errno);
		execq_error("%s: %s", f == stdout ? "stdout" : "write",
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * What a subcommand wrote to stdout, delivered: flushed, and if a write
 * failed because the reader was gone (a pipe with no reader polls
 * POLLERR), the client ends by SIGPIPE even where that failure went
 * unseen (stdio drops what a failed write held, so a later fflush
 * succeeds). Anything else returns.
 */
void
execq_stdout_done(void)
{
	struct pollfd	pfd;

	if (fflush(stdout) == EOF)
		execq_check_pipe(errno);
	if (!ferror(stdout))
		return;
	pfd.fd = fileno(stdout);
	pfd.events = POLLOUT;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR) != 0)
		execq_check_pipe(EPIPE);
}

/* "45s", "3m04s", "2h05m", "3d04h". */
void
execq_format_duration(long long ms, char *buf, size_t len)
{
	long long	s = ms / 1000;

	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%llds", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, len, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
}

/* Columns on the screen a UTF-8 string takes, roughly: code points. */
static size_t
execq_width(const char *s)
{
	size_t	n = 0;

	for (; *s != '\0'; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	}
	return (n);
}

/* Cuts s to at most max columns, ending in "..." when cut. */
static void
execq_truncate(char *s, size_t max)
{
	size_t	 n = 0;
	char	*p;

	if (execq_width(s) <= max)
		return;
	if (max < 4) {
		s[0] = '\0';
		return;
	}
	for (p = s; *p != '\0'; p++) {
		if (((unsigned char)*p & 0xc0) != 0x80 && n++ == max - 3)
			break;
	}
	strcpy(p, "...");
}

/* The room the last column has: the terminal's width minus the rest. */
static size_t
execq_last_width(const size_t *widths, int ncols)
{
	struct winsize	ws;
	size_t		used = 0;
	int		i;

	if (!isatty(STDOUT_FILENO) ||
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == -1 || ws.ws_col == 0)
		return (EXECQ_TABLE_LAST);
	for (i = 0; i < ncols - 1; i++)
		used += widths[i] + 2;
	if (used + 10 > ws.ws_col)
		return (10);
	return (ws.ws_col - used);
}

void
execq_print_table(const char *const *headers, int ncols, char **cells,
    size_t nrows)
{
	size_t	*widths, i, w, cmdw;
	char	*shown;
	int	 c;

	widths = xcalloc(ncols, sizeof *widths);
	for (c = 0; c < ncols; c++)
		widths[c] = strlen(headers[c]);
	for (i = 0; i < nrows * ncols; i++) {	/* one line, nothing hidden */
		shown = display_str(cells[i]);
		free(cells[i]);
		cells[i] = shown;
	}
	for (i = 0; i < nrows; i++) {
		for (c = 0; c < ncols - 1; c++) {
			w = execq_width(cells[i * ncols + c]);
			if (w > widths[c])
				widths[c] = w;
		}
	}
	cmdw = execq_last_width(widths, ncols);
	for (c = 0; c < ncols - 1; c++)
		printf("%-*s  ", (int)widths[c], headers[c]);
	printf("%s\n", headers[c]);
	for (i = 0; i < nrows; i++) {
		for (c = 0; c < ncols - 1; c++) {
			w = execq_width(cells[i * ncols + c]);
			printf("%s%*s  ", cells[i * ncols + c],
			    (int)(widths[c] - w), "");
		}
		execq_truncate(cells[i * ncols + c], cmdw);
		printf("%s\n", cells[i * ncols + c]);
	}
	free(widths);
}
