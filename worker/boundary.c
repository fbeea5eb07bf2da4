/* Start-up: the dirs, the boundary and tier auto; --check-confinement. */

#include <sys/prctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/cgroup.h"
#include "exec/cmdenv.h"
#include "exec/confine.h"
#include "logs/cleanup.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "policy/classify.h"
#include "policy/policyconf.h"
#include "queue/rurl.h"
#include "worker/config.h"
#include "worker/worker.h"
#include "worker/worker_int.h"

/*
 * Old finished items' files go at start-up, by the rule `execq cleanup`
 * uses (logs/cleanup.h): running commands' logs stay, 0 is off.
 */
void
worker_cleanup_logs(const struct config *cfg)
{
	struct cleanup_stats	st;

	memset(&st, 0, sizeof st);
	if (cleanup_logs(cfg->log_dir, cfg->log_max_age_hours, 0, NULL, NULL,
	    &st) == -1)
		log_warn("log cleanup %s: %s", cfg->log_dir, strerror(errno));
	else if (st.removed > 0)
		log_info("log cleanup: removed %u files (%llu bytes) older than "
		    "%u h; kept %u of running commands", st.removed, st.bytes,
		    cfg->log_max_age_hours, st.kept_running);
}

/* What a command may read besides the workspace and its tmp. */
static const char *const worker_read_paths[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc", "/opt", "/proc", "/sys", "/run",
	/* Devices one by one: uid 0 may read a raw disk it owns. */
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
	"/dev/urandom", "/dev/tty", NULL
};

/*
 * Files a command never sees, whatever read_paths say: uid 0 without
 * capabilities still owns them (run_as protects them by permissions).
 */
static const char *const worker_secrets[] = {
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd",
	"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
	"/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
	"/etc/ssl/private", NULL
};

/* Prepares the boundary: confinement, cgroup v2 leaves, v1 limits. */
int
worker_boundary(const struct config *cfg, const struct rurl *url, int probe,
    long name_pid, unsigned leaves, struct worker_boundary *b)
{
	struct confine_config	 cc;
	struct confine_layer	*l;
	const char		*hide[sizeof worker_secrets /
				    sizeof worker_secrets[0] + 8];
	const char		*own[3];
	char			*cause, *cfgpath = NULL, *logpath, *statepath;
	char			*ownpath[3] = { NULL, NULL, NULL };
	size_t			 n = 0, i;

	memset(b, 0, sizeof *b);
	memset(&cc, 0, sizeof cc);
	cc.mode = cfg->confine_mode;
	cc.workspace = cfg->workspace;
	cc.tmp_dir = cfg->tmp_dir;
	cc.read_paths = policyconf_read_paths(cfg->policy) != NULL ?
	    policyconf_read_paths(cfg->policy) : worker_read_paths;
	/* As the kernel sees it: masks compare it with the workspace. */
	logpath = realpath(cfg->log_dir, NULL);
	hide[n++] = logpath != NULL ? logpath : cfg->log_dir;
	statepath = realpath(cfg->state_dir, NULL);
	hide[n++] = statepath != NULL ? statepath : cfg->state_dir;
	if (cfg->confine_mode != CONFINE_OFF &&
	    cmdenv_inside(hide[0], cfg->workspace)) {
		log_warn("the workspace %s is inside the log dir %s: commands "
		    "could read and forge the logs; not starting",
		    cfg->workspace, hide[0]);
		free(logpath);
		free(statepath);
		return (-1);
	}
	if (cfg->config_file != NULL &&
	    (cfgpath = realpath(cfg->config_file, NULL)) != NULL)
		hide[n++] = cfgpath;
	if (url->path != NULL)
		hide[n++] = url->path;
	/*
	 * The worker's own Redis secrets: masked like the socket, so that
	 * no grant, not even an approved path, opens them to a command.
	 */
	own[0] = cfg->redis_password_file;
	own[1] = cfg->redis_tls_key;
	own[2] = cfg->redis_tls_cert;
	for (i = 0; i < 3; i++)
		if (own[i] != NULL && *own[i] != '\0' &&
		    (ownpath[i] = realpath(own[i], NULL)) != NULL)
			hide[n++] = ownpath[i];
	for (i = 0; worker_secrets[i] != NULL; i++)
		hide[n++] = worker_secrets[i];
	hide[n] = NULL;
	cc.hide = hide;
	cc.run_as = cfg->run_as_set;
	cc.uid = cfg->run_uid;
	cc.gid = cfg->run_gid;
	b->confine = confine_create(&cc, &cause);
	for (i = 0; i < 3; i++)
		free(ownpath[i]);
	free(cfgpath);
	free(logpath);
	free(statepath);
	if (b->confine == NULL && cause != NULL) {
		log_warn("confinement: %s", cause);
		free(cause);
		return (-1);
	}
	if (b->confine != NULL) {
		memcpy(b->layers, confine_layers(b->confine),
		    sizeof (struct confine_layer) * CONFINE_NLAYERS);
		b->n = CONFINE_NLAYERS;
	}
	/* A probe sweeps no dead worker's cgroups: it changes nothing. */
	b->pool = probe ? cgroup_pool_probe(cfg->cgroup, cfg->max_procs,
	    &cause) : cgroup_pool_create(cfg->cgroup, leaves > cfg->max_procs ?
	    leaves : cfg->max_procs, name_pid, &cause);
	l = &b->layers[b->n++];
	l->name = "cgroup v2";
	if (b->pool != NULL) {
		l->ok = 1;
		snprintf(l->detail, sizeof l->detail, "process trees in %s",
		    cgroup_pool_path(b->pool));
	} else
		snprintf(l->detail, sizeof l->detail, "unavailable: %s",
		    cause != NULL ? cause : "cgroup off");
	free(cause);
	cause = NULL;
	if (b->confine != NULL) {
		l = &b->layers[b->n++];
		l->name = "cgroup v1 limits";
		if (b->pool != NULL && cgroup_pool_limit(b->pool, cfg->max_pids,
		    cfg->max_memory, &cause) == 0) {
			l->ok = 1;
			snprintf(l->detail, sizeof l->detail, "pids.max %u, "
			    "memory %zu MiB per command", cfg->max_pids,
			    cfg->max_memory >> 20);
		} else
			snprintf(l->detail, sizeof l->detail, "unavailable: %s",
			    cause != NULL ? cause : "no cgroup v2 leaves");
		free(cause);
	}
	b->full = b->confine != NULL;
	for (i = 0; i < (size_t)b->n; i++)
		b->full = b->full && b->layers[i].ok;
	return (0);
}

/*
 * A directory for the probe to use as path: path if it is there, else a
 * temporary one (*made), for the probe makes nothing of the worker's.
 * Allocated; NULL (printed to f) when no temporary one can be made.
 */
static char *
worker_probe_dir(const char *path, int *made, FILE *f)
{
	struct stat	 sb;
	char		 tmpl[] = "/tmp/execq-probe-XXXXXX", *real;

	*made = 0;
	if (stat(path, &sb) == 0 || errno != ENOENT)
		return (xstrdup(path));
	if (mkdtemp(tmpl) == NULL) {
		fprintf(f, "%s does not exist, and no temporary directory can "
		    "stand in for it: %s\n", path, strerror(errno));
		return (NULL);
	}
	*made = 1;
	if ((real = realpath(tmpl, NULL)) == NULL)
		real = xstrdup(tmpl);
	return (real);
}

/* Removes what worker_probe_dir made; frees dir. */
static void
worker_probe_dir_free(char *dir, int made)
{
	if (dir != NULL && made && rmdir(dir) == -1)
		log_warn("--check-confinement: cannot remove %s: %s", dir,
		    strerror(errno));
	free(dir);
}

/*
 * A probe: it changes nothing on disk or in cgroups. What is missing (the
 * workspace, the commands' tmp dir) is stood in for by a temporary
 * directory removed after; its own cgroups go when it ends, and those of
 * dead workers are not swept.
 */
int
worker_check_confinement(const struct config *cfg, FILE *f)
{
	struct worker_boundary	 b;
	struct config		 probe;
	struct rurl		 url;
	char			*cause, *ws, *tmp = NULL;
	int			 i, rc = 1, ws_made = 0, tmp_made = 0;

	memset(&url, 0, sizeof url);
	probe = *cfg;		/* shallow: only the two dirs differ */
	if ((ws = worker_probe_dir(cfg->workspace, &ws_made, f)) == NULL ||
	    (tmp = worker_probe_dir(cfg->tmp_dir, &tmp_made, f)) == NULL)
		goto out;
	probe.workspace = ws;
	probe.tmp_dir = tmp;
	if (rurl_parse(cfg->redis_url, &url, &cause) == -1)
		free(cause);
	if (worker_boundary(&probe, &url, 1, 0, 0, &b) == -1)
		goto out;
	if (b.confine == NULL)
		fprintf(f, "%-18s %-4s %s\n", "confinement", "off",
		    "confine is off: commands run unconfined");
	for (i = 0; i < b.n; i++)
		fprintf(f, "%-18s %-4s %s\n", b.layers[i].name,
		    b.layers[i].ok ? "on" : "OFF", b.layers[i].detail);
	fprintf(f, "%s\n", b.full ? "every layer is on" :
	    "some layers are off");
	confine_free(b.confine);
	cgroup_pool_free(b.pool);
	rc = b.full ? 0 : 1;
out:
	rurl_release(&url);
	worker_probe_dir_free(ws, ws_made);
	worker_probe_dir_free(tmp, tmp_made);
	return (rc);
}

/*
 * The policy the worker classifies with: the config's, and when the
 * boundary is whole, the read paths count as inside the path sandbox too
 * (Landlock lets a command read them and nothing more).
 */
static void
worker_policy(struct worker *w, const struct worker_boundary *b)
{
	const struct cls_policy	*p = policyconf_policy(w->cfg->policy);
	const char *const	*rp;
	size_t			 n = 0, i;
	char			*real;

	w->policy = *p;
	if (!b->full)
		return;
	rp = policyconf_read_paths(w->cfg->policy) != NULL ?
	    policyconf_read_paths(w->cfg->policy) : worker_read_paths;
	for (i = 0; rp[i] != NULL; i++)
		;
	w->allow = xcalloc(p->nallow + i + 2, sizeof *w->allow);
	for (i = 0; i < p->nallow; i++)
		w->allow[n++] = xstrdup(p->allow_paths[i]);
	for (i = 0; rp[i] != NULL; i++)
		if ((real = realpath(rp[i], NULL)) != NULL)
			w->allow[n++] = real;
	w->allow[n++] = xstrdup(w->cfg->tmp_dir);
	w->policy.allow_paths = (const char *const *)w->allow;
	w->policy.nallow = n;
}

/*
 * The self-check at start-up: one line per layer; then the tier "auto"
 * becomes confined (every layer on) or read_only, and confine required
 * refuses to start with a layer missing. The only place tier auto is
 * resolved.
 */
int
worker_confine_decide(struct worker *w, struct worker_boundary *b)
{
	const struct config	*cfg = w->cfg;
	int			 i;

	if (b->pool != NULL)
		log_info("process trees are contained in cgroups under %s",
		    cgroup_pool_path(b->pool));
	for (i = 0; i < b->n; i++) {
		log_info("confinement: %s: %s (%s)", b->layers[i].name,
		    b->layers[i].ok ? "on" : "OFF", b->layers[i].detail);
		if (w->nlayers < STATUS_MAX_LAYERS) {
			w->layers[w->nlayers].name = b->layers[i].name;
			w->layers[w->nlayers++].ok = b->layers[i].ok;
		}
	}
	w->confined = b->full;
	if (cfg->run_as_set && b->confine == NULL) {
		log_warn("run_as needs the confinement (confine auto or "
		    "required): not starting");
		return (-1);
	}
	if (!b->full && cfg->confine_mode == CONFINE_REQUIRED) {
		log_warn("confine is required and a layer is off: not "
		    "starting (execq-worker --check-confinement shows them)");
		return (-1);
	}
	worker_policy(w, b);
	w->tier = cfg->tier_level;
	if (cfg->tier_auto)
		w->tier = b->full ? CLS_TIER_CONFINED : CLS_TIER_READ_ONLY;
	w->tier_name = cls_tier_name(w->tier);
	if (!b->full)
		log_warn("COMMANDS ARE NOT FULLY CONFINED%s: only the command "
		    "policy (tier %s) stands between them and this machine",
		    cfg->confine_mode == CONFINE_OFF ? " (confine off)" : "",
		    w->tier_name);
	if (w->tier == CLS_TIER_CONFINED && !b->full)
		log_warn("tier confined without every confinement layer: "
		    "unknown commands run with only the layers that are on");
	if (b->confine != NULL && geteuid() == 0)
		log_info("the worker runs as root: it needs that for the "
		    "namespaces and cgroups; commands %s",
		    cfg->run_as_set ? "run as the run_as user" :
		    "keep uid 0 with no capability");
	if (b->confine != NULL)
		prctl(PR_SET_DUMPABLE, 0);	/* its /proc is root's only */
	return (0);
}

/*
 * The log dir and the state dir, made and checked: no command may reach
 * the logs through the workspace (links planted there would turn output
 * or log reads to other files), and no item id may name a file of the
 * worker's own (an item "audit" must not write the audit log).
 */
int
worker_dirs(const struct config *cfg)
{
	char	*logs = NULL, *state = NULL;
	int	 rc = -1;

	if (execlog_mkdir(cfg->log_dir) == -1) {
		log_warn("log dir %s: %s", cfg->log_dir, strerror(errno));
		return (-1);
	}
	if (execlog_mkdir(cfg->state_dir) == -1 ||
	    chmod(cfg->state_dir, 0700) == -1) {
		log_warn("state dir %s: %s", cfg->state_dir, strerror(errno));
		return (-1);
	}
	if ((logs = realpath(cfg->log_dir, NULL)) == NULL ||
	    (state = realpath(cfg->state_dir, NULL)) == NULL)
		log_warn("log dir %s, state dir %s: %s", cfg->log_dir,
		    cfg->state_dir, strerror(errno));
	else if (cmdenv_inside(cfg->workspace, logs))
		log_warn("the log dir %s is inside the workspace %s: commands "
		    "could plant links there or read other commands' logs; "
		    "not starting (move one of them)", logs, cfg->workspace);
	else if (cmdenv_inside(cfg->workspace, state))
		log_warn("the state dir %s is inside the workspace %s: "
		    "commands could read or forge the audit log and the "
		    "spool; not starting", state, cfg->workspace);
	else if (cmdenv_inside(logs, state))
		log_warn("the state dir %s is inside the log dir %s: an item "
		    "id could name its files; not starting", state, logs);
	else
		rc = 0;
	free(logs);
	free(state);
	return (rc);
}
