/* Secrets: 128 random bits as hex, and their constant-time comparison. */

#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "logs/log.h"
#include "logs/token.h"

void
token_new(char out[TOKEN_LEN + 1])
{
	unsigned char	raw[TOKEN_LEN / 2];
	size_t		got = 0, i;
	ssize_t		n;

	while (got < sizeof raw) {
		n = getrandom(raw + got, sizeof raw - got, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			fatal("getrandom: %s", strerror(errno));
		got += n;
	}
	for (i = 0; i < sizeof raw; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

int
token_eq(const char *given, const char *token)
{
	unsigned char	diff = 0;
	size_t		i, n;

	/* The length is no secret: every token has TOKEN_LEN digits. */
	if (given == NULL || token == NULL ||
	    (n = strlen(token)) != strlen(given))
		return (0);
	for (i = 0; i < n; i++)
		diff |= (unsigned char)given[i] ^ (unsigned char)token[i];
	return (diff == 0);
}
