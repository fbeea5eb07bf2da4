/*
 * libFuzzer target for the shell parser (make fuzz): any bytes must parse
 * or be refused without a crash, a hang or a leak.
 */
#include <stddef.h>
#include <stdint.h>

#include "policy/shparse.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct sh_parse	p;

	sh_parse((const char *)data, len, len > 0 ? data[0] & 1 : 0, &p);
	sh_parse_release(&p);
	return (0);
}
