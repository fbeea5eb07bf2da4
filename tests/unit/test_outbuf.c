/*
 * outbuf: every render is compared with a reference built here from the
 * whole input: the first cap/2 bytes, the marker, the last cap - cap/2.
 */

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "exec/outbuf.h"
#include "logs/xmalloc.h"

/* n bytes of printable, position-dependent data (never a repeating ring). */
static char *
make_input(size_t n)
{
	char	*p;
	size_t	 i;
	uint32_t x = 2463534242u;

	p = xmalloc(n == 0 ? 1 : n);
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = 'a' + x % 26;
	}
	return (p);
}

/* What render must return for in[0..n) under cap, built the slow way. */
static char *
make_expected(const char *in, size_t n, size_t cap, size_t *len)
{
	size_t	 head = cap / 2, tail = cap - cap / 2;
	char	*out, *marker;
	int	 mlen;

	if (n <= cap) {
		*len = n;
		out = xmalloc(n + 1);
		memcpy(out, in, n);
		out[n] = '\0';
		return (out);
	}
	mlen = xasprintf(&marker, "\n[... %zu bytes omitted ...]\n",
	    n - head - tail);
	*len = head + mlen + tail;
	out = xmalloc(*len + 1);
	memcpy(out, in, head);
	memcpy(out + head, marker, mlen);
	memcpy(out + head + mlen, in + n - tail, tail);
	out[*len] = '\0';
	free(marker);
	return (out);
}

/* Asserts ob renders exactly like the reference for in[0..n). */
static void
assert_renders(const struct outbuf *ob, const char *in, size_t n, size_t cap)
{
	char	*got, *want;
	size_t	 got_len, want_len;

	got = outbuf_render(ob, &got_len);
	want = make_expected(in, n, cap, &want_len);
	assert_int_equal(got_len, want_len);
	assert_memory_equal(got, want, want_len);
	assert_int_equal(got[got_len], '\0');
	assert_int_equal(ob->total, n);
	assert_int_equal(outbuf_truncated(ob), n > cap);
	free(got);
	free(want);
}

/* Appends in[0..n) in chunks of 1 to maxchunk bytes, varying. */
static void
append_chunked(struct outbuf *ob, const char *in, size_t n, size_t maxchunk)
{
	size_t	off = 0, k, i = 0;

	while (off < n) {
		k = 1 + (i++ * 7919) % maxchunk;
		if (k > n - off)
			k = n - off;
		outbuf_append(ob, in + off, k);
		off += k;
	}
}

/* Output well under cap comes back byte for byte. */
static void
test_outbuf_small_input_exact(void **state)
{
	struct outbuf	 ob;
	char		*got;
	size_t		 len;

	(void)state;
	outbuf_init(&ob, 1024);
	outbuf_append(&ob, "hello ", 6);
	outbuf_append(&ob, "", 0);
	outbuf_append(&ob, "world\n", 6);
	got = outbuf_render(&ob, &len);
	assert_int_equal(len, 12);
	assert_string_equal(got, "hello world\n");
	assert_false(outbuf_truncated(&ob));
	free(got);
	outbuf_release(&ob);
}

/* Exactly cap bytes: head and ring both full, nothing dropped. */
static void
test_outbuf_exactly_cap(void **state)
{
	struct outbuf	 ob;
	char		*in = make_input(100);

	(void)state;
	outbuf_init(&ob, 100);
	append_chunked(&ob, in, 100, 9);
	assert_renders(&ob, in, 100, 100);
	outbuf_release(&ob);
	outbuf_init(&ob, 100);
	outbuf_append(&ob, in, 100);
	assert_renders(&ob, in, 100, 100);
	outbuf_release(&ob);
	free(in);
}

/* One byte over cap: a marker for exactly one byte. */
static void
test_outbuf_cap_plus_one(void **state)
{
	struct outbuf	 ob;
	char		*in = make_input(101), *got;
	size_t		 len;

	(void)state;
	outbuf_init(&ob, 100);
	append_chunked(&ob, in, 101, 3);
	assert_renders(&ob, in, 101, 100);
	got = outbuf_render(&ob, &len);
	assert_non_null(strstr(got, "\n[... 1 bytes omitted ...]\n"));
	free(got);
	outbuf_release(&ob);
	free(in);
}

/* Many small appends past cap: head, omitted count and tail all exact. */
static void
test_outbuf_huge_many_small_appends(void **state)
{
	struct outbuf	 ob;
	size_t		 n = 3 * 1000 * 1000 + 17, caps[] = { 1000, 4096, 777 };
	size_t		 i;
	char		*in = make_input(n);

	(void)state;
	for (i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		outbuf_init(&ob, caps[i]);
		append_chunked(&ob, in, n, 97);
		assert_int_equal(ob.head_len, caps[i] / 2);
		assert_int_equal(ob.tail_len, caps[i] - caps[i] / 2);
		assert_renders(&ob, in, n, caps[i]);
		outbuf_release(&ob);
	}
	free(in);
}

/* A million one-byte appends into a large ring stay linear. */
static void
test_outbuf_one_byte_appends(void **state)
{
	struct outbuf	 ob;
	size_t		 n = 1000 * 1000, i;
	char		*in = make_input(n);

	(void)state;
	outbuf_init(&ob, 256 * 1024);
	for (i = 0; i < n; i++)
		outbuf_append(&ob, in + i, 1);
	assert_renders(&ob, in, n, 256 * 1024);
	outbuf_release(&ob);
	free(in);
}

/* One append larger than cap, alone and after a partial ring. */
static void
test_outbuf_single_huge_append(void **state)
{
	struct outbuf	 ob;
	size_t		 n = 50000;
	char		*in = make_input(n);

	(void)state;
	outbuf_init(&ob, 64);
	outbuf_append(&ob, in, n);
	assert_renders(&ob, in, n, 64);
	outbuf_release(&ob);

	outbuf_init(&ob, 64);
	outbuf_append(&ob, in, 40);		/* head full, ring part full */
	outbuf_append(&ob, in + 40, n - 40);	/* wraps the ring whole */
	assert_renders(&ob, in, n, 64);
	outbuf_append(&ob, in + n - 5, 0);
	assert_renders(&ob, in, n, 64);
	outbuf_release(&ob);
	free(in);
}

/* Cap 0 keeps nothing: empty, then just the marker. */
static void
test_outbuf_cap_zero(void **state)
{
	struct outbuf	 ob;
	char		*got;
	size_t		 len;

	(void)state;
	outbuf_init(&ob, 0);
	got = outbuf_render(&ob, &len);
	assert_int_equal(len, 0);
	assert_string_equal(got, "");
	free(got);
	outbuf_append(&ob, "abc", 3);
	outbuf_append(&ob, "de", 2);
	assert_null(ob.head);
	assert_null(ob.tail);
	assert_true(outbuf_truncated(&ob));
	got = outbuf_render(&ob, &len);
	assert_string_equal(got, "\n[... 5 bytes omitted ...]\n");
	assert_int_equal(len, strlen(got));
	free(got);
	outbuf_release(&ob);
}

/* Odd caps: the ring holds the extra byte (cap 1 has no head at all). */
static void
test_outbuf_odd_cap(void **state)
{
	struct outbuf	 ob;
	size_t		 caps[] = { 1, 3, 7, 101 }, i, n;
	char		*in = make_input(1000);

	(void)state;
	for (i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		for (n = 0; n <= caps[i] + 5; n++) {
			outbuf_init(&ob, caps[i]);
			append_chunked(&ob, in, n, 2);
			assert_renders(&ob, in, n, caps[i]);
			outbuf_release(&ob);
		}
		outbuf_init(&ob, caps[i]);
		append_chunked(&ob, in, 1000, 5);
		assert_renders(&ob, in, 1000, caps[i]);
		outbuf_release(&ob);
	}
	free(in);
}

/* Nothing appended: an empty, NUL-terminated render and no allocation. */
static void
test_outbuf_empty_render(void **state)
{
	struct outbuf	 ob;
	char		*got;
	size_t		 len = 99;

	(void)state;
	outbuf_init(&ob, 4096);
	got = outbuf_render(&ob, &len);
	assert_int_equal(len, 0);
	assert_string_equal(got, "");
	assert_null(ob.head);
	assert_null(ob.tail);
	assert_false(outbuf_truncated(&ob));
	free(got);
	outbuf_release(&ob);
}

/* A big cap costs nothing up front; the ring waits for a full head. */
static void
test_outbuf_grows_lazily(void **state)
{
	struct outbuf	 ob;
	size_t		 cap = 16 * 1024 * 1024;
	char		*in = make_input(cap / 2 + 10);

	(void)state;
	outbuf_init(&ob, cap);
	outbuf_append(&ob, in, 10);
	assert_non_null(ob.head);
	assert_true(malloc_usable_size(ob.head) < 4096);
	assert_null(ob.tail);
	append_chunked(&ob, in + 10, cap / 2 - 10, 4000);
	assert_int_equal(ob.head_len, cap / 2);
	assert_null(ob.tail);
	assert_true(malloc_usable_size(ob.head) < cap / 2 + 4096);
	outbuf_append(&ob, in + cap / 2, 10);
	assert_non_null(ob.tail);
	assert_renders(&ob, in, cap / 2 + 10, cap);
	outbuf_release(&ob);
	free(in);
}

/* Release frees and zeroes; releasing twice is harmless. */
static void
test_outbuf_release_zeroes(void **state)
{
	struct outbuf	 ob;

	(void)state;
	outbuf_init(&ob, 8);
	outbuf_append(&ob, "0123456789", 10);
	outbuf_release(&ob);
	assert_null(ob.head);
	assert_null(ob.tail);
	assert_int_equal(ob.cap, 0);
	assert_int_equal(ob.total, 0);
	assert_int_equal(ob.head_len + ob.tail_len + ob.tail_pos, 0);
	outbuf_release(&ob);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_outbuf_small_input_exact),
		cmocka_unit_test(test_outbuf_exactly_cap),
		cmocka_unit_test(test_outbuf_cap_plus_one),
		cmocka_unit_test(test_outbuf_huge_many_small_appends),
		cmocka_unit_test(test_outbuf_one_byte_appends),
		cmocka_unit_test(test_outbuf_single_huge_append),
		cmocka_unit_test(test_outbuf_cap_zero),
		cmocka_unit_test(test_outbuf_odd_cap),
		cmocka_unit_test(test_outbuf_empty_render),
		cmocka_unit_test(test_outbuf_grows_lazily),
		cmocka_unit_test(test_outbuf_release_zeroes),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
