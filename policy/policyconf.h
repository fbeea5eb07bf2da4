#ifndef EXECQ_POLICYCONF_H
#define EXECQ_POLICYCONF_H

/*
 * The command policy's settings that only the config file can hold:
 * "rules" (ordered, with examples), "queue_tiers", "allow_paths", and
 * for the confinement "read_paths" and "queue_network" (docs/CONFIG.md). They become the struct cls_policy that the worker and
 * `execq classify` share.
 */

#include "policy/classify.h"

struct policyconf;
struct json_t;

struct policyconf	*policyconf_create(void);
void			 policyconf_free(struct policyconf *);	/* NULL ok */
/* 1 if key is one of ours. */
int			 policyconf_owns(const char *key);
/*
 * Reads one of our keys from the file named where (for messages).
 * 0, or -1 with an allocated *cause.
 */
int			 policyconf_key(struct policyconf *, const char *where,
			    const char *key, const struct json_t *, char **cause);
/*
 * After every layer: realpaths allow_paths, builds the policy for
 * workspace and the shell that runs commands (its dialect), and checks
 * every rule's examples against it (a rule whose examples fail stops the
 * worker). 0, or -1 with an allocated *cause.
 */
int			 policyconf_finish(struct policyconf *,
			    const char *workspace, const char *shell,
			    char **cause);
/* The tier queue_tiers gives queue, or NULL. */
const char		*policyconf_queue_tier(const struct policyconf *,
			    const char *queue);
const struct cls_policy	*policyconf_policy(const struct policyconf *);
/* "read_paths" (NULL-terminated), or NULL when the file has none. */
const char *const	*policyconf_read_paths(const struct policyconf *);
/* queue_network's value for queue: 1, 0, or -1 when it has none. */
int			 policyconf_queue_network(const struct policyconf *,
			    const char *queue);
size_t			 policyconf_nrules(const struct policyconf *);

/* The worker's defaults for the settings the policy depends on. */
#define POLICYCONF_DEFAULT_WORKSPACE	"workspace"
#define POLICYCONF_DEFAULT_SHELL	"/bin/sh"
#define POLICYCONF_DEFAULT_TIER		"auto"
#define POLICYCONF_DEFAULT_SANDBOX	"hold"
#define POLICYCONF_DEFAULT_QUEUE	"exec"

/*
 * What deciding on a command needs of a worker's settings, for a program
 * that is not the worker (`execq classify`). Strings are allocated.
 */
struct policy_settings {
	char			*workspace;	/* realpath'd */
	char			*shell, *tier, *sandbox, *queue;
	enum cls_tier		 tier_level;	/* auto: read_only */
	enum cls_sandbox	 sandbox_mode;
	struct policyconf	*pc;		/* built, rules checked */
};
/*
 * Loads them as the worker would: the defaults above, then the config
 * file (file, else $EXECQ_CONFIG, else none; its queue_tiers beats its
 * tier), then EXECQ_WORKSPACE, EXECQ_SHELL, EXECQ_TIER, EXECQ_SANDBOX and
 * EXECQ_QUEUE from envp, then the non-NULL strings of over (workspace,
 * tier, sandbox, queue). Makes nothing on disk: the workspace must
 * exist. 0, or -1 with an allocated *cause (release ps either way).
 */
int			 policyconf_settings_load(struct policy_settings *,
			    const char *file, char *const *envp,
			    const struct policy_settings *over, char **cause);
void			 policyconf_settings_release(struct policy_settings *);

#endif
