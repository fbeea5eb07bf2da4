/*
 * The last lines of a log, cleaned for a callback. Lines are taken from the
 * end backwards, so only the lines returned (and the blank ones after
 * them) are ever copied; the file is read from the end in chunks, never
 * more than TAIL_MAX_READ bytes of it.
 *
 * A carriage return works as on a terminal that is then cleared to the end
 * of the line: the text after the last CR of a line replaces what came
 * before, so "10%\r20%\r100%" is "100%", while a CR with nothing visible
 * after it ("done\r\n" from a PTY) is dropped.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logs/execlog.h"
#include "logs/tail.h"
#include "logs/xmalloc.h"

#define TAIL_CHUNK	(64 * 1024)
#define TAIL_MAX_READ	(1024 * 1024)

/* A growing array of lines, collected newest first. */
struct tail_array {
	char		**v;
	unsigned	  n;
	unsigned	  alloc;
};

/*
 * Index after the escape sequence starting at s[i] (an ESC). A sequence
 * cut short by the end, or by a byte that cannot be part of it, ends
 * there; that byte is kept.
 */
static size_t
tail_skip_escape(const char *s, size_t len, size_t i)
{
	unsigned char	c;

	if (++i == len)
		return (len);			/* lone ESC at the end */
	c = s[i];
	if (c == '[') {				/* CSI params inter final */
		i++;
		while (i < len && s[i] >= 0x30 && s[i] <= 0x3f)
			i++;
		while (i < len && s[i] >= 0x20 && s[i] <= 0x2f)
			i++;
		if (i < len && s[i] >= 0x40 && s[i] <= 0x7e)
			i++;
		return (i);
	}
	if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
		/* OSC, DCS, SOS, PM, APC: a string ended by BEL or ESC \. */
		for (i++; i < len; i++) {
			if (s[i] == '\a')
				return (i + 1);
			if (s[i] == '\n')
				return (i);	/* never eat the next line */
			if (s[i] != '\033')
				continue;
			if (i + 1 < len && s[i + 1] == '\\')
				return (i + 2);		/* ST */
			return (i);	/* another sequence starts here */
		}
		return (len);
	}
	/* ESC, intermediates, final: ESC 7, ESC =, ESC ( B. */
	while (i < len && s[i] >= 0x20 && s[i] <= 0x2f)
		i++;
	if (i < len && s[i] >= 0x30 && s[i] <= 0x7e)
		i++;
	return (i);
}

/* Drops escapes, bells and CRs in one pass, writing behind the reader. */
size_t
tail_strip_ansi(char *s, size_t len)
{
	size_t	i = 0, o = 0, line = 0;
	int	cr = 0;

	while (i < len) {
		switch (s[i]) {
		case '\033':
			i = tail_skip_escape(s, len, i);
			continue;
		case '\r':
			cr = 1;		/* acts once something visible comes */
			break;
		case '\a':
			break;		/* a stray bell */
		case '\n':
			s[o++] = '\n';
			line = o;
			cr = 0;
			break;
		default:
			if (cr) {
				o = line;
				cr = 0;
			}
			s[o++] = s[i];
			break;
		}
		i++;
	}
	return (o);
}

/* Whether s holds nothing visible. */
static int
tail_blank(const char *s)
{
	return (s[strspn(s, " \t\v\f")] == '\0');
}

/*
 * Cuts s (len bytes, allocated with room for len + 1) to max_line bytes
 * ending in "...", on a UTF-8 character boundary. 0 is no limit.
 */
static void
tail_cap(char *s, size_t len, size_t max_line)
{
	size_t	keep, dots, back;

	if (max_line == 0 || len <= max_line) {
		s[len] = '\0';
		return;
	}
	dots = max_line < 3 ? max_line : 3;
	keep = max_line - dots;
	/* Back over continuation bytes: at most 3 in valid UTF-8. */
	for (back = 0; keep > 0 && back < 3; back++) {
		if (((unsigned char)s[keep] & 0xc0) != 0x80)
			break;
		keep--;
	}
	memcpy(s + keep, "...", dots);
	s[keep + dots] = '\0';
}

/* A cleaned, capped, allocated copy of the line p (len bytes, no \n). */
static char *
tail_line(const char *p, size_t len, size_t max_line)
{
	char	*s;

	s = xmalloc(len + 1);
	memcpy(s, p, len);
	len = tail_strip_ansi(s, len);
	tail_cap(s, len, max_line);
	return (s);
}

/* Adds s to a (which takes it). */
static void
tail_push(struct tail_array *a, char *s)
{
	if (a->n + 1 >= a->alloc) {
		a->alloc = a->alloc == 0 ? 16 : a->alloc * 2;
		a->v = xreallocarray(a->v, a->alloc, sizeof *a->v);
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

/* The array in file order, NULL-terminated even when empty. */
static char **
tail_finish(struct tail_array *a, unsigned *count)
{
	unsigned	 i;
	char		*tmp;

	if (a->v == NULL)
		a->v = xcalloc(1, sizeof *a->v);
	for (i = 0; i < a->n / 2; i++) {
		tmp = a->v[i];
		a->v[i] = a->v[a->n - 1 - i];
		a->v[a->n - 1 - i] = tmp;
	}
	*count = a->n;
	return (a->v);
}

/* Walks back from the end, one line per \n, until n lines are kept. */
char **
tail_lines_buf(const char *buf, size_t len, unsigned n, size_t max_line,
    unsigned *count)
{
	struct tail_array	 a = { NULL, 0, 0 };
	const char		*nl;
	size_t			 start, end = len;
	char			*line;

	if (n == 0 || len == 0)
		return (tail_finish(&a, count));
	if (end > 0 && buf[end - 1] == '\n')
		end--;			/* no empty line after the last \n */
	for (;;) {
		nl = memrchr(buf, '\n', end);
		start = nl == NULL ? 0 : (size_t)(nl - buf) + 1;
		line = tail_line(buf + start, end - start, max_line);
		if (a.n == 0 && tail_blank(line))
			free(line);	/* a blank trailing line */
		else
			tail_push(&a, line);
		if (a.n == n || start == 0)
			break;
		end = start - 1;
	}
	return (tail_finish(&a, count));
}

/* Counts the newlines in p. */
static size_t
tail_count_nl(const char *p, size_t len)
{
	const char	*end = p + len;
	size_t		 nl = 0;

	while ((p = memchr(p, '\n', end - p)) != NULL) {
		nl++;
		p++;
	}
	return (nl);
}

/* Reads exactly len bytes at off: 0, or -1 (a short file is an error). */
static int
tail_pread(int fd, char *buf, size_t len, off_t off)
{
	ssize_t	n;

	while (len > 0) {
		n = pread(fd, buf, len, off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		buf += n;
		len -= n;
		off += n;
	}
	return (0);
}

/*
 * The lines of buf, the last have bytes of the file; when they do not
 * start the file (partial), the first line is cut and left out, unless it
 * is all there is.
 */
static char **
tail_parse(const char *buf, size_t have, int partial, unsigned n,
    size_t max_line, unsigned *count)
{
	const char	*nl;

	if (partial && (nl = memchr(buf, '\n', have)) != NULL) {
		have -= nl + 1 - buf;
		buf = nl + 1;
	}
	return (tail_lines_buf(buf, have, n, max_line, count));
}

/* Reads back from the end until the last n lines are surely complete. */
char **
tail_lines(const char *path, unsigned n, size_t max_line, unsigned *count)
{
	struct stat	 st;
	char		*buf = NULL, **lines = NULL;
	size_t		 have = 0, chunk, nl = 0, want = (size_t)n + 1;
	off_t		 off;
	int		 fd;

	/* No symlink, FIFO or someone else's file: see execlog.h. */
	fd = execlog_open_safe(path, O_RDONLY, 0);
	if (fd == -1 || fstat(fd, &st) == -1 || n == 0)
		goto out;
	off = st.st_size;
	while (off > 0 && have < TAIL_MAX_READ) {
		chunk = TAIL_CHUNK;
		if ((off_t)chunk > off)
			chunk = off;
		if (chunk > TAIL_MAX_READ - have)
			chunk = TAIL_MAX_READ - have;
		buf = xrealloc(buf, have + chunk);
		memmove(buf + chunk, buf, have);
		if (tail_pread(fd, buf, chunk, off - chunk) == -1)
			goto out;	/* truncated under us: nothing */
		off -= chunk;
		have += chunk;
		nl += tail_count_nl(buf, chunk);
		if (nl < want && off > 0 && have < TAIL_MAX_READ)
			continue;
		lines = tail_parse(buf, have, off > 0, n, max_line, count);
		if (*count == n || off == 0 || have >= TAIL_MAX_READ)
			goto out;
		/* Blank trailing lines took some: n + 1 more newlines. */
		tail_free(lines);
		lines = NULL;
		want = nl + n + 1;
	}
out:
	if (fd != -1)
		close(fd);
	free(buf);
	if (lines == NULL)	/* missing, empty or unreadable */
		lines = tail_lines_buf("", 0, 0, max_line, count);
	return (lines);
}

/* Frees each line, then the array. */
void
tail_free(char **lines)
{
	char	**p;

	if (lines == NULL)
		return;
	for (p = lines; *p != NULL; p++)
		free(*p);
	free(lines);
}
