/*
 * libFuzzer target for the classifier (make fuzz): any bytes, with a
 * workspace (so the path sandbox runs) and a rule, must classify without
 * a crash, a hang or a leak, and an uncertain parse is never read-only.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "policy/classify.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char		*fuzz_examples[] = { "make test", NULL };
static char		*fuzz_none[] = { NULL };
static struct cls_rule	 fuzz_rule = { "mk", "make test*", CLS_READ_ONLY,
			    "tests", fuzz_examples, fuzz_none };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct cls_policy	p = { &fuzz_rule, 1, "/tmp", NULL, 0 };
	struct cls_verdict	v;

	cls_classify(&p, (const char *)data, len, "/tmp", &v);
	if (!v.complete && v.risk == CLS_READ_ONLY)
		abort();
	cls_verdict_release(&v);
	return (0);
}
