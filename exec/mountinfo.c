/*
 * mountinfo's lines as plain structs: fields split in place, escapes
 * undone, optional fields skipped to the " - " separator.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mountinfo.h"

int
mountinfo_open(struct mountinfo *mi, const char *path)
{
	memset(mi, 0, sizeof *mi);
	if (path == NULL)
		mi->f = fopen("/proc/self/mountinfo", "re");
	else
		mi->f = fopen(path, "re");
	if (mi->f == NULL)
		return (-1);
	return (0);
}

void
mountinfo_close(struct mountinfo *mi)
{
	int	saved_errno = errno;

	if (mi->f != NULL)
		fclose(mi->f);
	free(mi->line);
	memset(mi, 0, sizeof *mi);
	errno = saved_errno;
}

/* Undoes the kernel's octal escapes (\040 for a space) in place. */
static char *
mountinfo_unescape(char *s)
{
	char	*d = s, *start = s;

	for (; *s != '\0'; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
			    (s[3] - '0'));
			s += 3;
		} else
			*d = *s;
	}
	*d = '\0';
	return (start);
}

/* The next space-separated field of *p, or NULL. */
static char *
mountinfo_field(char **p)
{
	char	*f;

	while ((f = strsep(p, " ")) != NULL && *f == '\0')
		;		/* runs of blanks: tolerated */
	return (f);
}

/* Fills mi->e from line (cut in place); 0, or -1 if it is not a mount. */
static int
mountinfo_parse(struct mountinfo *mi, char *line)
{
	struct mountinfo_entry	*e = &mi->e;
	char			*p = line, *f[6], *sep, *end;
	size_t			 i;

	line[strcspn(line, "\n")] = '\0';
	for (i = 0; i < 6; i++)
		if ((f[i] = mountinfo_field(&p)) == NULL)
			return (-1);
	while ((sep = mountinfo_field(&p)) != NULL && strcmp(sep, "-") != 0)
		;		/* optional fields: shared:N, master:N, ... */
	if (sep == NULL)
		return (-1);
	memset(e, 0, sizeof *e);
	e->id = strtoul(f[0], &end, 10);
	if (*end != '\0')
		return (-1);
	e->parent = strtoul(f[1], &end, 10);
	if (*end != '\0')
		return (-1);
	e->root = mountinfo_unescape(f[3]);
	e->mount_point = mountinfo_unescape(f[4]);
	e->opts = f[5];
	if ((f[0] = mountinfo_field(&p)) == NULL ||
	    (f[1] = mountinfo_field(&p)) == NULL)
		return (-1);
	e->fstype = mountinfo_unescape(f[0]);
	e->source = mountinfo_unescape(f[1]);
	e->super_opts = (f[2] = mountinfo_field(&p)) != NULL ? f[2] : "";
	return (0);
}

const struct mountinfo_entry *
mountinfo_next(struct mountinfo *mi)
{
	while (getline(&mi->line, &mi->size, mi->f) != -1)
		if (mountinfo_parse(mi, mi->line) == 0)
			return (&mi->e);
	return (NULL);
}

int
mountinfo_has_opt(const char *opts, const char *name)
{
	size_t	len = strlen(name), n;

	for (; *opts != '\0'; opts += n + (opts[n] == ',')) {
		n = strcspn(opts, ",");
		if (n == len && strncmp(opts, name, len) == 0)
			return (1);
	}
	return (0);
}
