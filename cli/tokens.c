/*
 * execq: the client's token store, $XDG_STATE_HOME/execq/tokens (else
 * ~/.local/state/execq/tokens): the session tokens that spawn and run
 * keep, and that PROCESS items show.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "logs/xmalloc.h"

/*
 * The token store: $XDG_STATE_HOME/execq/tokens (else
 * ~/.local/state/execq/tokens), mode 0600, one "<session id> <token>"
 * per line, newest last. Allocated path, or NULL without a home.
 */
static char *
execq_tokens_path(int make)
{
	const char	*base = getenv("XDG_STATE_HOME"), *home;
	char		*dir, *path;

	if (base != NULL && *base == '/')
		xasprintf(&dir, "%s/execq", base);
	else if ((home = getenv("HOME")) != NULL && *home == '/')
		xasprintf(&dir, "%s/.local/state/execq", home);
	else
		return (NULL);
	if (make) {
		/* Parents as needed; the last one is ours alone. */
		for (char *p = dir + 1; *p != '\0'; p++) {
			if (*p != '/')
				continue;
			*p = '\0';
			(void)mkdir(dir, 0755);
			*p = '/';
		}
		(void)mkdir(dir, 0700);
	}
	xasprintf(&path, "%s/tokens", dir);
	free(dir);
	return (path);
}

void
execq_tokens_save(const char *session_id, const char *token)
{
	char	*path, *line;
	int	 fd, n;

	if ((path = execq_tokens_path(1)) == NULL)
		return;
	fd = open(path, O_WRONLY|O_APPEND|O_CREAT|O_NOFOLLOW|O_CLOEXEC, 0600);
	if (fd == -1) {
		execq_error("cannot keep the session token in %s: %s (pass it "
		    "with EXECQ_TOKEN)", path, strerror(errno));
		free(path);
		return;
	}
	n = xasprintf(&line, "%s %s\n", session_id, token);
	if (write(fd, line, n) != n)
		execq_error("%s: %s", path, strerror(errno));
	close(fd);
	free(line);
	free(path);
}

json_t *
execq_tokens_load(const char *session_id, const char **found)
{
	static char	 tok[160];
	json_t		*all = json_array();
	char		*path, line[512], *sp;
	FILE		*f;

	*found = NULL;
	if ((path = execq_tokens_path(0)) == NULL)
		return (all);
	if ((f = fopen(path, "re")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL) {
			line[strcspn(line, "\n")] = '\0';
			if ((sp = strchr(line, ' ')) == NULL)
				continue;
			*sp++ = '\0';
			json_array_append_new(all, json_string(sp));
			if (session_id != NULL &&
			    strcmp(line, session_id) == 0) {
				snprintf(tok, sizeof tok, "%s", sp);
				*found = tok;
			}
		}
		fclose(f);
	}
	free(path);
	while (json_array_size(all) > EXECQ_TOKENS_KEEP)
		json_array_remove(all, 0);
	return (all);
}
