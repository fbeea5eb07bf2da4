#ifndef EXECQ_POLICYCONF_H
#define EXECQ_POLICYCONF_H

/*
 * The command policy's settings that only the config file can hold:
 * "rules" (ordered, with examples), "queue_tiers", "allow_paths", and
 * for the confinement "read_paths" and "queue_network" (docs/CONFIG.md). They become the struct cls_policy that the worker and
 * `execq classify` share.
 */

#include "exec/classify.h"

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

#endif
