#ifndef EXECQ_CONFIG_H
#define EXECQ_CONFIG_H

/*
 * The worker's settings. Precedence, highest first: command-line flags,
 * environment (EXECQ_*, ENABLE_EXECUTE), the JSON config file (--config
 * or EXECQ_CONFIG), built-in defaults. docs/CONFIG.md lists every key.
 */

#include <stddef.h>
#include <stdio.h>

#include <sys/types.h>

#include "policy/classify.h"
#include "exec/confine.h"

struct policyconf;

struct config {
	char		*redis_url;		/* redis://127.0.0.1:6379/0 */
	char		*redis_user;		/* "": the URL's */
	char		*redis_password_file;	/* "": none */
	char		*redis_password;	/* "": the URL's; the file's
						   once loaded */
	int		 redis_url_secret_argv;	/* --redis held a password */
	char		*redis_tls_ca;		/* "": the system's CAs */
	char		*redis_tls_cert;	/* "": no client certificate */
	char		*redis_tls_key;		/* "": in redis_tls_cert */
	char		*redis_tls_server_name;	/* "": the URL's host */
	char		*redis_wait_replicas;	/* "auto" or 0-16 */
	char		*queue;			/* "exec": streams q:exec:<lane> */
	char		*reply_default;		/* "replies" */
	char		*agents;		/* read their own lanes too */
	char		*network_domains;	/* through the proxy */
	char		*network_private_hosts;	/* ... even if private */
	char		*retry;			/* the queue's default args.retry
						   (JSON); "": none */
	char		*queue_limits;		/* {"<queue>": {"max_running",
						   "max_per_s"}} (JSON); "" */
	char		*workspace;		/* "workspace": realpath'd at load */
	char		*log_dir;		/* ".tmp/exec" */
	char		*state_dir;		/* ".tmp/state": audit, spool */
	char		*shell;			/* "/bin/sh" */
	char		*consumer;		/* "<hostname>-<pid>" */
	char		*cgroup;		/* "auto", "off" or a cgroup2 dir */
	int		 enable_execute;	/* 0 */
	unsigned	 default_timeout_ms;	/* 30000 */
	unsigned	 max_timeout_ms;	/* 3600000 */
	unsigned	 kill_grace_ms;		/* 5000 */
	unsigned	 shutdown_flush_ms;	/* 5000: answers, after grace */
	unsigned	 drain_ms;		/* 2000: output drain after exit */
	size_t		 output_cap;		/* 1 MiB per stream in answers */
	size_t		 log_max_bytes;		/* 1 GiB per log file */
	unsigned	 max_procs;		/* 16 */
	size_t		 max_item_bytes;	/* 1 MiB */
	unsigned	 answer_ttl_s;		/* 86400 */
	unsigned	 claim_idle_ms;		/* 30000 */
	unsigned	 redis_timeout_ms;	/* 10000 */
	unsigned	 session_ttl_s;		/* 300 */
	unsigned	 session_keep;		/* 100 */
	unsigned	 max_sessions;		/* 0: max_procs / 2, at least 1 */
	unsigned	 session_idle_timeout_ms; /* 0: none */
	int		 hold_sessions;		/* run under a holder
						   (worker/holder.h) */
	unsigned	 log_max_age_hours;	/* 24; 0: never */
	int		 log_fsync;		/* 0: fsync foreground logs too */
	char		*tier;			/* "read_only": the queue's tier
						   (queue_tiers applied) */
	char		*sandbox;		/* "hold", "refuse" or "off" */
	int		 tier_auto;		/* tier "auto": confined when
						   every layer is on */
	char		*confine;		/* "auto", "required", "off" */
	enum confine_mode confine_mode;		/* confine, parsed */
	char		*tmp_dir;		/* ".tmp/cmd", made absolute */
	int		 network;		/* 0 (queue_network applied) */
	unsigned	 max_pids;		/* 512 */
	size_t		 max_memory;		/* 2 GiB */
	char		*run_as;		/* "" */
	char		*operator_token;	/* "": no operator */
	char		*http;			/* "": no HTTP side door */
	char		*log_file;		/* "": stderr */
	int		 run_as_set;
	uid_t		 run_uid;
	gid_t		 run_gid;
	unsigned	 approval_timeout_ms;	/* 600000 */
	struct policyconf *policy;		/* rules, allow_paths */
	enum cls_tier	 tier_level;		/* tier, parsed */
	enum cls_sandbox sandbox_mode;		/* sandbox, parsed */
	int		 verbose;		/* -v */
	int		 check_confinement;	/* --check-confinement */
	char		*config_file;		/* NULL if none */
};

/*
 * Fills c from argv, envp, the config file and the defaults. Returns 0; 1
 * when --help or --version was printed (exit 0); -1 with an allocated
 * *cause on a bad flag, value or file. Does not touch the file system
 * except to read the config file, realpath the workspace and make the
 * default one when it is missing; with --check-confinement not even
 * that (a missing default workspace is left missing, made absolute).
 */
int	 config_load(struct config *c, int argc, char **argv, char **envp,
	    char **cause);
void	 config_release(struct config *);
/* The --help text. */
void	 config_usage(FILE *);

#endif
