/*
 * The worker's settings: the table. One row per setting drives its
 * default, its config file key, its environment variable, its flags and
 * its lines of --help, so they cannot drift apart. Data, and the
 * lookup of a row by its key.
 */

#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "policy/policyconf.h"
#include "worker/config_int.h"

#define CONFIG_MAX_MS	(UINT_MAX / 1000 * 1000ULL)

#define OFF(f)	offsetof(struct config, f)
const struct config_opt config_opts[] = {
	{ "redis_url", "redis", NULL, "EXECQ_REDIS_URL", CONFIG_STRING,
	  OFF(redis_url), 0, 0, "redis://127.0.0.1:6379/0", "URL",
	  "Redis server: redis://[[user]:pw@]host[:port][/db],\n"
	  "rediss://... (TLS), unix://[[user]:pw@]/path[?db=N],\n"
	  "/path, host:port, redis-sentinel://s1,s2/master",
	  config_check_url },
	{ "redis_user", "redis-user", NULL, "EXECQ_REDIS_USER", CONFIG_STRING,
	  OFF(redis_user), 0, 0, "", "USER",
	  "the Redis ACL user to log in as (else the URL's)", NULL },
	{ "redis_password_file", "redis-password-file", NULL,
	  "EXECQ_REDIS_PASSWORD_FILE", CONFIG_STRING,
	  OFF(redis_password_file), 0, 0, "", "FILE",
	  "the Redis password: FILE's first line (not\n"
	  "readable by others); beats the URL's", NULL },
	{ "redis_password", NULL, NULL, "EXECQ_REDIS_PASSWORD", CONFIG_STRING,
	  OFF(redis_password), 0, 0, "", NULL,
	  "the Redis password itself (no flag: argv shows\n"
	  "in ps); beats the URL's", NULL },
	{ "redis_tls_ca", "redis-tls-ca", NULL, "EXECQ_REDIS_TLS_CA",
	  CONFIG_STRING, OFF(redis_tls_ca), 0, 0, "", "FILE",
	  "rediss://: the CAs (PEM) that vouch for Redis's\n"
	  "certificate; empty: the system's", NULL },
	{ "redis_tls_cert", "redis-tls-cert", NULL, "EXECQ_REDIS_TLS_CERT",
	  CONFIG_STRING, OFF(redis_tls_cert), 0, 0, "", "FILE",
	  "rediss://: the worker's client certificate (PEM\n"
	  "chain); empty: none", NULL },
	{ "redis_tls_key", "redis-tls-key", NULL, "EXECQ_REDIS_TLS_KEY",
	  CONFIG_STRING, OFF(redis_tls_key), 0, 0, "", "FILE",
	  "rediss://: its private key (PEM); empty: in the\n"
	  "certificate's file", NULL },
	{ "redis_tls_server_name", "redis-tls-server-name", NULL,
	  "EXECQ_REDIS_TLS_SERVER_NAME", CONFIG_STRING,
	  OFF(redis_tls_server_name), 0, 0, "", "NAME",
	  "rediss://: the name (SNI) Redis's certificate\n"
	  "must carry; empty: the URL's host", NULL },
	{ "redis_wait_replicas", "redis-wait-replicas", NULL,
	  "EXECQ_REDIS_WAIT_REPLICAS", CONFIG_STRING,
	  OFF(redis_wait_replicas), 0, 0, "auto", "N",
	  "an answer or a claim counts once N replicas have\n"
	  "it (WAIT): no failover loses it; auto: 1 with\n"
	  "redis-sentinel://, else 0", config_check_replicas },
	{ "queue", "queue", NULL, "EXECQ_QUEUE", CONFIG_STRING,
	  OFF(queue), 0, 0, POLICYCONF_DEFAULT_QUEUE, "NAME",
	  "queue to serve: streams q:NAME:high, :normal, :low",
	  config_check_name },
	{ "reply_default", "reply-default", NULL, "EXECQ_REPLY_DEFAULT",
	  CONFIG_STRING, OFF(reply_default), 0, 0, "replies", "NAME",
	  "where answers go when an item has no reply_to",
	  config_check_name },
	{ "agents", "agents", NULL, "EXECQ_AGENTS", CONFIG_STRING,
	  OFF(agents), 0, 0, "", "NAMES",
	  "Redis users whose own lanes q:NAME:<agent>.high\n"
	  "... are read too (what comes from one is that\n"
	  "agent's: ids and reply_to <agent>.*)",
	  config_check_agents },
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
	{ "redis_timeout_s", "redis-timeout", NULL, "EXECQ_REDIS_TIMEOUT_S",
	  CONFIG_MS, OFF(redis_timeout_ms), 1, CONFIG_MAX_MS, "10", "S",
	  "a Redis command unanswered for S: the connection\n"
	  "is dropped and made again (/healthz says so)", NULL },
	{ "session_ttl_s", "session-ttl", NULL, "EXECQ_SESSION_TTL_S",
	  CONFIG_UINT, OFF(session_ttl_s), 1, UINT_MAX, "300", "S",
	  "finished sessions stay queryable for S", NULL },
	{ "session_keep", "session-keep", NULL, "EXECQ_SESSION_KEEP",
	  CONFIG_UINT, OFF(session_keep), 1, 100000, "100", "N",
	  "and at most N of them are kept", NULL },
	{ "max_sessions", "max-sessions", NULL, "EXECQ_MAX_SESSIONS",
	  CONFIG_UINT, OFF(max_sessions), 0, 4096, "0", "N",
	  "sessions running at once; past N a new one is\n"
	  "refused (too_many_sessions); 0: half of\n"
	  "max_procs, at least 1", NULL },
	{ "session_idle_timeout_s", "session-idle-timeout", NULL,
	  "EXECQ_SESSION_IDLE_TIMEOUT_S", CONFIG_MS,
	  OFF(session_idle_timeout_ms), 0, CONFIG_MAX_MS, "0", "S",
	  "end a session after S without output or input,\n"
	  "unless it sets its own idle_timeout_s or keep\n"
	  "(0: none)", NULL },
	{ "hold_sessions", "hold-sessions", "no-hold-sessions",
	  "EXECQ_HOLD_SESSIONS", CONFIG_BOOL, OFF(hold_sessions), 0, 0, "on",
	  NULL,
	  "run under a holder process that keeps sessions\n"
	  "through a worker restart (SIGUSR2, a crash): the\n"
	  "next worker adopts them; off: they end with it", NULL },
	{ "log_max_age_hours", "log-max-age", NULL, "EXECQ_LOG_MAX_AGE_HOURS",
	  CONFIG_UINT, OFF(log_max_age_hours), 0, 100000, "24", "H",
	  "at start-up, finished items' logs older than H hours\n"
	  "are removed, as by execq cleanup (0: cleanup off,\n"
	  "keep everything)", NULL },
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
	{ "retry", "retry", NULL, "EXECQ_RETRY", CONFIG_STRING, OFF(retry),
	  0, 0, "", "JSON",
	  "the queue's retry policy for items without\n"
	  "args.retry: the same object ({\"max_attempts\":5})",
	  config_check_retry },
	{ "queue_limits", "queue-limits", NULL, "EXECQ_QUEUE_LIMITS",
	  CONFIG_STRING, OFF(queue_limits), 0, 0, "", "JSON",
	  "limits shared by the fleet, per queue:\n"
	  "{\"build\": {\"max_running\": 4, \"max_per_s\": 10}}",
	  config_check_limits },
	{ "network_domains", "network-domains", NULL,
	  "EXECQ_NETWORK_DOMAINS", CONFIG_STRING, OFF(network_domains), 0, 0,
	  "", "NAMES",
	  "domains this queue's commands reach through the\n"
	  "worker's proxy (pypi.org, *.github.com); an item\n"
	  "asks for others in args.network (held)",
	  config_check_domains },
	{ "network_private_hosts", "network-private-hosts", NULL,
	  "EXECQ_NETWORK_PRIVATE_HOSTS", CONFIG_STRING,
	  OFF(network_private_hosts), 0, 0, "", "NAMES",
	  "names the proxy may dial at a private or\n"
	  "loopback address (a test host; never the\n"
	  "worker's Redis)",
	  config_check_domains },
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

const size_t config_nopts = sizeof config_opts / sizeof config_opts[0];

/* Index of the setting with this file key, or -1. */
int
config_find(const char *key)
{
	size_t	i;

	for (i = 0; i < config_nopts; i++) {
		if (strcmp(config_opts[i].key, key) == 0)
			return ((int)i);
	}
	return (-1);
}

