/*
 * The worker's settings. One table drives the defaults, the config file,
 * the environment, the flags and --help, so they cannot drift apart.
 * Every value, defaults included, goes through the same parser, and where
 * it came from is kept for the checks that can only run once all layers
 * are in (realpath of the workspace, access of the shell, default <= max).
 */

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "logs/xmalloc.h"
#include "queue/rurl.h"
#include "worker/config.h"
#include "worker/http.h"
#include "policy/policyconf.h"

#define CONFIG_VERSION	"execq-worker " EXECQ_VERSION
#define CONFIG_HUGE	100000000000ULL		/* above every maximum */
#define CONFIG_MAX_MS	(UINT_MAX / 1000 * 1000ULL)
#define CONFIG_NAME_MAX	128

/* getopt_long values of the flags that are not in the table. */
#define CONFIG_FLAG_CONFIG	1
#define CONFIG_FLAG_CHECK	2	/* --check-confinement */
#define CONFIG_FLAG_SET		256	/* + index: --flag */
#define CONFIG_FLAG_CLEAR	512	/* + index: a bool's --no-flag */

enum config_type {
	CONFIG_STRING,
	CONFIG_BOOL,
	CONFIG_UINT,		/* unsigned */
	CONFIG_MS,		/* seconds in, unsigned milliseconds stored */
	CONFIG_SIZE,		/* bytes with an optional k or m, size_t */
};

/* NULL if the string is acceptable, else an allocated reason. */
typedef char *(*config_check_fn)(const char *);

struct config_opt {
	const char		*key;		/* config file */
	const char		*flag;		/* --flag */
	const char		*noflag;	/* bools: --flag that clears */
	const char		*env;
	enum config_type	 type;
	size_t			 off;
	unsigned long long	 min;		/* numbers: stored units */
	unsigned long long	 max;
	const char		*def;		/* NULL: computed (consumer) */
	const char		*metavar;
	const char		*help;		/* lines of --help */
	config_check_fn		 check;		/* strings only */
};

static char	*config_check_url(const char *);
static char	*config_check_name(const char *);
static char	*config_check_nonempty(const char *);
static char	*config_check_operator_token(const char *);
static char	*config_check_absolute(const char *);
static char	*config_check_cgroup(const char *);
static char	*config_check_tier(const char *);
static char	*config_check_sandbox(const char *);
static char	*config_check_confine(const char *);
static char	*config_check_http(const char *);

#define OFF(f)	offsetof(struct config, f)
static const struct config_opt config_opts[] = {
	{ "redis_url", "redis", NULL, "EXECQ_REDIS_URL", CONFIG_STRING,
	  OFF(redis_url), 0, 0, "redis://127.0.0.1:6379/0", "URL",
	  "Redis server: redis://[[user]:pw@]host[:port][/db],\n"
	  "unix://[[user]:pw@]/path[?db=N], /path, host:port",
	  config_check_url },
	{ "queue", "queue", NULL, "EXECQ_QUEUE", CONFIG_STRING,
	  OFF(queue), 0, 0, POLICYCONF_DEFAULT_QUEUE, "NAME",
	  "queue to serve: streams q:NAME:high, :normal, :low",
	  config_check_name },
	{ "reply_default", "reply-default", NULL, "EXECQ_REPLY_DEFAULT",
	  CONFIG_STRING, OFF(reply_default), 0, 0, "replies", "NAME",
	  "where answers go when an item has no reply_to",
	  config_check_name },
	{ "workspace", "workspace", NULL, "EXECQ_WORKSPACE", CONFIG_STRING,
	  OFF(workspace), 0, 0, POLICYCONF_DEFAULT_WORKSPACE, "DIR",
	  "commands run in DIR or below it; must exist\n"
	  "(the default is made when missing)",
	  config_check_nonempty },
	{ "log_dir", "log-dir", NULL, "EXECQ_LOG_DIR", CONFIG_STRING,
	  OFF(log_dir), 0, 0, ".tmp/exec", "DIR",
	  "each command's output goes to DIR/<id>.log",
	  config_check_nonempty },
	{ "state_dir", "state-dir", NULL, "EXECQ_STATE_DIR", CONFIG_STRING,
	  OFF(state_dir), 0, 0, ".tmp/state", "DIR",
	  "the worker's own files (audit log, spool of\n"
	  "answers Redis has not taken yet)",
	  config_check_nonempty },
	{ "enable_execute", "enable-execute", "disable-execute",
	  "ENABLE_EXECUTE", CONFIG_BOOL, OFF(enable_execute), 0, 0, "off",
	  NULL, "run commands; while off, every EXEC item is\n"
	  "answered with an error (env: 1/0, true/false, ...)", NULL },
	{ "default_timeout_s", "timeout", NULL, "EXECQ_DEFAULT_TIMEOUT_S",
	  CONFIG_MS, OFF(default_timeout_ms), 1, CONFIG_MAX_MS, "30", "S",
	  "timeout of an item that sets none", NULL },
	{ "max_timeout_s", "max-timeout", NULL, "EXECQ_MAX_TIMEOUT_S",
	  CONFIG_MS, OFF(max_timeout_ms), 1, CONFIG_MAX_MS, "3600", "S",
	  "largest timeout an item may ask for", NULL },
	{ "kill_grace_s", "kill-grace", NULL, "EXECQ_KILL_GRACE_S",
	  CONFIG_MS, OFF(kill_grace_ms), 0, CONFIG_MAX_MS, "5", "S",
	  "on timeout the process tree gets SIGTERM, then\n"
	  "SIGKILL S seconds later", NULL },
	{ "shutdown_flush_s", "shutdown-flush", NULL,
	  "EXECQ_SHUTDOWN_FLUSH_S", CONFIG_MS, OFF(shutdown_flush_ms), 0,
	  CONFIG_MAX_MS, "5", "S",
	  "on SIGTERM, after kill_grace, wait up to S\n"
	  "seconds for answers to reach Redis; the rest\n"
	  "goes to the spool", NULL },
	{ "drain_s", "drain", NULL, "EXECQ_DRAIN_S", CONFIG_MS,
	  OFF(drain_ms), 0, CONFIG_MAX_MS, "2", "S",
	  "after exit, wait up to S seconds for the output\n"
	  "of background children", NULL },
	{ "output_cap", "output-cap", NULL, "EXECQ_OUTPUT_CAP", CONFIG_SIZE,
	  OFF(output_cap), 1024, 64 << 20, "1m", "BYTES",
	  "stdout and stderr kept in an answer, each\n"
	  "(head and tail; the log has everything)", NULL },
	{ "max_procs", "max-procs", NULL, "EXECQ_MAX_PROCS", CONFIG_UINT,
	  OFF(max_procs), 1, 4096, "16", "N",
	  "items taken from Redis and run at once", NULL },
	{ "log_max_bytes", "log-max-bytes", NULL, "EXECQ_LOG_MAX_BYTES",
	  CONFIG_SIZE, OFF(log_max_bytes), 65536, 1ULL << 40, "1g", "BYTES",
	  "a log stops growing at BYTES; the first and last\n"
	  "32 KiB of the rest are added when the command ends",
	  NULL },
	{ "max_item_bytes", "max-item-bytes", NULL, "EXECQ_MAX_ITEM_BYTES",
	  CONFIG_SIZE, OFF(max_item_bytes), 1024, 64 << 20, "1m", "BYTES",
	  "larger items are refused", NULL },
	{ "answer_ttl_s", "answer-ttl", NULL, "EXECQ_ANSWER_TTL_S",
	  CONFIG_UINT, OFF(answer_ttl_s), 1, UINT_MAX, "86400", "S",
	  "stored answers (for redelivery) expire after S", NULL },
	{ "claim_idle_s", "claim-idle", NULL, "EXECQ_CLAIM_IDLE_S", CONFIG_MS,
	  OFF(claim_idle_ms), 1, CONFIG_MAX_MS, "30", "S",
	  "take over items another worker left pending S", NULL },
	{ "session_ttl_s", "session-ttl", NULL, "EXECQ_SESSION_TTL_S",
	  CONFIG_UINT, OFF(session_ttl_s), 1, UINT_MAX, "300", "S",
	  "finished sessions stay queryable for S", NULL },
	{ "session_keep", "session-keep", NULL, "EXECQ_SESSION_KEEP",
	  CONFIG_UINT, OFF(session_keep), 1, 100000, "100", "N",
	  "and at most N of them are kept", NULL },
	{ "log_max_age_hours", "log-max-age", NULL, "EXECQ_LOG_MAX_AGE_HOURS",
	  CONFIG_UINT, OFF(log_max_age_hours), 0, 100000, "24", "H",
	  "at start-up, logs older than H hours are removed\n"
	  "(0: keep everything)", NULL },
	{ "shell", "shell", NULL, "EXECQ_SHELL", CONFIG_STRING,
	  OFF(shell), 0, 0, POLICYCONF_DEFAULT_SHELL, "PATH",
	  "runs each command as PATH -c COMMAND",
	  config_check_absolute },
	{ "consumer", "consumer", NULL, "EXECQ_CONSUMER", CONFIG_STRING,
	  OFF(consumer), 0, 0, NULL, "NAME",
	  "this worker's name in the consumer group",
	  config_check_name },
	{ "cgroup", "cgroup", NULL, "EXECQ_CGROUP", CONFIG_STRING,
	  OFF(cgroup), 0, 0, "auto", "auto|off|DIR",
	  "cgroup v2 parent of the per-command groups;\n"
	  "auto: the worker's own cgroup if usable",
	  config_check_cgroup },
	{ "tier", "tier", NULL, "EXECQ_TIER", CONFIG_STRING,
	  OFF(tier), 0, 0, POLICYCONF_DEFAULT_TIER, "TIER",
	  "read_only, read_write, confined or admin: the most\n"
	  "that runs without approval (or per queue:\n"
	  "queue_tiers); auto: confined when every\n"
	  "confinement layer is on, else read_only",
	  config_check_tier },
	{ "confine", "confine", NULL, "EXECQ_CONFINE", CONFIG_STRING,
	  OFF(confine), 0, 0, "auto", "MODE",
	  "auto, required or off: the kernel boundary of\n"
	  "every command (required: refuse to start\n"
	  "without every layer)", config_check_confine },
	{ "tmp_dir", "tmp-dir", NULL, "EXECQ_TMP_DIR", CONFIG_STRING,
	  OFF(tmp_dir), 0, 0, "/var/tmp/execq", "DIR",
	  "each confined command gets DIR/<id> as its\n"
	  "TMPDIR and HOME (a tmpfs only commands see),\n"
	  "removed when it ends; outside the workspace",
	  config_check_nonempty },
	{ "network", "network", "no-network", "EXECQ_NETWORK", CONFIG_BOOL,
	  OFF(network), 0, 0, "off", NULL,
	  "commands of this queue have network; else only\n"
	  "an approved item asking for it (queue_network)", NULL },
	{ "max_pids", "max-pids", NULL, "EXECQ_MAX_PIDS", CONFIG_UINT,
	  OFF(max_pids), 8, 4194304, "512", "N",
	  "processes one command may have at once", NULL },
	{ "max_memory", "max-memory", NULL, "EXECQ_MAX_MEMORY", CONFIG_SIZE,
	  OFF(max_memory), 16 << 20, 1ULL << 40, "2g", "BYTES",
	  "memory one command may use; past it the kernel's\n"
	  "OOM killer ends it", NULL },
	{ "run_as", "run-as", NULL, "EXECQ_RUN_AS", CONFIG_STRING,
	  OFF(run_as), 0, 0, "", "USER",
	  "run commands as this user (name or uid:gid);\n"
	  "empty: as the worker, with no capabilities", NULL },
	{ "operator_token", "operator-token", NULL, "EXECQ_OPERATOR_TOKEN",
	  CONFIG_STRING, OFF(operator_token), 0, 0, "", "TOKEN",
	  "PROCESS items carrying it may act on any\n"
	  "session (16 to 128 printable characters);\n"
	  "empty: none may", config_check_operator_token },
	{ "sandbox", "sandbox", NULL, "EXECQ_SANDBOX", CONFIG_STRING,
	  OFF(sandbox), 0, 0, POLICYCONF_DEFAULT_SANDBOX, "MODE",
	  "hold, refuse or off: what a path outside the\n"
	  "workspace in a command does",
	  config_check_sandbox },
	{ "approval_timeout_s", "approval-timeout", NULL,
	  "EXECQ_APPROVAL_TIMEOUT_S", CONFIG_MS, OFF(approval_timeout_ms),
	  1000, 7 * 86400 * 1000ULL, "600", "SECONDS",
	  "a held command not approved in time ends as\n"
	  "approval_expired", NULL },
	{ "log_fsync", "log-fsync", "no-log-fsync", "EXECQ_LOG_FSYNC",
	  CONFIG_BOOL, OFF(log_fsync), 0, 0, "off", NULL,
	  "fsync each command's log before its answer is\n"
	  "sent (slower; durable across a crash)", NULL },
	{ "http", "http", NULL, "EXECQ_HTTP", CONFIG_STRING, OFF(http), 0, 0,
	  "", "ADDR:PORT",
	  "serve GET /metrics (Prometheus) and /healthz on\n"
	  "ADDR:PORT (e.g. 127.0.0.1:9464); empty: off",
	  config_check_http },
	{ "log_file", "log-file", NULL, "EXECQ_LOG_FILE", CONFIG_STRING,
	  OFF(log_file), 0, 0, "", "FILE",
	  "the worker's own log goes to FILE (appended;\n"
	  "reopened on SIGHUP); empty: stderr", NULL },
};
#undef OFF
#define CONFIG_NOPTS	(sizeof config_opts / sizeof config_opts[0])

/* One config_load() call: the flags seen, and where each value came from. */
struct config_state {
	struct config	*c;
	const char	*flag_val[CONFIG_NOPTS];	/* last one wins */
	const char	*flag_name[CONFIG_NOPTS];
	const char	*config_file;			/* --config */
	int		 verbose;
	int		 check;				/* --check-confinement */
	char		*where[CONFIG_NOPTS];
};

/* Index of the setting with this file key, or -1. */
static int
config_find(const char *key)
{
	size_t	i;

	for (i = 0; i < CONFIG_NOPTS; i++) {
		if (strcmp(config_opts[i].key, key) == 0)
			return ((int)i);
	}
	return (-1);
}

/* Value of name in envp; NULL when unset or empty (as if unset). */
static const char *
config_getenv(char **envp, const char *name)
{
	size_t		 len = strlen(name);
	const char	*v;

	for (; envp != NULL && *envp != NULL; envp++) {
		if (strncmp(*envp, name, len) != 0 || (*envp)[len] != '=')
			continue;
		v = *envp + len + 1;
		return (*v != '\0' ? v : NULL);
	}
	return (NULL);
}

/* rurl_parse() is the judge, so the worker cannot meet a bad URL later. */
static char *
config_check_url(const char *s)
{
	struct rurl	 u;
	char		*cause;

	if (rurl_parse(s, &u, &cause) != 0)
		return (cause);
	rurl_release(&u);
	return (NULL);
}

/* Queue, reply and consumer names: [A-Za-z0-9_.:-]{1,128}, no '.' first. */
static char *
config_check_name(const char *s)
{
	size_t	 len = strlen(s);
	char	*msg;

	if (len >= 1 && len <= CONFIG_NAME_MAX && *s != '.' &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_.:-") == len)
		return (NULL);
	xasprintf(&msg, "'%s' is not a valid name (1-128 of A-Z a-z 0-9 "
	    "_ . : -, not starting with '.')", s);
	return (msg);
}

/* For directories that are resolved later. */
static char *
config_check_nonempty(const char *s)
{
	return (*s == '\0' ? xstrdup("must not be empty") : NULL);
}

/* An operator token: long enough not to be guessed; never echoed. */
static char *
config_check_operator_token(const char *s)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return (xstrdup("must be printable ASCII without "
			    "spaces"));
	if (i != 0 && (i < 16 || i > 128))
		return (xstrdup("must be 16 to 128 characters"));
	return (NULL);
}

/* Empty, or an address the HTTP side door can listen on. */
static char *
config_check_http(const char *s)
{
	char		*host, *cause;
	unsigned	 port;

	if (*s == '\0')
		return (NULL);
	if (http_parse_addr(s, &host, &port, &cause) != 0)
		return (cause);
	free(host);
	return (NULL);
}

/* The shell: absolute here, executable at the end. */
static char *
config_check_absolute(const char *s)
{
	char	*msg;

	if (*s == '/')
		return (NULL);
	xasprintf(&msg, "'%s' is not an absolute path", s);
	return (msg);
}

/* "auto", "off" or an absolute directory (checked by the cgroup code). */
static char *
config_check_cgroup(const char *s)
{
	char	*msg;

	if (strcmp(s, "auto") == 0 || strcmp(s, "off") == 0 || *s == '/')
		return (NULL);
	xasprintf(&msg, "'%s' must be auto, off or an absolute directory", s);
	return (msg);
}

/* auto, read_only, read_write, confined or admin. */
static char *
config_check_tier(const char *s)
{
	enum cls_tier	 t;
	char		*msg;

	if (strcmp(s, "auto") == 0 || cls_tier_parse(s, &t) == 0)
		return (NULL);
	xasprintf(&msg, "'%s' must be auto, read_only, read_write, confined "
	    "or admin", s);
	return (msg);
}

/* auto, required or off. */
static char *
config_check_confine(const char *s)
{
	char	*msg;

	if (strcmp(s, "auto") == 0 || strcmp(s, "required") == 0 ||
	    strcmp(s, "off") == 0)
		return (NULL);
	xasprintf(&msg, "'%s' must be auto, required or off", s);
	return (msg);
}

/* hold, refuse or off. */
static char *
config_check_sandbox(const char *s)
{
	enum cls_sandbox	 sb;
	char			*msg;

	if (cls_sandbox_parse(s, &sb) == 0)
		return (NULL);
	xasprintf(&msg, "'%s' must be hold, refuse or off", s);
	return (msg);
}

/* Reads digits at *pp, saturating at CONFIG_HUGE; 0 if there are none. */
static int
config_digits(const char **pp, unsigned long long *v)
{
	const char	*p, *start = *pp;

	*v = 0;
	for (p = start; isdigit((unsigned char)*p); p++) {
		if (*v < CONFIG_HUGE)
			*v = *v * 10 + (*p - '0');
	}
	*pp = p;
	return (p != start);
}

/* Seconds as "N", "N.F" or ".F" to milliseconds, rounded; -1 if junk. */
static int
config_seconds(const char *s, unsigned long long *ms)
{
	unsigned long long	 sec, frac = 0, round = 0;
	const char		*p = s;
	int			 n, i = 0;

	n = config_digits(&p, &sec);
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, i++) {
			if (i < 3)
				frac = frac * 10 + (*p - '0');
			else if (i == 3 && *p >= '5')
				round = 1;
		}
		for (n += i; i < 3; i++)
			frac *= 10;
	}
	if (n == 0 || *p != '\0')
		return (-1);
	*ms = sec * 1000 + frac + round;
	return (0);
}

/* Bytes, with an optional k or m (binary); -1 if junk. */
static int
config_size(const char *s, unsigned long long *v)
{
	const char	*p = s;

	if (!config_digits(&p, v))
		return (-1);
	if (*p == 'k' || *p == 'K') {
		*v <<= 10;
		p++;
	} else if (*p == 'm' || *p == 'M') {
		*v <<= 20;
		p++;
	} else if (*p == 'g' || *p == 'G') {
		*v <<= 30;
		p++;
	}
	return (*p == '\0' ? 0 : -1);
}

/* A limit for messages, in the units the user types. */
static void
config_format(enum config_type type, unsigned long long v, char *buf,
    size_t len)
{
	if (type == CONFIG_MS && v % 1000 != 0)
		snprintf(buf, len, "%llu.%03llu", v / 1000, v % 1000);
	else if (type == CONFIG_MS)
		snprintf(buf, len, "%llu", v / 1000);
	else if (type == CONFIG_SIZE && v != 0 && v % (1 << 30) == 0)
		snprintf(buf, len, "%llug", v >> 30);
	else if (type == CONFIG_SIZE && v != 0 && v % (1 << 20) == 0)
		snprintf(buf, len, "%llum", v >> 20);
	else if (type == CONFIG_SIZE && v != 0 && v % 1024 == 0)
		snprintf(buf, len, "%lluk", v >> 10);
	else
		snprintf(buf, len, "%llu", v);
}

/* Parses a number setting into *v; NULL, or an allocated reason. */
static char *
config_number(const struct config_opt *opt, const char *s,
    unsigned long long *v)
{
	static const char	*what[] = {
		[CONFIG_UINT] = "a whole number",
		[CONFIG_MS] = "a number of seconds",
		[CONFIG_SIZE] = "a size (bytes, or with k, m or g: 64k, 1m)",
	};
	static const char	*unit[] = {
		[CONFIG_UINT] = "", [CONFIG_MS] = " seconds",
		[CONFIG_SIZE] = " bytes",
	};
	const char		*p = s;
	char			*msg, lo[32], hi[32];
	int			 bad;

	if (opt->type == CONFIG_UINT)
		bad = !config_digits(&p, v) || *p != '\0';
	else if (opt->type == CONFIG_MS)
		bad = config_seconds(s, v) != 0;
	else
		bad = config_size(s, v) != 0;
	if (bad) {
		xasprintf(&msg, "'%s' is not %s", s, what[opt->type]);
		return (msg);
	}
	if (*v >= opt->min && *v <= opt->max)
		return (NULL);
	config_format(opt->type, opt->min, lo, sizeof lo);
	config_format(opt->type, opt->max, hi, sizeof hi);
	xasprintf(&msg, "'%s' must be between %s and %s%s", s, lo, hi,
	    unit[opt->type]);
	return (msg);
}

/* 1/0, true/false, yes/no, on/off, any case. */
static char *
config_bool(const char *s, int *out)
{
	static const char	*words[] = { "0", "false", "no", "off",
				    "1", "true", "yes", "on" };
	char			*msg;
	size_t			 i;

	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		if (strcasecmp(s, words[i]) == 0) {
			*out = (i >= 4);
			return (NULL);
		}
	}
	xasprintf(&msg, "'%s' is not a boolean (use 1/0, true/false, yes/no "
	    "or on/off)", s);
	return (msg);
}

/* Parses s and stores it in c; NULL, or an allocated reason. */
static char *
config_store(struct config *c, const struct config_opt *opt, const char *s)
{
	void			*dst = (char *)c + opt->off;
	unsigned long long	 v = 0;
	char			*msg;

	if (opt->type == CONFIG_BOOL)
		return (config_bool(s, dst));
	if (opt->type == CONFIG_STRING) {
		if (opt->check != NULL && (msg = opt->check(s)) != NULL)
			return (msg);
		free(*(char **)dst);
		*(char **)dst = xstrdup(s);
		return (NULL);
	}
	if ((msg = config_number(opt, s, &v)) != NULL)
		return (msg);
	if (opt->type == CONFIG_SIZE)
		*(size_t *)dst = v;
	else
		*(unsigned *)dst = v;
	return (NULL);
}

/* Applies one value; the message names where it came from. */
static int
config_set(struct config_state *st, size_t i, const char *value,
    const char *where, char **cause)
{
	char	*msg;

	if ((msg = config_store(st->c, &config_opts[i], value)) != NULL) {
		xasprintf(cause, "%s: %s", where, msg);
		free(msg);
		return (-1);
	}
	free(st->where[i]);
	st->where[i] = xstrdup(where);
	return (0);
}

/* "<hostname>-<pid>", squeezed into the name rules. */
static char *
config_default_consumer(void)
{
	char	 host[65], *s, *p;

	if (gethostname(host, sizeof host) != 0 || *host == '\0')
		snprintf(host, sizeof host, "worker");
	host[sizeof host - 1] = '\0';
	xasprintf(&s, "%s-%ld", host, (long)getpid());
	for (p = s; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && strchr("_.:-", *p) == NULL)
			*p = '_';
	}
	if (*s == '.')
		*s = '_';
	return (s);
}

/* The bottom layer. */
static int
config_apply_defaults(struct config_state *st, char **cause)
{
	const struct config_opt	*opt;
	char			*where, *computed;
	size_t			 i;
	int			 r = 0;

	for (i = 0; r == 0 && i < CONFIG_NOPTS; i++) {
		opt = &config_opts[i];
		computed = opt->def == NULL ? config_default_consumer() : NULL;
		xasprintf(&where, "default %s", opt->key);
		r = config_set(st, i, computed != NULL ? computed : opt->def,
		    where, cause);
		free(where);
		free(computed);
	}
	return (r);
}

/* How a JSON type reads in a message. */
static const char *
config_json_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return ("an object");
	case JSON_ARRAY:
		return ("an array");
	case JSON_STRING:
		return ("a string");
	case JSON_INTEGER:
		return ("a whole number");
	case JSON_REAL:
		return ("a number with a decimal point");
	case JSON_TRUE:
	case JSON_FALSE:
		return ("a boolean");
	default:
		return ("null");
	}
}

/* The file's value as the text a flag would carry, or NULL and *msg. */
static char *
config_json_text(const struct config_opt *opt, const json_t *v, char **msg)
{
	static const char	*want[] = {
		[CONFIG_STRING] = "a string", [CONFIG_BOOL] = "true or false",
		[CONFIG_UINT] = "a whole number",
		[CONFIG_MS] = "a number of seconds",
		[CONFIG_SIZE] = "a number of bytes or a string such as \"64k\"",
	};
	enum config_type	 t = opt->type;
	char			*s;

	if (json_is_string(v) && (t == CONFIG_STRING || t == CONFIG_SIZE))
		return (xstrdup(json_string_value(v)));
	if (json_is_boolean(v) && t == CONFIG_BOOL)
		return (xstrdup(json_is_true(v) ? "1" : "0"));
	if (json_is_integer(v) && t != CONFIG_STRING && t != CONFIG_BOOL) {
		xasprintf(&s, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return (s);
	}
	if (json_is_real(v) && t == CONFIG_MS) {
		xasprintf(&s, "%.6f", json_real_value(v));
		return (s);
	}
	xasprintf(msg, "expected %s, got %s", want[t], config_json_type(v));
	return (NULL);
}

/* One key of the config file. */
static int
config_file_key(struct config_state *st, const char *path, const char *key,
    const json_t *v, char **cause)
{
	char	*where, *text, *msg = NULL;
	int	 i, r = -1;

	if (policyconf_owns(key)) {
		xasprintf(&where, "config file %s", path);
		r = policyconf_key(st->c->policy, where, key, v, cause);
		free(where);
		return (r);
	}
	if ((i = config_find(key)) == -1) {
		xasprintf(cause, "config file %s: unknown key '%s' (see "
		    "docs/CONFIG.md)", path, key);
		return (-1);
	}
	xasprintf(&where, "config file %s: %s", path, key);
	if ((text = config_json_text(&config_opts[i], v, &msg)) != NULL)
		r = config_set(st, i, text, where, cause);
	else
		xasprintf(cause, "%s: %s", where, msg);
	free(text);
	free(msg);
	free(where);
	return (r);
}

/* Reads the JSON file; NULL and *cause if it cannot be read or parsed. */
static json_t *
config_read_file(const char *path, char **cause)
{
	FILE		*f;
	struct stat	 sb;
	json_t		*root = NULL;
	json_error_t	 jerr;

	if ((f = fopen(path, "re")) == NULL) {
		xasprintf(cause, "config file %s: %s", path, strerror(errno));
		return (NULL);
	}
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode))
		xasprintf(cause, "config file %s: %s", path, strerror(EISDIR));
	else if ((root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr)) == NULL)
		xasprintf(cause, "config file %s: line %d column %d: %s", path,
		    jerr.line, jerr.column, jerr.text);
	fclose(f);
	return (root);
}

/* The config file layer: every key must be known and of the right type. */
static int
config_apply_file(struct config_state *st, const char *path, char **cause)
{
	json_t		*root, *v;
	const char	*key;
	int		 r = -1;

	if ((root = config_read_file(path, cause)) == NULL)
		return (-1);
	if (!json_is_object(root)) {
		xasprintf(cause, "config file %s: expected a JSON object, got "
		    "%s", path, config_json_type(root));
		goto out;
	}
	json_object_foreach(root, key, v) {
		if (config_file_key(st, path, key, v, cause) != 0)
			goto out;
	}
	st->c->config_file = xstrdup(path);
	r = 0;
out:
	json_decref(root);
	return (r);
}

/* The environment layer. */
static int
config_apply_env(struct config_state *st, char **envp, char **cause)
{
	const char	*v;
	size_t		 i;

	for (i = 0; i < CONFIG_NOPTS; i++) {
		v = config_getenv(envp, config_opts[i].env);
		if (v != NULL && config_set(st, i, v, config_opts[i].env,
		    cause) != 0)
			return (-1);
	}
	return (0);
}

/* The top layer: what config_parse_flags() collected. */
static int
config_apply_flags(struct config_state *st, char **cause)
{
	char	*where;
	size_t	 i;
	int	 r = 0;

	for (i = 0; r == 0 && i < CONFIG_NOPTS; i++) {
		if (st->flag_val[i] == NULL)
			continue;
		xasprintf(&where, "--%s", st->flag_name[i]);
		r = config_set(st, i, st->flag_val[i], where, cause);
		free(where);
	}
	return (r);
}

/* getopt_long's table, built from config_opts. Free it. */
static struct option *
config_longopts(void)
{
	struct option	*lo, *o;
	size_t		 i;

	o = lo = xcalloc(2 * CONFIG_NOPTS + 6, sizeof *lo);
	for (i = 0; i < CONFIG_NOPTS; i++) {
		o->name = config_opts[i].flag;
		o->has_arg = config_opts[i].type == CONFIG_BOOL ?
		    no_argument : required_argument;
		(o++)->val = CONFIG_FLAG_SET + i;
		if (config_opts[i].noflag == NULL)
			continue;
		o->name = config_opts[i].noflag;
		(o++)->val = CONFIG_FLAG_CLEAR + i;
	}
	*o++ = (struct option){ "config", required_argument, NULL,
	    CONFIG_FLAG_CONFIG };
	*o++ = (struct option){ "check-confinement", no_argument, NULL,
	    CONFIG_FLAG_CHECK };
	*o++ = (struct option){ "verbose", no_argument, NULL, 'v' };
	*o++ = (struct option){ "help", no_argument, NULL, 'h' };
	*o = (struct option){ "version", no_argument, NULL, 'V' };
	return (lo);
}

/* The message for a flag getopt refused: ch is '?' or ':'. */
static int
config_flag_error(int ch, char **argv, char **cause)
{
	const char	*arg = argv[optind - 1];

	if (ch == ':')
		xasprintf(cause, "%s needs a value", arg);
	else if (optopt >= CONFIG_FLAG_SET)
		xasprintf(cause, "%s takes no value", arg);
	else if (optopt != 0)
		xasprintf(cause, "unknown flag '-%c'", optopt);
	else
		xasprintf(cause, "unknown flag '%s'", arg);
	return (-1);
}

/* One flag: 0 to go on, 1 after --help or --version, -1 on error. */
static int
config_flag(struct config_state *st, int ch, char **argv, char **cause)
{
	size_t	i;

	switch (ch) {
	case 'v':
		st->verbose++;
		return (0);
	case 'h':
		config_usage(stdout);
		return (1);
	case 'V':
		printf("%s\n", CONFIG_VERSION);
		return (1);
	case CONFIG_FLAG_CONFIG:
		st->config_file = optarg;
		return (0);
	case CONFIG_FLAG_CHECK:
		st->check = 1;
		return (0);
	case '?':
	case ':':
		return (config_flag_error(ch, argv, cause));
	}
	i = ch - (ch >= CONFIG_FLAG_CLEAR ? CONFIG_FLAG_CLEAR :
	    CONFIG_FLAG_SET);
	if (config_opts[i].type != CONFIG_BOOL)
		st->flag_val[i] = optarg;
	else
		st->flag_val[i] = ch >= CONFIG_FLAG_CLEAR ? "0" : "1";
	st->flag_name[i] = ch >= CONFIG_FLAG_CLEAR ? config_opts[i].noflag :
	    config_opts[i].flag;
	return (0);
}

/* Collects the flags into st; they are applied after the other layers. */
static int
config_parse_flags(struct config_state *st, int argc, char **argv,
    char **cause)
{
	struct option	*lo;
	int		 ch, r = 0;

	if (argc < 1)
		return (0);
	lo = config_longopts();
	optind = 0;	/* GNU: full reset, so config_load can run again */
	opterr = 0;
	while (r == 0 &&
	    (ch = getopt_long(argc, argv, "+:vhV", lo, NULL)) != -1)
		r = config_flag(st, ch, argv, cause);
	if (r == 0 && optind < argc) {
		xasprintf(cause, "unexpected argument '%s'", argv[optind]);
		r = -1;
	}
	free(lo);
	return (r);
}

/* The workspace becomes its realpath; it must be a directory. */
static int
config_finish_workspace(struct config_state *st, char **cause)
{
	struct config	*c = st->c;
	const char	*where = st->where[config_find("workspace")];
	struct stat	 sb;
	char		*rp;

	/* The default, a directory of its own beside .tmp, is made. */
	if (strncmp(where, "default", 7) == 0 && mkdir(c->workspace, 0755) ==
	    -1 && errno != EEXIST) {
		xasprintf(cause, "%s: cannot make '%s': %s", where,
		    c->workspace, strerror(errno));
		return (-1);
	}
	if ((rp = realpath(c->workspace, NULL)) == NULL) {
		xasprintf(cause, "%s: '%s': %s", where, c->workspace,
		    strerror(errno));
		return (-1);
	}
	if (stat(rp, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		xasprintf(cause, "%s: '%s' is not a directory", where,
		    c->workspace);
		free(rp);
		return (-1);
	}
	free(c->workspace);
	c->workspace = rp;
	return (0);
}

/* log_dir is made absolute now, so a later chdir does not move it. */
static int
config_finish_dir(struct config_state *st, const char *key, char **field,
    char **cause)
{
	char		*cwd, *abs;
	const char	*dir = *field;

	if (*dir == '/')
		return (0);
	if ((cwd = getcwd(NULL, 0)) == NULL) {
		xasprintf(cause, "%s: getcwd: %s",
		    st->where[config_find(key)], strerror(errno));
		return (-1);
	}
	while (dir[0] == '.' && dir[1] == '/')
		dir += strspn(dir + 1, "/") + 1;
	if (*dir == '\0' || strcmp(dir, ".") == 0)
		abs = xstrdup(cwd);
	else
		xasprintf(&abs, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, dir);
	free(cwd);
	free(*field);
	*field = abs;
	return (0);
}

/* run_as: a user name or uid:gid, looked up once. */
static int
config_finish_run_as(struct config_state *st, char **cause)
{
	struct config	*c = st->c;
	struct passwd	*pw;
	unsigned long	 uid, gid;
	char		 extra;

	if (c->run_as == NULL || *c->run_as == '\0')
		return (0);
	if (sscanf(c->run_as, "%lu:%lu%c", &uid, &gid, &extra) == 2) {
		c->run_uid = (uid_t)uid;
		c->run_gid = (gid_t)gid;
	} else if ((pw = getpwnam(c->run_as)) != NULL) {
		c->run_uid = pw->pw_uid;
		c->run_gid = pw->pw_gid;
	} else {
		xasprintf(cause, "%s: no user '%s' (a name or uid:gid)",
		    st->where[config_find("run_as")], c->run_as);
		return (-1);
	}
	if (c->run_uid == 0) {
		xasprintf(cause, "%s: run_as must not be root",
		    st->where[config_find("run_as")]);
		return (-1);
	}
	if (c->run_uid == (uid_t)-1 || c->run_gid == (gid_t)-1) {
		xasprintf(cause, "%s: run_as: -1 is not a user or group",
		    st->where[config_find("run_as")]);
		return (-1);
	}
	c->run_as_set = 1;
	return (0);
}

/* The shell must be an executable file. */
static int
config_finish_shell(struct config_state *st, char **cause)
{
	const char	*shell = st->c->shell;
	struct stat	 sb;

	if (stat(shell, &sb) == 0 && !S_ISREG(sb.st_mode))
		errno = EACCES;
	else if (access(shell, X_OK) == 0)
		return (0);
	xasprintf(cause, "%s: '%s' is not executable: %s",
	    st->where[config_find("shell")], shell, strerror(errno));
	return (-1);
}

/* An item without a timeout must not already be over the maximum. */
static int
config_finish_timeouts(struct config_state *st, char **cause)
{
	struct config	*c = st->c;
	char		 dflt[32], max[32];

	if (c->default_timeout_ms <= c->max_timeout_ms)
		return (0);
	config_format(CONFIG_MS, c->default_timeout_ms, dflt, sizeof dflt);
	config_format(CONFIG_MS, c->max_timeout_ms, max, sizeof max);
	xasprintf(cause, "%s: default timeout %s seconds is above the "
	    "maximum timeout %s seconds (from %s)",
	    st->where[config_find("default_timeout_s")], dflt, max,
	    st->where[config_find("max_timeout_s")]);
	return (-1);
}

/*
 * The queue's tier: queue_tiers (file) beats the file's and the default
 * tier, the environment and flags beat both. Then the policy is built and
 * its rules checked.
 */
static int
config_finish_policy(struct config_state *st, char **cause)
{
	struct config	*c = st->c;
	const char	*where = st->where[config_find("tier")], *qt;

	qt = policyconf_queue_tier(c->policy, c->queue);
	if (qt != NULL && (strncmp(where, "default", 7) == 0 ||
	    strncmp(where, "config file", 11) == 0)) {
		free(c->tier);
		c->tier = xstrdup(qt);
	}
	c->tier_auto = strcmp(c->tier, "auto") == 0;
	if (c->tier_auto)
		c->tier_level = CLS_TIER_READ_ONLY;	/* until confined */
	else
		cls_tier_parse(c->tier, &c->tier_level);
	cls_sandbox_parse(c->sandbox, &c->sandbox_mode);
	c->confine_mode = strcmp(c->confine, "required") == 0 ?
	    CONFINE_REQUIRED : strcmp(c->confine, "off") == 0 ? CONFINE_OFF :
	    CONFINE_AUTO;
	if (policyconf_queue_network(c->policy, c->queue) != -1 &&
	    (strncmp(st->where[config_find("network")], "default", 7) == 0 ||
	    strncmp(st->where[config_find("network")], "config file", 11) ==
	    0))
		c->network = policyconf_queue_network(c->policy, c->queue);
	if (policyconf_finish(c->policy, c->workspace, c->shell, cause) != 0) {
		if (c->config_file != NULL) {
			where = *cause;
			xasprintf(cause, "config file %s: %s", c->config_file,
			    where);
			free((char *)where);
		}
		return (-1);
	}
	return (0);
}

/* The checks that need every layer, and the file system. */
static int
config_finish(struct config_state *st, char **cause)
{
	if (config_finish_timeouts(st, cause) != 0 ||
	    config_finish_workspace(st, cause) != 0 ||
	    config_finish_dir(st, "log_dir", &st->c->log_dir, cause) != 0 ||
	    config_finish_dir(st, "state_dir", &st->c->state_dir, cause) != 0 ||
	    config_finish_dir(st, "tmp_dir", &st->c->tmp_dir, cause) != 0 ||
	    config_finish_run_as(st, cause) != 0 ||
	    config_finish_shell(st, cause) != 0 ||
	    config_finish_policy(st, cause) != 0)
		return (-1);
	st->c->verbose = st->verbose;
	st->c->check_confinement = st->check;
	return (0);
}

/* Layers, lowest first: defaults, file, environment, flags. */
int
config_load(struct config *c, int argc, char **argv, char **envp,
    char **cause)
{
	struct config_state	 st;
	const char		*file;
	size_t			 i;
	int			 r;

	*cause = NULL;
	memset(c, 0, sizeof *c);
	memset(&st, 0, sizeof st);
	st.c = c;
	c->policy = policyconf_create();
	if ((r = config_parse_flags(&st, argc, argv, cause)) != 0)
		goto out;
	file = st.config_file;
	if (file == NULL)
		file = config_getenv(envp, "EXECQ_CONFIG");
	r = -1;
	if (config_apply_defaults(&st, cause) != 0 ||
	    (file != NULL && config_apply_file(&st, file, cause) != 0) ||
	    config_apply_env(&st, envp, cause) != 0 ||
	    config_apply_flags(&st, cause) != 0 ||
	    config_finish(&st, cause) != 0)
		goto out;
	r = 0;
out:
	if (r != 0)
		config_release(c);
	for (i = 0; i < CONFIG_NOPTS; i++)
		free(st.where[i]);
	return (r);
}

/* Frees every string; c is zeroed, so releasing twice is harmless. */
void
config_release(struct config *c)
{
	if (c == NULL)
		return;
	free(c->redis_url);
	free(c->queue);
	free(c->reply_default);
	free(c->workspace);
	free(c->log_dir);
	free(c->operator_token);
	free(c->state_dir);
	free(c->shell);
	free(c->consumer);
	free(c->cgroup);
	free(c->config_file);
	free(c->tier);
	free(c->sandbox);
	free(c->confine);
	free(c->tmp_dir);
	free(c->run_as);
	free(c->http);
	free(c->log_file);
	policyconf_free(c->policy);
	memset(c, 0, sizeof *c);
}

/* One option of --help: flags on the left, help lines on the right. */
static void
config_usage_row(FILE *f, const char *left1, const char *left2,
    const char *help, const char *env, const char *def)
{
	const char	*left[2] = { left1, left2 }, *p, *nl;
	char		*text;
	int		 row, len;

	xasprintf(&text, "%s\n(%s; default %s)", help, env, def);
	for (p = text, row = 0; p != NULL; p = nl, row++) {
		if ((nl = strchr(p, '\n')) != NULL)
			len = (int)(nl++ - p);
		else
			len = (int)strlen(p);
		fprintf(f, "  %-22s  %.*s\n", row < 2 && left[row] != NULL ?
		    left[row] : "", len, p);
	}
	free(text);
}

/* The table's options, in its order. */
static void
config_usage_opts(FILE *f)
{
	const struct config_opt	*opt;
	char			 left[64], noflag[64];
	size_t			 i;

	for (i = 0; i < CONFIG_NOPTS; i++) {
		opt = &config_opts[i];
		snprintf(left, sizeof left, "--%s%s%s", opt->flag,
		    opt->metavar != NULL ? " " : "",
		    opt->metavar != NULL ? opt->metavar : "");
		snprintf(noflag, sizeof noflag, "--%s",
		    opt->noflag != NULL ? opt->noflag : "");
		config_usage_row(f, left, opt->noflag != NULL ? noflag : NULL,
		    opt->help, opt->env, opt->def != NULL ? opt->def :
		    "<hostname>-<pid>");
	}
}

/* --help. */
void
config_usage(FILE *f)
{
	fprintf(f, "execq-worker: runs shell commands taken from a Redis "
	    "queue.\n\n"
	    "usage: execq-worker [options]\n\n"
	    "Running commands is OFF by default: pass --enable-execute or set\n"
	    "ENABLE_EXECUTE=1, or every EXEC item is answered with an error.\n"
	    "\n"
	    "Options (in parentheses: the environment variable and the "
	    "default):\n");
	config_usage_row(f, "--config FILE", NULL,
	    "JSON config file, keys as in docs/CONFIG.md", "EXECQ_CONFIG",
	    "none");
	config_usage_opts(f);
	fprintf(f, "  %-22s  %s\n  %-22s  %s\n  %-22s  %s\n  %-22s  %s\n"
	    "  %-22s  %s\n\n",
	    "--check-confinement", "probe every confinement layer, print",
	    "", "them, exit 0 if all are on (1 if not)",
	    "-v, --verbose", "debug diagnostics on stderr",
	    "-h, --help", "print this help and exit",
	    "-V, --version", "print the version and exit");
	fprintf(f, "Precedence, highest first: flags, environment, config "
	    "file, defaults.\n"
	    "Seconds may be fractional (0.5); sizes take k, m or g (64k,\n"
	    "1m, 2g).\n"
	    "Every setting is described in docs/CONFIG.md.\n");
}
