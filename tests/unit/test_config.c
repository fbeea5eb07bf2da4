#include <sys/stat.h>

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker/config.h"
#include "policy/policyconf.h"

/* A private temp dir, the config file path in it, and the result. */
struct fixture {
	char		 dir[64];
	char		 file[128];	/* dir/config.json */
	char		*oldcwd;	/* tests run in dir */
	struct config	 c;
	char		*cause;
};

/* argv and envp literals: ARGS("--a", "1"), NULL for none. */
#define ARGS(...)	((const char *const []){ __VA_ARGS__, NULL })

static int
setup(void **state)
{
	struct fixture	*fx;

	fx = calloc(1, sizeof *fx);
	assert_non_null(fx);
	snprintf(fx->dir, sizeof fx->dir, "/tmp/test_config.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->file, sizeof fx->file, "%s/config.json", fx->dir);
	/* Defaults are relative ("workspace" is made): keep them in here. */
	assert_non_null(fx->oldcwd = getcwd(NULL, 0));
	assert_int_equal(chdir(fx->dir), 0);
	*state = fx;
	return (0);
}

/* nftw callback: removes one entry, children first. */
static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return (remove(path));
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	config_release(&fx->c);
	free(fx->cause);
	assert_int_equal(chdir(fx->oldcwd), 0);
	free(fx->oldcwd);
	nftw(fx->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return (0);
}

/* A NULL-terminated, writable copy of a literal list (NULL: empty). */
static char **
strv(const char *first, const char *const *rest)
{
	char	**v;
	size_t	  n = 0, i = 0;

	while (rest != NULL && rest[n] != NULL)
		n++;
	v = calloc(n + 2, sizeof *v);
	assert_non_null(v);
	if (first != NULL)
		v[i++] = strdup(first);
	for (n = 0; rest != NULL && rest[n] != NULL; n++)
		v[i++] = strdup(rest[n]);
	return (v);
}

static void
strv_free(char **v)
{
	size_t	i;

	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* config_load with argv "execq-worker args..." and the given envp. */
static int
load(struct fixture *fx, const char *const *args, const char *const *env)
{
	char	**argv, **envp;
	int	  argc, r;

	config_release(&fx->c);
	free(fx->cause);
	fx->cause = NULL;
	argv = strv("execq-worker", args);
	envp = strv(NULL, env);
	for (argc = 0; argv[argc] != NULL; argc++)
		/* nothing */;
	r = config_load(&fx->c, argc, argv, envp, &fx->cause);
	if (r == 0)
		assert_null(fx->cause);
	else if (r == -1)
		assert_non_null(fx->cause);
	strv_free(argv);
	strv_free(envp);
	return (r);
}

/* load() that must fail with a cause containing want. */
static void
load_fails(struct fixture *fx, const char *const *args,
    const char *const *env, const char *want)
{
	if (load(fx, args, env) != -1)
		fail_msg("loaded; expected an error with '%s'", want);
	if (strstr(fx->cause, want) == NULL)
		fail_msg("cause '%s' lacks '%s'", fx->cause, want);
	assert_null(fx->c.redis_url);		/* released on error */
}

/* Writes text to the fixture's config file. */
static void
write_config(struct fixture *fx, const char *text)
{
	FILE	*f;

	assert_non_null(f = fopen(fx->file, "w"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* "--config" "<file>" as an argv list. */
#define CONFIG_ARGS(fx, ...) \
	((const char *const []){ "--config", (fx)->file, __VA_ARGS__, NULL })

static void
test_config_defaults(void **state)
{
	struct fixture	*fx = *state;
	char		*cwd, *want, host[256];
	struct config	*c = &fx->c;

	assert_int_equal(load(fx, NULL, NULL), 0);
	assert_string_equal(c->redis_url, "redis://127.0.0.1:6379/0");
	assert_string_equal(c->queue, "exec");
	assert_string_equal(c->reply_default, "replies");
	assert_non_null(cwd = realpath("workspace", NULL));	/* made */
	assert_string_equal(c->workspace, cwd);
	free(cwd);
	assert_non_null(cwd = getcwd(NULL, 0));
	assert_int_equal(asprintf(&want, "%s/.tmp/exec", cwd) > 0, 1);
	assert_string_equal(c->log_dir, want);
	free(want);
	free(cwd);
	assert_string_equal(c->shell, "/bin/sh");
	assert_string_equal(c->cgroup, "auto");
	assert_int_equal(gethostname(host, sizeof host), 0);
	assert_int_equal(asprintf(&want, "-%ld", (long)getpid()) > 0, 1);
	assert_memory_equal(c->consumer, host, strlen(host));
	assert_string_equal(c->consumer + strlen(host), want);
	free(want);
	assert_int_equal(c->enable_execute, 0);
	assert_int_equal(c->default_timeout_ms, 30000);
	assert_int_equal(c->max_timeout_ms, 3600000);
	assert_int_equal(c->kill_grace_ms, 5000);
	assert_int_equal(c->drain_ms, 2000);
	assert_int_equal(c->output_cap, 1048576);
	assert_int_equal(c->max_procs, 16);
	assert_int_equal(c->max_item_bytes, 1048576);
	assert_int_equal(c->answer_ttl_s, 86400);
	assert_int_equal(c->claim_idle_ms, 30000);
	assert_int_equal(c->redis_timeout_ms, 10000);
	assert_int_equal(c->log_fsync, 0);
	assert_int_equal(c->verbose, 0);
	assert_null(c->config_file);
}

static void
test_config_file_overrides_default(void **state)
{
	struct fixture	*fx = *state;
	struct config	*c = &fx->c;

	write_config(fx, "{\"queue\": \"jobs\", \"max_procs\": 5, "
	    "\"enable_execute\": true, \"default_timeout_s\": 1.5, "
	    "\"output_cap\": \"64k\", \"max_item_bytes\": 2048, "
	    "\"redis_url\": \"unix:///run/r.sock?db=2\", \"log_fsync\": true, "
	    "\"cgroup\": \"off\", \"consumer\": \"w1\"}");
	assert_int_equal(load(fx, ARGS("--config", fx->file), NULL), 0);
	assert_string_equal(c->queue, "jobs");
	assert_int_equal(c->max_procs, 5);
	assert_int_equal(c->enable_execute, 1);
	assert_int_equal(c->default_timeout_ms, 1500);
	assert_int_equal(c->output_cap, 65536);
	assert_int_equal(c->max_item_bytes, 2048);
	assert_string_equal(c->redis_url, "unix:///run/r.sock?db=2");
	assert_int_equal(c->log_fsync, 1);
	assert_string_equal(c->cgroup, "off");
	assert_string_equal(c->consumer, "w1");
	assert_string_equal(c->config_file, fx->file);
	assert_string_equal(c->reply_default, "replies");	/* untouched */
}

/* The config make install puts in place loads (paths overridden). */
static void
test_config_installed_example_loads(void **state)
{
	struct fixture	*fx = *state;
	char		*file, *ws;

	assert_int_equal(asprintf(&file, "%s/docs/worker.json.example",
	    fx->oldcwd) > 0, 1);
	assert_int_equal(asprintf(&ws, "EXECQ_WORKSPACE=%s", fx->dir) > 0, 1);
	assert_int_equal(load(fx, ARGS("--config", file), ARGS(ws)), 0);
	assert_string_equal(fx->c.log_file, "/var/log/execq/worker.log");
	assert_string_equal(fx->c.http, "127.0.0.1:9464");
	assert_int_equal(fx->c.enable_execute, 0);
	free(ws);
	free(file);
}

static void
test_config_env_overrides_file(void **state)
{
	struct fixture	*fx = *state;
	char		*cfg;

	write_config(fx, "{\"queue\": \"from-file\", \"shell\": \"/bin/sh\"}");
	assert_int_equal(asprintf(&cfg, "EXECQ_CONFIG=%s", fx->file) > 0, 1);
	assert_int_equal(load(fx, NULL,
	    ARGS(cfg, "EXECQ_QUEUE=from-env", "EXECQ_SHELL=/bin/true")), 0);
	assert_string_equal(fx->c.queue, "from-env");
	assert_string_equal(fx->c.shell, "/bin/true");
	assert_string_equal(fx->c.config_file, fx->file);
	free(cfg);
}

static void
test_config_flag_overrides_env(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(load(fx, ARGS("--reply-default", "from-flag",
	    "--cgroup", "/sys/fs/cgroup/execq"),
	    ARGS("EXECQ_REPLY_DEFAULT=from-env", "EXECQ_CGROUP=off")), 0);
	assert_string_equal(fx->c.reply_default, "from-flag");
	assert_string_equal(fx->c.cgroup, "/sys/fs/cgroup/execq");
}

/* Writes a password file in the fixture's dir with mode; its path. */
static char *
write_pass(struct fixture *fx, const char *name, const char *text,
    mode_t mode)
{
	char	*path;
	FILE	*f;

	assert_int_equal(asprintf(&path, "%s/%s", fx->dir, name) > 0, 1);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
	return (path);
}

/* The Redis login: a file, the environment, the user; never a flag. */
static void
test_config_redis_password_sources(void **state)
{
	struct fixture	*fx = *state;
	char		*pw, *env, *open, *cfg;

	/* Defaults: the URL's own. */
	assert_int_equal(load(fx, NULL, NULL), 0);
	assert_string_equal(fx->c.redis_user, "");
	assert_string_equal(fx->c.redis_password, "");
	assert_int_equal(fx->c.redis_url_secret_argv, 0);

	/* The file's first line, without its newline. */
	pw = write_pass(fx, "pw", "s3cret@/x\nsecond line\n", 0600);
	assert_int_equal(load(fx, ARGS("--redis-password-file", pw,
	    "--redis-user", "worker"), NULL), 0);
	assert_string_equal(fx->c.redis_password, "s3cret@/x");
	assert_string_equal(fx->c.redis_user, "worker");

	/* The environment, for both. */
	assert_int_equal(asprintf(&env, "EXECQ_REDIS_PASSWORD_FILE=%s", pw) >
	    0, 1);
	assert_int_equal(load(fx, NULL, ARGS(env, "EXECQ_REDIS_USER=w2")), 0);
	assert_string_equal(fx->c.redis_password, "s3cret@/x");
	assert_string_equal(fx->c.redis_user, "w2");
	assert_int_equal(load(fx, NULL, ARGS("EXECQ_REDIS_PASSWORD=pl@in")),
	    0);
	assert_string_equal(fx->c.redis_password, "pl@in");

	/* The config file may hold either. */
	assert_int_equal(asprintf(&cfg, "{\"redis_password_file\": \"%s\", "
	    "\"redis_user\": \"w3\"}", pw) > 0, 1);
	write_config(fx, cfg);
	assert_int_equal(load(fx, CONFIG_ARGS(fx, "--queue", "q"), NULL), 0);
	assert_string_equal(fx->c.redis_password, "s3cret@/x");
	assert_string_equal(fx->c.redis_user, "w3");

	/* Not both; not a file anyone may read; not an empty one. */
	load_fails(fx, NULL, ARGS(env, "EXECQ_REDIS_PASSWORD=x"),
	    "give the Redis password one way");
	open = write_pass(fx, "open", "s3cret\n", 0644);
	load_fails(fx, ARGS("--redis-password-file", open), NULL,
	    "may be read by anyone");
	free(open);
	open = write_pass(fx, "empty", "\n", 0600);
	load_fails(fx, ARGS("--redis-password-file", open), NULL,
	    "holds no password");
	load_fails(fx, ARGS("--redis-password-file", "/nonexistent/pw"), NULL,
	    "No such file");
	/* No flag takes the password itself (ps would show it). */
	load_fails(fx, ARGS("--redis-password", "hunter2"), NULL,
	    "spell out --redis-password-file");
	assert_null(strstr(fx->cause, "hunter2"));
	load_fails(fx, ARGS("--redis-passw=hunter2"), NULL, "spell out");
	assert_null(strstr(fx->cause, "hunter2"));
	assert_int_equal(load(fx, ARGS("--redis-password-file=" "x"), NULL),
	    -1);
	assert_non_null(strstr(fx->cause, "No such file"));
	/* A causes never holds a secret. */
	load_fails(fx, ARGS("--redis-password-file", open), ARGS(
	    "EXECQ_REDIS_PASSWORD=hunter2"), "one way");
	assert_null(strstr(fx->cause, "hunter2"));

	/* A password in --redis works, and is marked for a warning. */
	assert_int_equal(load(fx, ARGS("--redis", "redis://u:pw@h"), NULL),
	    0);
	assert_int_equal(fx->c.redis_url_secret_argv, 1);
	assert_int_equal(load(fx, NULL, ARGS("EXECQ_REDIS_URL=redis://u:pw@h")),
	    0);
	assert_int_equal(fx->c.redis_url_secret_argv, 0);
	assert_int_equal(load(fx, ARGS("--redis", "redis://h"), NULL), 0);
	assert_int_equal(fx->c.redis_url_secret_argv, 0);
	free(open);
	free(cfg);
	free(env);
	free(pw);
}

/* One key through all four layers: default, file, environment, flag. */
static void
test_config_layers_max_procs(void **state)
{
	struct fixture	*fx = *state;
	char		*cfg;

	write_config(fx, "{\"max_procs\": 5}");
	assert_int_equal(asprintf(&cfg, "EXECQ_CONFIG=%s", fx->file) > 0, 1);

	assert_int_equal(load(fx, NULL, NULL), 0);
	assert_int_equal(fx->c.max_procs, 16);
	assert_int_equal(load(fx, NULL, ARGS(cfg)), 0);
	assert_int_equal(fx->c.max_procs, 5);
	assert_int_equal(load(fx, NULL, ARGS(cfg, "EXECQ_MAX_PROCS=6")), 0);
	assert_int_equal(fx->c.max_procs, 6);
	assert_int_equal(load(fx, ARGS("--max-procs", "7"),
	    ARGS(cfg, "EXECQ_MAX_PROCS=6")), 0);
	assert_int_equal(fx->c.max_procs, 7);
	/* The last flag wins; --max-procs=N works too. */
	assert_int_equal(load(fx, ARGS("--max-procs", "7", "--max-procs=8"),
	    ARGS(cfg, "EXECQ_MAX_PROCS=6")), 0);
	assert_int_equal(fx->c.max_procs, 8);
	free(cfg);
}

static void
test_config_config_flag_beats_env(void **state)
{
	struct fixture	*fx = *state;

	write_config(fx, "{\"max_procs\": 9}");
	assert_int_equal(load(fx, ARGS("--config", fx->file),
	    ARGS("EXECQ_CONFIG=/nonexistent/execq.json")), 0);
	assert_int_equal(fx->c.max_procs, 9);
}

static void
test_config_enable_execute_forms(void **state)
{
	struct fixture	*fx = *state;
	static const char *const on[] = { "1", "true", "TRUE", "yes", "On" };
	static const char *const off[] = { "0", "false", "No", "off", "OFF" };
	char		 env[64];
	size_t		 i;

	for (i = 0; i < sizeof on / sizeof on[0]; i++) {
		snprintf(env, sizeof env, "ENABLE_EXECUTE=%s", on[i]);
		assert_int_equal(load(fx, NULL, ARGS(env)), 0);
		assert_int_equal(fx->c.enable_execute, 1);
	}
	for (i = 0; i < sizeof off / sizeof off[0]; i++) {
		snprintf(env, sizeof env, "ENABLE_EXECUTE=%s", off[i]);
		assert_int_equal(load(fx, NULL, ARGS(env)), 0);
		assert_int_equal(fx->c.enable_execute, 0);
	}
	load_fails(fx, NULL, ARGS("ENABLE_EXECUTE=maybe"),
	    "ENABLE_EXECUTE: 'maybe' is not a boolean");
	load_fails(fx, NULL, ARGS("ENABLE_EXECUTE=2"), "is not a boolean");

	assert_int_equal(load(fx, ARGS("--enable-execute"),
	    ARGS("ENABLE_EXECUTE=0")), 0);
	assert_int_equal(fx->c.enable_execute, 1);
	assert_int_equal(load(fx, ARGS("--disable-execute"),
	    ARGS("ENABLE_EXECUTE=yes")), 0);
	assert_int_equal(fx->c.enable_execute, 0);
	load_fails(fx, ARGS("--enable-execute=1"), NULL,
	    "--enable-execute=1 takes no value");
}

static void
test_config_file_unknown_key(void **state)
{
	struct fixture	*fx = *state;
	char		*want;

	write_config(fx, "{\"max_procs\": 4, \"max_prcs\": 3}");
	assert_int_equal(asprintf(&want, "config file %s: unknown key "
	    "'max_prcs'", fx->file) > 0, 1);
	load_fails(fx, ARGS("--config", fx->file), NULL, want);
	free(want);
}

static void
test_config_file_bad_json(void **state)
{
	struct fixture	*fx = *state;
	char		*want;

	assert_int_equal(asprintf(&want, "config file %s: line ",
	    fx->file) > 0, 1);
	write_config(fx, "{\"max_procs\": 4,\n");
	load_fails(fx, ARGS("--config", fx->file), NULL, want);
	write_config(fx, "");
	load_fails(fx, ARGS("--config", fx->file), NULL, want);
	write_config(fx, "{\"queue\": \"a\", \"queue\": \"b\"}");
	load_fails(fx, ARGS("--config", fx->file), NULL, "duplicate");
	write_config(fx, "[1, 2]");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "expected a JSON object, got an array");
	free(want);
}

static void
test_config_file_wrong_type(void **state)
{
	struct fixture	*fx = *state;
	char		*want;

	assert_int_equal(asprintf(&want, "config file %s: max_procs: "
	    "expected a whole number, got a string", fx->file) > 0, 1);
	write_config(fx, "{\"max_procs\": \"4\"}");
	load_fails(fx, ARGS("--config", fx->file), NULL, want);
	free(want);

	write_config(fx, "{\"enable_execute\": 1}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "enable_execute: expected true or false, got a whole number");
	write_config(fx, "{\"queue\": [\"a\"]}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "queue: expected a string, got an array");
	write_config(fx, "{\"max_procs\": 4.5}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "max_procs: expected a whole number, got a number with a "
	    "decimal point");
	write_config(fx, "{\"drain_s\": null}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "drain_s: expected a number of seconds, got null");
}

static void
test_config_missing_config_file(void **state)
{
	struct fixture	*fx = *state;
	char		*env;

	load_fails(fx, ARGS("--config", "/nonexistent/execq.json"), NULL,
	    "config file /nonexistent/execq.json: No such file or directory");
	load_fails(fx, NULL, ARGS("EXECQ_CONFIG=/nonexistent/x.json"),
	    "config file /nonexistent/x.json: No such file or directory");
	load_fails(fx, ARGS("--config", fx->dir), NULL, "Is a directory");
	load_fails(fx, ARGS("--config", ""), NULL, "config file : ");
	load_fails(fx, ARGS("--config"), NULL, "--config needs a value");

	/* An empty variable counts as unset. */
	assert_int_equal(asprintf(&env, "EXECQ_CONFIG=") > 0, 1);
	assert_int_equal(load(fx, NULL, ARGS(env)), 0);
	assert_null(fx->c.config_file);
	free(env);
}

static void
test_config_default_above_max_timeout(void **state)
{
	struct fixture	*fx = *state;

	load_fails(fx, ARGS("--timeout", "100", "--max-timeout", "60"), NULL,
	    "--timeout: default timeout 100 seconds is above the maximum "
	    "timeout 60 seconds (from --max-timeout)");
	load_fails(fx, NULL, ARGS("EXECQ_MAX_TIMEOUT_S=10"),
	    "default default_timeout_s: default timeout 30 seconds is above "
	    "the maximum timeout 10 seconds (from EXECQ_MAX_TIMEOUT_S)");
	assert_int_equal(load(fx, ARGS("--timeout", "60", "--max-timeout",
	    "60"), NULL), 0);
	assert_int_equal(fx->c.default_timeout_ms, 60000);
	load_fails(fx, ARGS("--timeout", "0"), NULL,
	    "--timeout: '0' must be between 0.001 and 4294967 seconds");
	load_fails(fx, ARGS("--max-timeout", "0.0001"), NULL,
	    "must be between 0.001 and");
}

static void
test_config_workspace_realpath(void **state)
{
	struct fixture	*fx = *state;
	char		 ws[PATH_MAX + 32], arg[PATH_MAX + 64], *want;

	snprintf(ws, sizeof ws, "%s/ws", fx->dir);
	assert_int_equal(mkdir(ws, 0700), 0);
	snprintf(arg, sizeof arg, "%s//ws/../ws/.", fx->dir);
	assert_int_equal(load(fx, ARGS("--workspace", arg), NULL), 0);
	assert_non_null(want = realpath(ws, NULL));
	assert_string_equal(fx->c.workspace, want);
	free(want);
}

static void
test_config_workspace_missing(void **state)
{
	struct fixture	*fx = *state;
	char		 ws[PATH_MAX + 32], want[PATH_MAX + 128];

	snprintf(ws, sizeof ws, "%s/nope", fx->dir);
	snprintf(want, sizeof want,
	    "--workspace: '%s': No such file or directory", ws);
	load_fails(fx, ARGS("--workspace", ws), NULL, want);

	snprintf(want, sizeof want, "EXECQ_WORKSPACE: '%s' is not a "
	    "directory", fx->file);
	write_config(fx, "{}");
	snprintf(ws, sizeof ws, "EXECQ_WORKSPACE=%s", fx->file);
	load_fails(fx, NULL, ARGS(ws), want);
}

/*
 * --check-confinement changes nothing on disk: the default workspace is
 * not made (the probe stands a temporary dir in for it), and one that is
 * there is used as it is. A workspace that was asked for must still be
 * there.
 */
static void
test_config_check_confinement_makes_no_workspace(void **state)
{
	struct fixture	*fx = *state;
	struct stat	 sb;
	char		 ws[PATH_MAX + 32], want[PATH_MAX + 128], *cwd;

	assert_int_equal(load(fx, ARGS("--check-confinement"), NULL), 0);
	assert_int_equal(fx->c.check_confinement, 1);
	assert_int_equal(lstat("workspace", &sb), -1);
	assert_non_null(cwd = realpath(".", NULL));
	snprintf(want, sizeof want, "%s/workspace", cwd);
	assert_string_equal(fx->c.workspace, want);
	assert_string_equal(policyconf_policy(fx->c.policy)->workspace, want);

	assert_int_equal(mkdir("workspace", 0700), 0);
	assert_int_equal(load(fx, ARGS("--check-confinement"), NULL), 0);
	assert_string_equal(fx->c.workspace, want);
	free(cwd);

	snprintf(ws, sizeof ws, "%s/nope", fx->dir);
	snprintf(want, sizeof want,
	    "--workspace: '%s': No such file or directory", ws);
	load_fails(fx, ARGS("--check-confinement", "--workspace", ws), NULL,
	    want);
	assert_int_equal(lstat(ws, &sb), -1);
}

static void
test_config_log_dir_made_absolute(void **state)
{
	struct fixture	*fx = *state;
	char		*cwd, *want;

	assert_non_null(cwd = getcwd(NULL, 0));
	assert_int_equal(asprintf(&want, "%s/logs/exec", cwd) > 0, 1);
	assert_int_equal(load(fx, ARGS("--log-dir", "./logs/exec"), NULL), 0);
	assert_string_equal(fx->c.log_dir, want);
	assert_int_equal(load(fx, ARGS("--log-dir", "."), NULL), 0);
	assert_string_equal(fx->c.log_dir, cwd);
	assert_int_equal(load(fx, ARGS("--log-dir", "/var/log/x"), NULL), 0);
	assert_string_equal(fx->c.log_dir, "/var/log/x");
	load_fails(fx, ARGS("--log-dir", ""), NULL,
	    "--log-dir: must not be empty");
	free(want);
	free(cwd);
}

static void
test_config_fractional_seconds(void **state)
{
	struct fixture	*fx = *state;
	struct config	*c = &fx->c;

	write_config(fx, "{\"drain_s\": 1.5, \"claim_idle_s\": 2}");
	assert_int_equal(load(fx, CONFIG_ARGS(fx, "--timeout", "0.5",
	    "--max-timeout", "1.0004"), ARGS("EXECQ_KILL_GRACE_S=.25")), 0);
	assert_int_equal(c->default_timeout_ms, 500);
	assert_int_equal(c->max_timeout_ms, 1000);	/* rounded */
	assert_int_equal(c->kill_grace_ms, 250);
	assert_int_equal(c->drain_ms, 1500);
	assert_int_equal(c->claim_idle_ms, 2000);

	assert_int_equal(load(fx, ARGS("--kill-grace", "0", "--drain",
	    "0.0005", "--claim-idle", "4294967"), NULL), 0);
	assert_int_equal(c->kill_grace_ms, 0);
	assert_int_equal(c->drain_ms, 1);		/* rounded */
	assert_int_equal(c->claim_idle_ms, 4294967000U);
}

static void
test_config_size_suffixes(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(load(fx, ARGS("--output-cap", "64k",
	    "--max-item-bytes", "2M"), NULL), 0);
	assert_int_equal(fx->c.output_cap, 65536);
	assert_int_equal(fx->c.max_item_bytes, 2 << 20);
	assert_int_equal(load(fx, ARGS("--output-cap", "1024"),
	    ARGS("EXECQ_MAX_ITEM_BYTES=64m")), 0);
	assert_int_equal(fx->c.output_cap, 1024);
	assert_int_equal(fx->c.max_item_bytes, 64 << 20);
	load_fails(fx, ARGS("--output-cap", "1023"), NULL,
	    "--output-cap: '1023' must be between 1k and 64m bytes");
	load_fails(fx, ARGS("--output-cap", "65m"), NULL,
	    "must be between 1k and 64m bytes");
	load_fails(fx, ARGS("--output-cap", "1g"), NULL,
	    "--output-cap: '1g' must be between 1k and 64m bytes");
	load_fails(fx, ARGS("--output-cap", "1t"), NULL,
	    "--output-cap: '1t' is not a size");
	assert_int_equal(load(fx, ARGS("--log-max-bytes", "2g"), NULL), 0);
	assert_int_equal(fx->c.log_max_bytes, 2ULL << 30);
	load_fails(fx, ARGS("--output-cap", "k"), NULL, "is not a size");
	load_fails(fx, ARGS("--output-cap", "64kb"), NULL, "is not a size");
}

/* Junk in every layer is refused, and the message says where it was. */
static void
test_config_bad_numbers(void **state)
{
	struct fixture	*fx = *state;
	static const char *const junk[][3] = {
		{ "--max-procs", "10x", "is not a whole number" },
		{ "--max-procs", "", "is not a whole number" },
		{ "--max-procs", "-1", "is not a whole number" },
		{ "--max-procs", "+1", "is not a whole number" },
		{ "--max-procs", " 1", "is not a whole number" },
		{ "--max-procs", "0", "must be between 1 and 4096" },
		{ "--max-procs", "4097", "must be between 1 and 4096" },
		{ "--max-procs", "99999999999999999999999999",
		  "must be between 1 and 4096" },
		{ "--answer-ttl", "1.5", "is not a whole number" },
		{ "--answer-ttl", "4294967296", "must be between 1 and" },
		{ "--timeout", "abc", "is not a number of seconds" },
		{ "--timeout", "1e3", "is not a number of seconds" },
		{ "--timeout", "-1", "is not a number of seconds" },
		{ "--timeout", ".", "is not a number of seconds" },
		{ "--timeout", "1.2.3", "is not a number of seconds" },
		{ "--timeout", "nan", "is not a number of seconds" },
		{ "--drain", "4294968", "must be between 0 and 4294967" },
	};
	char	 want[256];
	size_t	 i;

	for (i = 0; i < sizeof junk / sizeof junk[0]; i++) {
		snprintf(want, sizeof want, "%s: '%s' ", junk[i][0],
		    junk[i][1]);
		load_fails(fx, ARGS(junk[i][0], junk[i][1]), NULL, want);
		if (strstr(fx->cause, junk[i][2]) == NULL)
			fail_msg("cause '%s' lacks '%s'", fx->cause,
			    junk[i][2]);
	}
}

/* The same refusals from the environment and the file say so. */
static void
test_config_bad_numbers_name_their_source(void **state)
{
	struct fixture	*fx = *state;
	char		*cfg;

	load_fails(fx, NULL, ARGS("EXECQ_MAX_PROCS=0"),
	    "EXECQ_MAX_PROCS: '0' must be between 1 and 4096");
	load_fails(fx, NULL, ARGS("EXECQ_DEFAULT_TIMEOUT_S=10s"),
	    "EXECQ_DEFAULT_TIMEOUT_S: '10s' is not a number of seconds");
	write_config(fx, "{\"max_procs\": -3}");
	assert_int_equal(asprintf(&cfg, "config file %s: max_procs: '-3' is "
	    "not a whole number", fx->file) > 0, 1);
	load_fails(fx, ARGS("--config", fx->file), NULL, cfg);
	free(cfg);
	write_config(fx, "{\"max_procs\": 0}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "max_procs: '0' must be between 1 and 4096");
}

static void
test_config_bad_strings(void **state)
{
	struct fixture	*fx = *state;
	char		 name[200];

	load_fails(fx, ARGS("--queue", ".hidden"), NULL,
	    "--queue: '.hidden' is not a valid name");
	load_fails(fx, ARGS("--queue", "a b"), NULL, "is not a valid name");
	load_fails(fx, NULL, ARGS("EXECQ_CONSUMER=w/1"),
	    "EXECQ_CONSUMER: 'w/1' is not a valid name");
	memset(name, 'a', 129);
	name[129] = '\0';
	load_fails(fx, ARGS("--reply-default", name), NULL,
	    "is not a valid name");
	name[128] = '\0';
	assert_int_equal(load(fx, ARGS("--reply-default", name), NULL), 0);
	/* Agents: ACL user names without a '.', each once. */
	assert_int_equal(load(fx, ARGS("--agents", "a-1, b_2 c"), NULL), 0);
	assert_string_equal(fx->c.agents, "a-1, b_2 c");
	load_fails(fx, ARGS("--agents", "alice bob.x"), NULL,
	    "--agents: 'bob.x' is not an agent's name");
	load_fails(fx, NULL, ARGS("EXECQ_AGENTS=a b a"),
	    "EXECQ_AGENTS: 'a' is named twice");
	memset(name, 'a', 65);
	name[65] = '\0';
	load_fails(fx, ARGS("--agents", name), NULL, "is not an agent's name");
	load_fails(fx, ARGS("--shell", "sh"), NULL,
	    "--shell: 'sh' is not an absolute path");
	load_fails(fx, ARGS("--shell", "/nonexistent/sh"), NULL,
	    "--shell: '/nonexistent/sh' is not executable");
	load_fails(fx, ARGS("--shell", "/"), NULL, "is not executable");
	load_fails(fx, ARGS("--cgroup", "on"), NULL,
	    "--cgroup: 'on' must be auto, off or an absolute directory");
}

/* rediss:// and the TLS settings: flags, environment, file; "" unset. */
static void
test_config_tls(void **state)
{
	struct fixture	*fx = *state;
	struct config	*c = &fx->c;

	assert_int_equal(load(fx, NULL, NULL), 0);
	assert_string_equal(c->redis_tls_ca, "");
	assert_string_equal(c->redis_tls_cert, "");
	assert_string_equal(c->redis_tls_key, "");
	assert_string_equal(c->redis_tls_server_name, "");
	assert_int_equal(load(fx, ARGS("--redis", "rediss://u:pw@h",
	    "--redis-tls-ca", "/x/ca.pem", "--redis-tls-server-name",
	    "redis.internal"), ARGS("EXECQ_REDIS_TLS_CERT=/x/c.pem",
	    "EXECQ_REDIS_TLS_KEY=/x/k.pem", "EXECQ_REDIS_TLS_CA=/y/ca.pem")),
	    0);
	assert_string_equal(c->redis_url, "rediss://u:pw@h");
	assert_string_equal(c->redis_tls_ca, "/x/ca.pem");	/* flag wins */
	assert_string_equal(c->redis_tls_cert, "/x/c.pem");
	assert_string_equal(c->redis_tls_key, "/x/k.pem");
	assert_string_equal(c->redis_tls_server_name, "redis.internal");
	write_config(fx, "{\"redis_tls_ca\": \"/z/ca.pem\"}");
	assert_int_equal(load(fx, ARGS("--config", fx->file), NULL), 0);
	assert_string_equal(c->redis_tls_ca, "/z/ca.pem");
}

static void
test_config_empty_env_is_unset(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(load(fx, NULL, ARGS("EXECQ_QUEUE=",
	    "EXECQ_MAX_PROCS=", "ENABLE_EXECUTE=", "EXECQ_QUEUEX=zz",
	    "XEXECQ_MAX_PROCS=3", "junk")), 0);
	assert_string_equal(fx->c.queue, "exec");
	assert_int_equal(fx->c.max_procs, 16);
	assert_int_equal(fx->c.enable_execute, 0);
}

static void
test_config_unknown_flag(void **state)
{
	struct fixture	*fx = *state;

	load_fails(fx, ARGS("--bogus"), NULL, "unknown flag '--bogus'");
	load_fails(fx, ARGS("--bogus=1"), NULL, "unknown flag '--bogus=1'");
	load_fails(fx, ARGS("-x"), NULL, "unknown flag '-x'");
	load_fails(fx, ARGS("-vx"), NULL, "unknown flag '-x'");
	load_fails(fx, ARGS("extra"), NULL, "unexpected argument 'extra'");
	load_fails(fx, ARGS("--max-procs", "3", "extra", "--queue", "q"),
	    NULL, "unexpected argument 'extra'");
	load_fails(fx, ARGS("--redis"), NULL, "--redis needs a value");
}

static void
test_config_verbose_and_flags_only(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(load(fx, ARGS("-v", "--verbose", "-vv",
	    "--log-fsync", "--", "ignored?"), NULL), -1);
	assert_string_equal(fx->cause, "unexpected argument 'ignored?'");
	assert_int_equal(load(fx, ARGS("-v", "--verbose", "-vv",
	    "--log-fsync"), ARGS("EXECQ_LOG_FSYNC=0")), 0);
	assert_int_equal(fx->c.verbose, 4);
	assert_int_equal(fx->c.log_fsync, 1);
	assert_int_equal(load(fx, ARGS("--no-log-fsync"),
	    ARGS("EXECQ_LOG_FSYNC=on")), 0);
	assert_int_equal(fx->c.log_fsync, 0);
}

/* Runs load() with stdout sent to a file; returns what was printed. */
static char *
load_capturing(struct fixture *fx, const char *const *args, int *r)
{
	char	 path[PATH_MAX + 16], *out;
	FILE	*f;
	long	 len;
	int	 fd, saved;

	snprintf(path, sizeof path, "%s/stdout", fx->dir);
	fflush(stdout);
	assert_true((saved = dup(STDOUT_FILENO)) != -1);
	assert_true((fd = open(path, O_WRONLY|O_CREAT|O_TRUNC, 0600)) != -1);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	*r = load(fx, args, NULL);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_non_null(f = fopen(path, "r"));
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	out = calloc(1, len + 1);
	assert_int_equal(fread(out, 1, len, f), len);
	fclose(f);
	return (out);
}

static void
test_config_help_returns_1(void **state)
{
	struct fixture	*fx = *state;
	char		*out;
	int		 r;

	out = load_capturing(fx, ARGS("--max-procs", "3", "--help"), &r);
	assert_int_equal(r, 1);
	assert_null(fx->cause);
	assert_non_null(strstr(out, "usage: execq-worker [options]"));
	free(out);

	/* Even with a broken config file: help does not read it. */
	out = load_capturing(fx, ARGS("--config", "/nonexistent", "-h"), &r);
	assert_int_equal(r, 1);
	free(out);

	out = load_capturing(fx, ARGS("-V"), &r);
	assert_int_equal(r, 1);
	assert_string_equal(out, "execq-worker " EXECQ_VERSION "\n");
	free(out);
}

static void
test_config_usage_lists_every_setting(void **state)
{
	static const char *const want[] = {
		"--config FILE", "EXECQ_CONFIG", "--redis URL",
		"EXECQ_REDIS_URL", "--queue NAME", "EXECQ_QUEUE",
		"--reply-default NAME", "EXECQ_REPLY_DEFAULT",
		"--workspace DIR", "EXECQ_WORKSPACE", "--log-dir DIR",
		"EXECQ_LOG_DIR", "--enable-execute", "--disable-execute",
		"ENABLE_EXECUTE", "--timeout S", "EXECQ_DEFAULT_TIMEOUT_S",
		"--max-timeout S", "EXECQ_MAX_TIMEOUT_S", "--kill-grace S",
		"EXECQ_KILL_GRACE_S", "--drain S", "EXECQ_DRAIN_S",
		"--output-cap BYTES", "EXECQ_OUTPUT_CAP", "--max-procs N",
		"EXECQ_MAX_PROCS", "--max-item-bytes BYTES",
		"EXECQ_MAX_ITEM_BYTES", "--answer-ttl S", "EXECQ_ANSWER_TTL_S",
		"--claim-idle S", "EXECQ_CLAIM_IDLE_S", "--shell PATH",
		"EXECQ_SHELL", "--consumer NAME", "EXECQ_CONSUMER",
		"--cgroup auto|off|DIR", "EXECQ_CGROUP", "--log-fsync",
		"EXECQ_LOG_FSYNC", "-v, --verbose", "-h, --help",
		"-V, --version", "docs/CONFIG.md", "OFF by default",
		"--redis-tls-ca FILE", "EXECQ_REDIS_TLS_CA",
		"--redis-tls-cert FILE", "EXECQ_REDIS_TLS_CERT",
		"--redis-tls-key FILE", "EXECQ_REDIS_TLS_KEY",
		"Precedence", "default redis://127.0.0.1:6379/0",
	};
	char	*buf, *line, *save;
	size_t	 len, i;
	FILE	*f;

	(void)state;
	assert_non_null(f = open_memstream(&buf, &len));
	config_usage(f);
	fclose(f);
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		if (strstr(buf, want[i]) == NULL)
			fail_msg("--help lacks '%s'", want[i]);
	}
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strlen(line) > 79)
			fail_msg("--help line too long: '%s'", line);
	}
	free(buf);
}

static void
test_config_release_zeroes(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(load(fx, NULL, NULL), 0);
	config_release(&fx->c);
	assert_null(fx->c.redis_url);
	assert_null(fx->c.workspace);
	assert_int_equal(fx->c.max_procs, 0);
	config_release(&fx->c);
	config_release(NULL);
}

static void
test_config_policy_defaults(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(load(fx, NULL, NULL), 0);
	/* auto: read_only until the worker finds every layer on. */
	assert_string_equal(fx->c.tier, "auto");
	assert_int_equal(fx->c.tier_auto, 1);
	assert_int_equal(fx->c.tier_level, CLS_TIER_READ_ONLY);
	assert_string_equal(fx->c.sandbox, "hold");
	assert_int_equal(fx->c.sandbox_mode, CLS_SANDBOX_HOLD);
	assert_int_equal(fx->c.approval_timeout_ms, 600000);
	assert_int_equal(policyconf_nrules(fx->c.policy), 0);
	assert_string_equal(policyconf_policy(fx->c.policy)->workspace,
	    fx->c.workspace);
}

/* queue_tiers beats the file's tier; the environment beats both. */
static void
test_config_queue_tiers(void **state)
{
	struct fixture	*fx = *state;
	char		*cfg;

	write_config(fx, "{\"tier\": \"read_write\", \"queue\": \"ops\", "
	    "\"queue_tiers\": {\"ops\": \"admin\", \"x\": \"read_only\"}}");
	assert_int_equal(load(fx, ARGS("--config", fx->file), NULL), 0);
	assert_int_equal(fx->c.tier_level, CLS_TIER_ADMIN);
	assert_int_equal(load(fx, CONFIG_ARGS(fx, "--queue", "other"), NULL),
	    0);
	assert_int_equal(fx->c.tier_level, CLS_TIER_READ_WRITE);
	assert_int_equal(asprintf(&cfg, "EXECQ_CONFIG=%s", fx->file) > 0, 1);
	assert_int_equal(load(fx, NULL, ARGS(cfg, "EXECQ_TIER=read_only")), 0);
	assert_int_equal(fx->c.tier_level, CLS_TIER_READ_ONLY);
	assert_int_equal(load(fx, ARGS("--tier", "read_write",
	    "--sandbox", "refuse", "--approval-timeout", "2.5"), NULL), 0);
	assert_int_equal(fx->c.tier_level, CLS_TIER_READ_WRITE);
	assert_int_equal(fx->c.sandbox_mode, CLS_SANDBOX_REFUSE);
	assert_int_equal(fx->c.approval_timeout_ms, 2500);
	free(cfg);
}

/* The confinement's settings: defaults, precedence, bad values. */
static void
test_config_confinement(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(load(fx, NULL, NULL), 0);
	assert_int_equal(fx->c.confine_mode, CONFINE_AUTO);
	assert_int_equal(fx->c.network, 0);
	assert_int_equal(fx->c.max_pids, 512);
	assert_int_equal(fx->c.max_memory, 2ULL << 30);
	assert_int_equal(fx->c.run_as_set, 0);
	assert_true(fx->c.tmp_dir[0] == '/');	/* made absolute */
	assert_string_equal(fx->c.tmp_dir, "/var/tmp/execq");
	assert_null(policyconf_read_paths(fx->c.policy));
	assert_int_equal(load(fx, ARGS("--confine", "required", "--network",
	    "--max-pids", "64", "--max-memory", "256m", "--run-as",
	    "1234:5678", "--tier", "confined", "--tmp-dir", "/var/tmp/x"),
	    NULL), 0);
	assert_int_equal(fx->c.confine_mode, CONFINE_REQUIRED);
	assert_int_equal(fx->c.network, 1);
	assert_int_equal(fx->c.max_pids, 64);
	assert_int_equal(fx->c.max_memory, 256 << 20);
	assert_int_equal(fx->c.run_as_set, 1);
	assert_int_equal(fx->c.run_uid, 1234);
	assert_int_equal(fx->c.run_gid, 5678);
	assert_int_equal(fx->c.tier_level, CLS_TIER_CONFINED);
	assert_int_equal(fx->c.tier_auto, 0);
	assert_string_equal(fx->c.tmp_dir, "/var/tmp/x");
	assert_int_equal(load(fx, NULL, ARGS("EXECQ_CONFINE=off")), 0);
	assert_int_equal(fx->c.confine_mode, CONFINE_OFF);
	/* queue_network beats the file's network; a flag beats both. */
	write_config(fx, "{\"network\": false, \"queue\": \"web\", "
	    "\"queue_network\": {\"web\": true}, \"read_paths\": "
	    "[\"/usr\", \"/etc\"]}");
	assert_int_equal(load(fx, ARGS("--config", fx->file), NULL), 0);
	assert_int_equal(fx->c.network, 1);
	assert_string_equal(policyconf_read_paths(fx->c.policy)[1], "/etc");
	assert_null(policyconf_read_paths(fx->c.policy)[2]);
	assert_int_equal(load(fx, CONFIG_ARGS(fx, "--no-network"), NULL), 0);
	assert_int_equal(fx->c.network, 0);
	assert_int_equal(load(fx, CONFIG_ARGS(fx, "--queue", "db"), NULL), 0);
	assert_int_equal(fx->c.network, 0);
}

static void
test_config_confinement_bad_values(void **state)
{
	struct fixture	*fx = *state;

	load_fails(fx, ARGS("--confine", "maybe"), NULL,
	    "'maybe' must be auto, required or off");
	load_fails(fx, ARGS("--max-pids", "2"), NULL, "--max-pids");
	load_fails(fx, ARGS("--max-memory", "1k"), NULL, "--max-memory");
	load_fails(fx, ARGS("--run-as", "no-such-user-here"), NULL,
	    "no user 'no-such-user-here'");
	load_fails(fx, ARGS("--run-as", "root"), NULL,
	    "run_as must not be root");
	write_config(fx, "{\"queue_network\": {\"a\": \"yes\"}}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "queue_network.a must be true or false");
	write_config(fx, "{\"read_paths\": [\"usr\"]}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "read_paths[0] must be an absolute path");
}

static void
test_config_policy_bad_values(void **state)
{
	struct fixture	*fx = *state;

	load_fails(fx, ARGS("--tier", "root"), NULL,
	    "'root' must be auto, read_only, read_write, confined or admin");
	load_fails(fx, ARGS("--sandbox", "maybe"), NULL,
	    "must be hold, refuse or off");
	load_fails(fx, ARGS("--approval-timeout", "0"), NULL,
	    "--approval-timeout");
	write_config(fx, "{\"queue_tiers\": {\"a\": \"super\"}}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "queue_tiers.a must be read_only, read_write, confined or admin");
	write_config(fx, "{\"allow_paths\": [\"relative\"]}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "allow_paths[0] must be an absolute path");
	write_config(fx, "{\"allow_paths\": [\"/nonexistent/dir\"]}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "allow_paths: '/nonexistent/dir'");
	write_config(fx, "{\"env_allow\": [\"*\"]}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "env_allow[0] must be a variable name or a pattern");
	write_config(fx, "{\"env_allow\": [\"A\", \"B=1\"]}");
	load_fails(fx, ARGS("--config", fx->file), NULL, "env_allow[1]");
	write_config(fx, "{\"env_allow\": \"A\"}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "env_allow must be an array");
}

/* Every malformed rule is named with its index and what is wrong. */
static void
test_config_rules_malformed(void **state)
{
	static const struct {
		const char	*rule;
		const char	*want;
	} cases[] = {
		{ "5", "rules[0]: must be an object" },
		{ "{\"risk\": \"write\", \"reason\": \"r\", \"examples\": "
		    "[\"a\"]}", "rules[0]: \"match\" is missing" },
		{ "{\"match\": \"a*\", \"risk\": \"safe\", \"reason\": \"r\", "
		    "\"examples\": [\"a\"]}", "risk \"safe\" must be" },
		{ "{\"match\": \"a*\", \"risk\": \"write\", \"examples\": "
		    "[\"a\"]}", "\"reason\" is missing" },
		{ "{\"match\": \"a*\", \"risk\": \"write\", \"reason\": \"r\", "
		    "\"examples\": []}", "\"examples\" must be a non-empty array" },
		{ "{\"match\": \"a*\", \"risk\": \"write\", \"reason\": \"r\"}",
		    "\"examples\" must be a non-empty array" },
		{ "{\"match\": \"a*\", \"risk\": \"write\", \"reason\": \"r\", "
		    "\"examples\": [\"a\"], \"counter_examples\": [1]}",
		    "\"counter_examples\"[0] must be a non-empty string" },
		{ "{\"match\": \"a*\", \"risk\": \"write\", \"reason\": \"r\", "
		    "\"examples\": [\"a\"], \"verdict\": \"x\"}",
		    "unknown key \"verdict\"" },
		{ "{\"match\": \"\", \"risk\": \"write\", \"reason\": \"r\", "
		    "\"examples\": [\"a\"]}", "\"match\" must be a non-empty" },
	};
	struct fixture	*fx = *state;
	char		*text;
	size_t		 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(asprintf(&text, "{\"rules\": [%s]}",
		    cases[i].rule) > 0, 1);
		write_config(fx, text);
		free(text);
		load_fails(fx, ARGS("--config", fx->file), NULL, cases[i].want);
	}
	write_config(fx, "{\"rules\": {}}");
	load_fails(fx, ARGS("--config", fx->file), NULL,
	    "rules must be an array");
}

static void
test_config_rules_loaded(void **state)
{
	struct fixture		*fx = *state;
	const struct cls_policy	*p;

	write_config(fx, "{\"rules\": [{\"name\": \"mk\", \"match\": "
	    "\"make test*\", \"risk\": \"read_only\", \"reason\": \"tests\", "
	    "\"examples\": [\"make test\"], \"counter_examples\": "
	    "[\"make install\"]}, {\"match\": \"terraform apply*\", "
	    "\"risk\": \"blocked\", \"reason\": \"not from agents\", "
	    "\"examples\": [\"terraform apply -auto-approve\"]}], "
	    "\"allow_paths\": [\"/usr/../usr\"], \"env_allow\": "
	    "[\"MYAPP_*\"]}");
	assert_int_equal(load(fx, ARGS("--config", fx->file), NULL), 0);
	p = policyconf_policy(fx->c.policy);
	assert_int_equal(p->nrules, 2);
	assert_string_equal(p->rules[0].name, "mk");
	assert_int_equal(p->rules[0].risk, CLS_READ_ONLY);
	assert_string_equal(p->rules[0].match[0], "make test");
	assert_string_equal(p->rules[0].no_match[0], "make install");
	assert_null(p->rules[0].no_match[1]);
	assert_string_equal(p->rules[1].name, "#2");
	assert_int_equal(p->rules[1].risk, CLS_BLOCKED);
	assert_null(p->rules[1].no_match[0]);
	assert_int_equal(p->nallow, 1);
	assert_string_equal(p->allow_paths[0], "/usr");
	assert_int_equal(p->nenv_allow, 1);
	assert_string_equal(p->env_allow[0], "MYAPP_*");
	assert_int_equal(p->shell, CLS_SHELL_POSIX);	/* /bin/sh: dash */
}

#define T(name)	cmocka_unit_test_setup_teardown(name, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_config_policy_defaults),
		T(test_config_queue_tiers),
		T(test_config_policy_bad_values),
		T(test_config_confinement),
		T(test_config_confinement_bad_values),
		T(test_config_rules_malformed),
		T(test_config_rules_loaded),
		T(test_config_defaults),
		T(test_config_file_overrides_default),
		T(test_config_installed_example_loads),
		T(test_config_redis_password_sources),
		T(test_config_env_overrides_file),
		T(test_config_flag_overrides_env),
		T(test_config_layers_max_procs),
		T(test_config_config_flag_beats_env),
		T(test_config_enable_execute_forms),
		T(test_config_file_unknown_key),
		T(test_config_file_bad_json),
		T(test_config_file_wrong_type),
		T(test_config_missing_config_file),
		T(test_config_default_above_max_timeout),
		T(test_config_workspace_realpath),
		T(test_config_workspace_missing),
		T(test_config_check_confinement_makes_no_workspace),
		T(test_config_log_dir_made_absolute),
		T(test_config_fractional_seconds),
		T(test_config_size_suffixes),
		T(test_config_bad_numbers),
		T(test_config_bad_numbers_name_their_source),
		T(test_config_bad_strings),
		T(test_config_tls),
		T(test_config_empty_env_is_unset),
		T(test_config_unknown_flag),
		T(test_config_verbose_and_flags_only),
		T(test_config_help_returns_1),
		T(test_config_usage_lists_every_setting),
		T(test_config_release_zeroes),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
