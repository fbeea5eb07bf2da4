#ifndef EXECQ_OUTBUF_H
#define EXECQ_OUTBUF_H

/*
 * Captured output capped to a size, keeping the head AND the tail: the
 * error is usually at the end. Memory grows with the data, never past cap.
 */

#include <stddef.h>
#include <stdint.h>

struct outbuf {
	size_t		 cap;		/* head + tail bytes kept at most */
	char		*head;		/* first cap/2 bytes */
	size_t		 head_len;
	char		*tail;		/* ring of the last cap - cap/2 bytes */
	size_t		 tail_len;	/* bytes held in the ring */
	size_t		 tail_pos;	/* next write position in the ring */
	uint64_t	 total;		/* bytes appended in all */
};

void	 outbuf_init(struct outbuf *, size_t cap);
void	 outbuf_append(struct outbuf *, const void *, size_t);
/* 1 if bytes were dropped. */
int	 outbuf_truncated(const struct outbuf *);
/*
 * Head, then "\n[... N bytes omitted ...]\n" if bytes were dropped, then
 * the tail, as one allocated buffer (NUL-terminated; *len excludes it).
 */
char	*outbuf_render(const struct outbuf *, size_t *len);
void	 outbuf_release(struct outbuf *);

#endif
