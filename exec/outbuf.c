/*
 * Capped output: the first cap/2 bytes in a head that grows with the data,
 * the last cap - cap/2 bytes in a ring allocated once the head is full.
 * Appending costs O(bytes appended) however small the writes are.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/outbuf.h"
#include "logs/xmalloc.h"

/* First head allocation; most commands print less than this. */
#define OUTBUF_HEAD_MIN	256

#define OUTBUF_MARKER	"\n[... %" PRIu64 " bytes omitted ...]\n"

/* Bytes the head may hold. */
static size_t
outbuf_head_cap(const struct outbuf *ob)
{
	return (ob->cap / 2);
}

/* Bytes the ring may hold. */
static size_t
outbuf_tail_cap(const struct outbuf *ob)
{
	return (ob->cap - ob->cap / 2);
}

/*
 * Allocated size of a head holding need bytes: doubles from
 * OUTBUF_HEAD_MIN up to the head's cap. The size is a function of the
 * length alone, so the struct needs no field to remember it.
 */
static size_t
outbuf_head_size(const struct outbuf *ob, size_t need)
{
	size_t	size = OUTBUF_HEAD_MIN, hcap = outbuf_head_cap(ob);

	while (size < need && size < hcap)
		size *= 2;
	return (size < hcap ? size : hcap);
}

/* Sets cap; nothing is allocated until bytes arrive. */
void
outbuf_init(struct outbuf *ob, size_t cap)
{
	memset(ob, 0, sizeof *ob);
	ob->cap = cap;
}

/* Makes room in the head for need bytes in all. */
static void
outbuf_head_grow(struct outbuf *ob, size_t need)
{
	size_t	old, new;

	old = ob->head == NULL ? 0 : outbuf_head_size(ob, ob->head_len);
	new = outbuf_head_size(ob, need);
	if (new != old)
		ob->head = xrealloc(ob->head, new);
}

/* Writes n bytes into the ring, overwriting the oldest. */
static void
outbuf_tail_append(struct outbuf *ob, const char *p, size_t n)
{
	size_t	tcap = outbuf_tail_cap(ob), chunk;

	if (tcap == 0)
		return;
	if (ob->tail == NULL)
		ob->tail = xmalloc(tcap);
	if (n >= tcap) {	/* only the last tcap bytes survive */
		memcpy(ob->tail, p + n - tcap, tcap);
		ob->tail_pos = 0;
		ob->tail_len = tcap;
		return;
	}
	chunk = tcap - ob->tail_pos;
	if (chunk > n)
		chunk = n;
	memcpy(ob->tail + ob->tail_pos, p, chunk);
	memcpy(ob->tail, p + chunk, n - chunk);
	ob->tail_pos = (ob->tail_pos + n) % tcap;
	ob->tail_len = ob->tail_len + n < tcap ? ob->tail_len + n : tcap;
}

/* Keeps what fits of n more bytes: head first, then the ring. */
void
outbuf_append(struct outbuf *ob, const void *buf, size_t n)
{
	const char	*p = buf;
	size_t		 take, hcap = outbuf_head_cap(ob);

	if (n == 0)
		return;
	ob->total += n;
	if (ob->head_len < hcap) {
		take = hcap - ob->head_len < n ? hcap - ob->head_len : n;
		outbuf_head_grow(ob, ob->head_len + take);
		memcpy(ob->head + ob->head_len, p, take);
		ob->head_len += take;
		p += take;
		n -= take;
	}
	if (n > 0)
		outbuf_tail_append(ob, p, n);
}

/* 1 if bytes were dropped. */
int
outbuf_truncated(const struct outbuf *ob)
{
	return (ob->total > ob->head_len + ob->tail_len);
}

/* Copies the ring, oldest byte first, to dst. */
static void
outbuf_tail_copy(const struct outbuf *ob, char *dst)
{
	size_t	tcap = outbuf_tail_cap(ob), start, first;

	if (ob->tail_len == 0)
		return;
	start = (ob->tail_pos + tcap - ob->tail_len) % tcap;
	first = tcap - start < ob->tail_len ? tcap - start : ob->tail_len;
	memcpy(dst, ob->tail + start, first);
	memcpy(dst + first, ob->tail, ob->tail_len - first);
}

/* Head, the omitted-bytes marker if any, then the tail. */
char *
outbuf_render(const struct outbuf *ob, size_t *len)
{
	char		*out, marker[64];
	size_t		 mlen = 0;
	uint64_t	 omitted;

	marker[0] = '\0';
	if (outbuf_truncated(ob)) {
		omitted = ob->total - ob->head_len - ob->tail_len;
		mlen = snprintf(marker, sizeof marker, OUTBUF_MARKER, omitted);
	}
	*len = ob->head_len + mlen + ob->tail_len;
	out = xmalloc(*len + 1);
	if (ob->head_len != 0)
		memcpy(out, ob->head, ob->head_len);
	memcpy(out + ob->head_len, marker, mlen);
	outbuf_tail_copy(ob, out + ob->head_len + mlen);
	out[*len] = '\0';
	return (out);
}

/* Frees both buffers and zeroes the struct; cap is 0 afterwards. */
void
outbuf_release(struct outbuf *ob)
{
	free(ob->head);
	free(ob->tail);
	memset(ob, 0, sizeof *ob);
}
