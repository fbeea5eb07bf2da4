/* Placeholder until the classifier lands: everything is unknown. */
#include <stdlib.h>
#include <string.h>

#include "exec/classify.h"
#include "logs/xmalloc.h"

static const char *cls_risk_names[] = { "read_only", "write", "unknown",
    "destructive", "blocked" };
static const char *cls_tier_names[] = { "read_only", "read_write", "admin" };
static const char *cls_action_names[] = { "run", "hold", "refuse" };
static const char *cls_sandbox_names[] = { "hold", "refuse", "off" };

void
cls_classify(const struct cls_policy *p, const char *cmd, size_t len,
    const char *cwd, struct cls_verdict *out)
{
	(void)p; (void)cmd; (void)len; (void)cwd;
	memset(out, 0, sizeof *out);
	out->risk = CLS_UNKNOWN;
	out->rule = xstrdup("stub");
	out->reason = xstrdup("not classified yet");
}

void
cls_verdict_release(struct cls_verdict *v)
{
	if (v == NULL)
		return;
	free(v->rule);
	free(v->reason);
	free(v->outside);
	free(v->outside_reason);
	memset(v, 0, sizeof *v);
}

enum cls_action
cls_decide(const struct cls_verdict *v, enum cls_tier t, enum cls_sandbox sb,
    const char **rule, const char **reason)
{
	*rule = v->rule;
	*reason = v->reason;
	if (v->risk == CLS_BLOCKED)
		return (CLS_REFUSE);
	if (v->outside != NULL && sb != CLS_SANDBOX_OFF) {
		*rule = "sandbox";
		*reason = v->outside_reason;
		return (sb == CLS_SANDBOX_REFUSE ? CLS_REFUSE : CLS_HOLD);
	}
	if (t == CLS_TIER_ADMIN || (int)v->risk <= (int)t)
		return (CLS_RUN);
	return (CLS_HOLD);
}

int
cls_rules_check(const struct cls_policy *p, char **cause)
{
	(void)p;
	*cause = NULL;
	return (0);
}

static int
cls_lookup(const char *s, const char **names, int n)
{
	int	i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (i);
	return (-1);
}

const char *cls_risk_name(enum cls_risk r) { return (cls_risk_names[r]); }
int
cls_risk_parse(const char *s, enum cls_risk *r)
{
	int i = cls_lookup(s, cls_risk_names, 5);
	if (i < 0) return (-1);
	*r = i; return (0);
}
const char *cls_tier_name(enum cls_tier t) { return (cls_tier_names[t]); }
int
cls_tier_parse(const char *s, enum cls_tier *t)
{
	int i = cls_lookup(s, cls_tier_names, 3);
	if (i < 0) return (-1);
	*t = i; return (0);
}
const char *cls_action_name(enum cls_action a) { return (cls_action_names[a]); }
const char *cls_sandbox_name(enum cls_sandbox s) { return (cls_sandbox_names[s]); }
int
cls_sandbox_parse(const char *s, enum cls_sandbox *sb)
{
	int i = cls_lookup(s, cls_sandbox_names, 3);
	if (i < 0) return (-1);
	*sb = i; return (0);
}
