/*
 * The classifier's tools: per-command handlers and the lists of
 * read-only tools, writers and interpreters.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/classify.h"
#include "policy/cls.h"
#include "policy/shparse.h"
#include "logs/xmalloc.h"

/* ---- per-command handlers ---------------------------------------------- */

/* find: read-only without actions that write, delete or run. */
static void
cls_find(struct cls_ctx *ctx, const struct cls_words *ws, struct cls_res *r)
{
	struct cls_words	 sub;
	struct cls_res		 inner;
	char			*text = NULL;
	size_t			 i, j;

	cls_raise(r, CLS_READ_ONLY, "read_only:find", "find only lists");
	for (i = 1; i < ws->n; i++) {
		if (cls_in(ws->w[i], (const char *const[]){ "-L", "-H",
		    "-follow", NULL }))
			cls_raise(r, CLS_UNKNOWN, "unknown:option", "find %s "
			    "follows symlinks, which can lead out of the "
			    "workspace", ws->w[i]);
		else if (strcmp(ws->w[i], "-delete") == 0)
			cls_raise(r, CLS_DESTRUCTIVE, "destructive:find",
			    "find -delete deletes what it finds");
		else if (strncmp(ws->w[i], "-fprint", 7) == 0 ||
		    strcmp(ws->w[i], "-fls") == 0)
			cls_raise(r, CLS_WRITE, "write:find", "find %s writes "
			    "a file", ws->w[i]);
		else if (cls_in(ws->w[i], (const char *const[]){ "-exec",
		    "-execdir", "-ok", "-okdir", NULL })) {
			for (j = i + 1; j < ws->n && strcmp(ws->w[j], ";") &&
			    strcmp(ws->w[j], "+"); j++)
				;
			sub.w = ws->w + i + 1;
			sub.f = ws->f + i + 1;
			sub.n = j - i - 1;
			sub.cwd = ws->cwd;
			memset(&inner, 0, sizeof inner);
			cls_recurse_words(ctx, &sub, &inner, &text);
			free(text);
			text = NULL;
			cls_raise(r, CLS_WRITE, "write:find", "find %s runs a "
			    "command on what it finds", ws->w[i]);
			if (inner.risk > r->risk)
				cls_set(r, inner.risk, inner.rule,
				    inner.reason);
			i = j;
		}
	}
}

/* A sed script that can write files or run commands (w, W, e). */
static int
cls_sed_script_unsafe(const char *script)
{
	const char	*p;

	for (p = script; *p != '\0'; p++)
		if ((*p == 'w' || *p == 'W' || *p == 'e') && (p == script ||
		    strchr(";}{ \t\n0123456789$/gpIiMm", p[-1]) != NULL))
			return (1);
	return (0);
}

/*
 * sed: read-only without -i and with scripts that only print. Options
 * are read as GNU sed does: clusters ("-ne"), attached values ("-ee p"),
 * abbreviated long options ("--expr"); the first operand is the script
 * unless -e or -f gave one.
 */
static void
cls_sed(const struct cls_words *ws, struct cls_res *r)
{
	const char	*w, *script;
	size_t		 i, k;
	int		 scripts = 0, files = 0;

	for (i = 1; i < ws->n; i++) {
		w = ws->w[i];
		script = NULL;
		if (strcmp(w, "--") == 0)
			files = 1;
		else if (!files && w[0] == '-' && w[1] == '-') {
			if (cls_opt_match(w, "--in-place")) {
				cls_raise(r, CLS_WRITE, "write:sed", "sed -i "
				    "edits files in place");
				return;
			}
			if (cls_opt_match(w, "--file")) {
				cls_raise(r, CLS_UNKNOWN, "unknown:sed", "sed -f "
				    "runs a script file that is not classified");
				return;
			}
			if (cls_opt_match(w, "--expression"))
				script = strchr(w, '=') != NULL ? strchr(w,
				    '=') + 1 : (i + 1 < ws->n ? ws->w[++i] : "");
			else if (cls_opt_match(w, "--line-length") &&
			    strchr(w, '=') == NULL)
				i++;
		} else if (!files && w[0] == '-' && w[1] != '\0') {
			for (k = 1; w[k] != '\0'; k++) {
				if (w[k] == 'i') {
					cls_raise(r, CLS_WRITE, "write:sed",
					    "sed -i edits files in place");
					return;
				}
				if (w[k] == 'f') {
					cls_raise(r, CLS_UNKNOWN, "unknown:sed",
					    "sed -f runs a script file that is "
					    "not classified");
					return;
				}
				if (w[k] == 'e' || w[k] == 'l') {
					script = w[k + 1] != '\0' ? w + k + 1 :
					    (i + 1 < ws->n ? ws->w[++i] : "");
					if (w[k] == 'l')
						script = NULL;
					break;
				}
			}
		} else if (scripts == 0)
			script = w;	/* the script operand */
		if (script == NULL)
			continue;
		scripts++;
		if (cls_sed_script_unsafe(script)) {
			cls_raise(r, CLS_UNKNOWN, "unknown:sed", "the sed script "
			    "may write files or run commands");
			return;
		}
	}
	cls_raise(r, CLS_READ_ONLY, "read_only:sed", "sed without -i only "
	    "prints");
}

/* awk: read-only when the program cannot write or run. */
static void
cls_awk(const struct cls_words *ws, const char *name, struct cls_res *r)
{
	const char	*w;
	size_t		 i;

	for (i = 1; i < ws->n; i++) {
		w = ws->w[i];
		if (strcmp(w, "-F") == 0 || strcmp(w, "-v") == 0 ||
		    cls_opt_match(w, "--field-separator") ||
		    cls_opt_match(w, "--assign")) {
			if (strchr(w, '=') == NULL || w[1] != '-')
				i++;
			continue;
		}
		if (strncmp(w, "-F", 2) == 0 || strncmp(w, "-v", 2) == 0)
			continue;
		if (strcmp(w, "--") == 0)
			continue;
		if (cls_is_opt(w)) {
			cls_raise(r, CLS_UNKNOWN, "unknown:awk", "%s option %s "
			    "is not followed (program files, extensions)",
			    name, w);
			return;
		}
		if (strstr(w, "system") != NULL || strpbrk(w, "|>") != NULL ||
		    strchr(w, '@') != NULL) {
			cls_raise(r, CLS_UNKNOWN, "unknown:awk", "the %s "
			    "program may write files or run commands", name);
			return;
		}
		break;		/* the program; the rest are files */
	}
	cls_raise(r, CLS_READ_ONLY, "read_only:awk", "%s only prints", name);
}

/* Non-option operands. */
static size_t
cls_operands(const struct cls_words *ws)
{
	size_t	i, n = 0;

	for (i = 1; i < ws->n; i++)
		if (!cls_is_opt(ws->w[i]))
			n++;
	return (n);
}

/* A tool whose subcommand decides (npm install, apt remove, ...). */
struct cls_sub {
	const char	*name;
	const char	*const *ro;		/* read-only subcommands */
	const char	*const *bad;		/* destructive ones */
	enum cls_risk	 other;			/* everything else */
	const char	*const *net;		/* ones that use the network */
};

#define L(...)	((const char *const []){ __VA_ARGS__, NULL })
static const struct cls_sub cls_subs[] = {
	{ "npm", L("ls", "list", "--version", "-v", "help", "root",
	    "prefix"), L("uninstall", "rm", "remove", "unpublish", "prune"),
	    CLS_WRITE, L("install", "i", "ci", "update", "add", "view",
	    "info", "outdated", "search", "publish", "audit", "login") },
	{ "yarn", L("list", "--version", "why"), L("remove"), CLS_WRITE,
	    L("install", "add", "upgrade", "info", "outdated", "publish") },
	{ "pnpm", L("list", "ls", "--version", "why"),
	    L("remove", "rm", "prune"), CLS_WRITE, L("install", "i", "add",
	    "update", "outdated", "publish") },
	{ "pip", L("list", "show", "freeze", "--version", "check", "help"),
	    L("uninstall"), CLS_WRITE, L("install", "download", "search",
	    "index") },
	{ "pip3", L("list", "show", "freeze", "--version", "check", "help"),
	    L("uninstall"), CLS_WRITE, L("install", "download", "search",
	    "index") },
	{ "apt", L("list", "search", "show", "policy", "depends", "rdepends",
	    "--version"), L("remove", "purge", "autoremove"), CLS_WRITE,
	    L("install", "update", "upgrade", "full-upgrade", "download",
	    "source") },
	{ "apt-get", L("--version", "check", "changelog"), L("remove",
	    "purge", "autoremove", "clean"), CLS_WRITE, L("install", "update",
	    "upgrade", "dist-upgrade", "download", "source") },
	{ "apt-cache", L("search", "show", "policy", "depends", "rdepends",
	    "madison", "pkgnames", "stats"), L("__none__"), CLS_READ_ONLY },
	{ "dpkg", L("-l", "-L", "-s", "-S", "--list", "--listfiles",
	    "--status", "--search", "--version", "--print-architecture"),
	    L("-r", "-P", "--remove", "--purge"), CLS_WRITE },
	{ "systemctl", L("status", "show", "list-units", "list-unit-files",
	    "list-timers", "list-sockets", "is-active", "is-enabled",
	    "is-failed", "cat", "--version", "help", "get-default"),
	    L("stop", "disable", "mask", "kill", "isolate", "reset-failed"),
	    CLS_WRITE },
	{ "docker", L("ps", "images", "inspect", "logs", "version", "info",
	    "stats", "top", "history", "port", "diff", "--version"),
	    L("rm", "rmi", "kill", "stop", "prune", "system", "volume",
	    "network"), CLS_WRITE, L("pull", "push", "search", "login") },
	{ "podman", L("ps", "images", "inspect", "logs", "version", "info",
	    "--version"), L("rm", "rmi", "kill", "stop", "system", "volume"),
	    CLS_WRITE },
	{ "kubectl", L("get", "describe", "logs", "version", "explain",
	    "api-resources", "top", "cluster-info", "diff"), L("delete",
	    "drain", "cordon", "replace"), CLS_WRITE },
	{ "go", L("version", "list", "doc", "help"), L("clean"),
	    CLS_WRITE, L("get", "install", "mod") },
	{ "cargo", L("--version", "-V", "tree", "metadata", "help"),
	    L("clean", "uninstall", "yank"), CLS_WRITE, L("search", "fetch",
	    "install", "update", "publish", "login") },
	{ "crontab", L("-l"), L("-r"), CLS_WRITE },
	{ "iptables", L("-L", "-S", "--list", "-V"), L("-F", "-X", "-D",
	    "--flush", "--delete", "-P"), CLS_WRITE },
	{ "unzip", L("-l", "-v", "-t", "-Z"), L("__none__"), CLS_WRITE },
};
#undef L

/* Tools decided by their first word after the options. */
static int
cls_subcommand(const struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	const struct cls_sub	*s = NULL;
	const char		*cmd = NULL;
	size_t			 i;

	for (i = 0; i < sizeof cls_subs / sizeof cls_subs[0]; i++)
		if (strcmp(cls_subs[i].name, name) == 0)
			s = &cls_subs[i];
	if (s == NULL)
		return (0);
	for (i = 1; i < ws->n && cmd == NULL; i++) {
		if (cls_in(ws->w[i], s->ro) || cls_in(ws->w[i], s->bad))
			cmd = ws->w[i];
		else if (!cls_is_opt(ws->w[i]))
			cmd = ws->w[i];
		else if (strchr(ws->w[i], '=') == NULL) {
			/* "-n get delete": its value could be taken for it. */
			cls_raise(r, CLS_UNKNOWN, "unknown:subcommand", "%s %s "
			    "before the subcommand is not followed", name,
			    ws->w[i]);
			return (1);
		}
	}
	if (cmd != NULL && cls_in(cmd, s->bad))
		cls_raise(r, CLS_DESTRUCTIVE, "destructive:subcommand", "%s %s "
		    "removes or stops things", name, cmd);
	else if (cmd != NULL && cls_in(cmd, s->ro))
		cls_raise(r, CLS_READ_ONLY, "read_only:subcommand", "%s %s only "
		    "reads", name, cmd);
	else if (cmd != NULL && s->net != NULL && cls_in(cmd, s->net))
		cls_raise(r, CLS_NETWORK, "network:subcommand", "%s %s talks to "
		    "the network", name, cmd);
	else
		cls_raise(r, s->other, s->other == CLS_WRITE ? "write:subcommand" :
		    "unknown:subcommand", "%s %s %s", name, cmd != NULL ? cmd :
		    "(no subcommand)", s->other == CLS_WRITE ? "changes files or "
		    "state" : "is not classified");
	return (1);
}

/* Read-only commands, by name. */
static const char *const cls_read_only[] = { "ls", "cat", "head", "tail",
    "wc", "grep", "egrep", "fgrep", "rg", "ag", "echo", "printf", "pwd",
    "whoami", "id", "groups", "uname", "which", "whereis", "type", "file",
    "stat", "du", "df", "tree", "diff", "cmp", "comm", "cut", "tr", "paste",
    "column", "fold", "fmt", "nl", "rev", "tac", "od", "hexdump", "strings",
    "basename", "dirname", "realpath", "readlink", "md5sum", "sha1sum",
    "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum",
    "base64", "base32", "jq", "test", "[", "true", "false", "seq", "expr",
    "sleep", "ps", "pgrep", "free", "uptime", "printenv", "tty", "locale",
    "nproc", "getconf", "lsblk", "lscpu", "lsof", "dir", "vdir", "zcat", "zgrep", "bzcat", "xzcat", "numfmt", "join", "look",
    "yes", "arch", "logname", "users", "who", "w", "last", "env", "cd",
    "pushd", "popd", "dirs", "exit", "return", ":", "export", "unset",
    "set", "shift", "wait", "read", "local", "declare", "typeset",
    "readonly", "hash", "getopts", "umask", "ulimit", "times", "jobs",
    "let", "break", "continue", "shopt", "nm", "objdump", "readelf",
    "size", "tput", "clear",
    "apropos", "whatis", "pidof", "vmstat", "iostat", "mpstat", "sum", "expand", "unexpand", "shuf", "factor", "sha1", "md5", "sort",
    "uniq", "xxd", "tee", NULL };

/* Known writers and destroyers: name, risk, reason. */
static const struct {
	const char	*name;
	enum cls_risk	 risk;
	const char	*reason;
} cls_writers[] = {
	{ "mkdir", CLS_WRITE, "creates directories" },
	{ "touch", CLS_WRITE, "creates or updates files" },
	{ "cp", CLS_WRITE, "copies files (and may overwrite)" },
	{ "mv", CLS_WRITE, "moves files (and may overwrite)" },
	{ "ln", CLS_WRITE, "creates links" },
	{ "install", CLS_WRITE, "copies files into place" },
	{ "chmod", CLS_WRITE, "changes permissions" },
	{ "chown", CLS_WRITE, "changes owners" },
	{ "chgrp", CLS_WRITE, "changes groups" },
	{ "patch", CLS_WRITE, "edits files" },
	{ "zip", CLS_WRITE, "writes an archive" },
	{ "gzip", CLS_WRITE, "replaces files with compressed ones" },
	{ "gunzip", CLS_WRITE, "replaces files with uncompressed ones" },
	{ "bzip2", CLS_WRITE, "replaces files with compressed ones" },
	{ "bunzip2", CLS_WRITE, "replaces files with uncompressed ones" },
	{ "xz", CLS_WRITE, "replaces files with compressed ones" },
	{ "unxz", CLS_WRITE, "replaces files with uncompressed ones" },
	{ "zstd", CLS_WRITE, "writes compressed files" },
	{ "split", CLS_WRITE, "writes files" },
	{ "csplit", CLS_WRITE, "writes files" },
	{ "rsync", CLS_WRITE, "copies files (and may overwrite)" },
	{ "scp", CLS_NETWORK, "copies files over the network" },
	{ "sftp", CLS_NETWORK, "copies files over the network" },
	{ "curl", CLS_NETWORK, "talks to the network" },
	{ "wget", CLS_NETWORK, "downloads files" },
	{ "aria2c", CLS_NETWORK, "downloads files" },
	{ "nc", CLS_NETWORK, "opens network connections" },
	{ "ncat", CLS_NETWORK, "opens network connections" },
	{ "netcat", CLS_NETWORK, "opens network connections" },
	{ "socat", CLS_NETWORK, "opens network connections" },
	{ "telnet", CLS_NETWORK, "opens network connections" },
	{ "ftp", CLS_NETWORK, "talks to a file server" },
	{ "lftp", CLS_NETWORK, "talks to a file server" },
	{ "ping", CLS_NETWORK, "sends packets to a host" },
	{ "ping6", CLS_NETWORK, "sends packets to a host" },
	{ "traceroute", CLS_NETWORK, "sends packets to a host" },
	{ "tracepath", CLS_NETWORK, "sends packets to a host" },
	{ "mtr", CLS_NETWORK, "sends packets to a host" },
	{ "host", CLS_NETWORK, "asks a name server" },
	{ "dig", CLS_NETWORK, "asks a name server" },
	{ "nslookup", CLS_NETWORK, "asks a name server" },
	{ "whois", CLS_NETWORK, "asks a whois server" },
	{ "ssh-keyscan", CLS_NETWORK, "talks to ssh servers" },
	{ "make", CLS_WRITE, "runs build recipes" },
	{ "cmake", CLS_WRITE, "generates a build" },
	{ "ninja", CLS_WRITE, "runs a build" },
	{ "gcc", CLS_WRITE, "compiles (writes output files)" },
	{ "cc", CLS_WRITE, "compiles (writes output files)" },
	{ "clang", CLS_WRITE, "compiles (writes output files)" },
	{ "g++", CLS_WRITE, "compiles (writes output files)" },
	{ "ld", CLS_WRITE, "links (writes output files)" },
	{ "ar", CLS_WRITE, "writes an archive" },
	{ "rmdir", CLS_WRITE, "removes empty directories" },
	{ "mktemp", CLS_WRITE, "creates a temporary file" },
	{ "mkfifo", CLS_WRITE, "creates a pipe file" },
	{ "git-lfs", CLS_WRITE, "changes the repository" },
	{ "rm", CLS_DESTRUCTIVE, "deletes files" },
	{ "shred", CLS_DESTRUCTIVE, "overwrites files beyond recovery" },
	{ "truncate", CLS_DESTRUCTIVE, "cuts files short" },
	{ "dd", CLS_DESTRUCTIVE, "overwrites its output" },
	{ "kill", CLS_DESTRUCTIVE, "signals processes" },
	{ "pkill", CLS_DESTRUCTIVE, "signals processes by name" },
	{ "killall", CLS_DESTRUCTIVE, "signals processes by name" },
	{ "userdel", CLS_DESTRUCTIVE, "deletes a user" },
	{ "groupdel", CLS_DESTRUCTIVE, "deletes a group" },
	{ "useradd", CLS_WRITE, "adds a user" },
	{ "passwd", CLS_DESTRUCTIVE, "changes a password" },
	{ "mount", CLS_DESTRUCTIVE, "changes the mounts" },
	{ "umount", CLS_DESTRUCTIVE, "changes the mounts" },
	{ "swapoff", CLS_DESTRUCTIVE, "turns swap off" },
	{ "sysctl", CLS_DESTRUCTIVE, "changes kernel settings" },
	{ "modprobe", CLS_DESTRUCTIVE, "loads kernel modules" },
	{ "rmmod", CLS_DESTRUCTIVE, "unloads kernel modules" },
};

/* Interpreters: they run code nobody classified. */
static const char *const cls_interpreters[] = { "python", "python2",
    "python3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php",
    "lua", "luajit", "tclsh", "Rscript", "julia", "java", "dotnet",
    "osascript", "pwsh", "powershell", "fish", "csh", "tcsh", "npx",
    "source", ".", "alias", "trap", "nix", "expect", NULL };

/* 1 if an rsync operand names another machine (host:path, rsync://). */
static int
cls_rsync_remote(const struct cls_words *ws)
{
	const char	*colon;
	size_t		 i;

	for (i = 1; i < ws->n; i++) {
		if (ws->w[i][0] == '-')
			continue;
		if (strncmp(ws->w[i], "rsync://", 8) == 0)
			return (1);
		colon = strchr(ws->w[i], ':');
		if (colon != NULL && colon != ws->w[i] &&
		    memchr(ws->w[i], '/', colon - ws->w[i]) == NULL)
			return (1);
	}
	return (0);
}

/* ---- options ------------------------------------------------------------ */

/* Options that raise a known tool's risk: tools, both spellings, why. */
static const struct {
	const char	*tools;
	const char	*opts;
	enum cls_risk	 risk;
	const char	*why;
} cls_options[] = {
	{ "grep egrep fgrep zgrep", "-R --dereference-recursive",
	    CLS_UNKNOWN, "follows symlinks while it recurses, which can lead "
	    "out of the workspace" },
	{ "rg", "-L --follow", CLS_UNKNOWN, "follows symlinks, which can lead "
	    "out of the workspace" },
	{ "rg", "--pre --pre-glob --hostname-bin", CLS_UNKNOWN, "runs another "
	    "program" },
	{ "rg ag", "-z --search-zip", CLS_UNKNOWN, "runs decompression "
	    "programs" },
	{ "ag", "-f --follow", CLS_UNKNOWN, "follows symlinks, which can lead "
	    "out of the workspace" },
	{ "du", "-L --dereference", CLS_UNKNOWN, "follows symlinks, which can "
	    "lead out of the workspace" },
	{ "tree", "-l", CLS_UNKNOWN, "follows symlinks, which can lead out of "
	    "the workspace" },
	{ "du wc sort", "--files0-from", CLS_UNKNOWN, "reads the paths to look "
	    "at from a file, which the sandbox cannot check" },
	{ "file", "-f --files-from", CLS_UNKNOWN, "reads the paths to look at "
	    "from a file, which the sandbox cannot check" },
	{ "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum",
	    "-c --check", CLS_UNKNOWN, "reads the files a list names, which "
	    "the sandbox cannot check" },
	{ "sort", "--compress-program", CLS_UNKNOWN, "runs another program" },
	{ "file", "-z -Z --uncompress --uncompress-noreport", CLS_UNKNOWN,
	    "runs decompression programs" },
	{ "nm objdump", "--plugin", CLS_UNKNOWN, "loads a shared library" },
	{ "file", "-C --compile", CLS_WRITE, "writes a compiled magic file" },
	{ "sort", "-o --output -T --temporary-directory", CLS_WRITE, "writes "
	    "a file" },
	{ "tree shuf", "-o --output", CLS_WRITE, "writes a file" },
	{ "cp rsync", "-L -H --dereference --copy-links --copy-unsafe-links",
	    CLS_UNKNOWN, "follows symlinks, which can lead out of the "
	    "workspace" },
	{ "rsync", "-e --rsh --rsync-path", CLS_UNKNOWN, "runs another "
	    "program" },
	{ "scp sftp", "-S -o -F", CLS_UNKNOWN, "can run another program "
	    "(ProxyCommand, an ssh program or config)" },
	{ "zip", "-T --test -TT --unzip-command", CLS_UNKNOWN, "runs another "
	    "program (unzip, or the one named)" },
	{ "split", "--filter", CLS_UNKNOWN, "runs a shell command on each "
	    "piece" },
	{ "install", "--strip-program", CLS_UNKNOWN, "runs another program" },
	{ "wget", "--use-askpass -e --execute", CLS_UNKNOWN, "runs another "
	    "program or a wgetrc command" },
	{ "curl", "-K --config", CLS_UNKNOWN, "reads options from a file "
	    "that is not classified" },
	{ "make", "--eval -E", CLS_WRITE, "runs make code" },
};

/* The option table's row for a tool, or NULL. */
static const struct cls_tool *
cls_tool_find(const char *name)
{
	size_t	lo = 0, hi = cls_ntools, mid;
	int	c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if ((c = strcmp(name, cls_tools[mid].name)) == 0)
			return (&cls_tools[mid]);
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (NULL);
}

/* Raises r if option opt ("-R", "--name"; n bytes) of tool is special. */
static void
cls_option(const char *tool, const char *opt, size_t n, struct cls_res *r)
{
	char	rule[CLS_RULE_MAX];
	size_t	i;

	for (i = 0; i < sizeof cls_options / sizeof cls_options[0]; i++) {
		if (!cls_listed(cls_options[i].tools, tool, strlen(tool)) ||
		    !cls_listed(cls_options[i].opts, opt, n))
			continue;
		snprintf(rule, sizeof rule, "%s:option",
		    cls_risk_name(cls_options[i].risk));
		cls_raise(r, cls_options[i].risk, rule, "%s %.*s %s", tool,
		    (int)n, opt, cls_options[i].why);
	}
}

/* Raises r for every special option of a tool with no option table. */
static void
cls_options_any(const char *tool, const struct cls_words *ws,
    struct cls_res *r)
{
	const char	*w;
	char		 opt[3] = "-?";
	size_t		 i, k;

	for (i = 1; i < ws->n && strcmp(ws->w[i], "--") != 0; i++) {
		w = ws->w[i];
		if (w[0] == '-' && w[1] == '-')
			cls_option(tool, w, strcspn(w, "="), r);
		else if (w[0] == '-')
			for (k = 1; w[k] != '\0' && isalpha((unsigned char)w[k]);
			    k++) {
				opt[1] = w[k];
				cls_option(tool, opt, 2, r);
			}
	}
}

/*
 * A long option word ("--name[=v]") in longs, also abbreviated as GNU
 * getopt allows: its full name into *name and *len and how many values it
 * takes in the next words (0 when "=v" is attached). -1 if unknown.
 */
static int
cls_long(const char *longs, const char *w, const char **name, size_t *len)
{
	const char	*p = longs, *hit = NULL;
	size_t		 n = strcspn(w, "="), tl, nl;
	int		 hits = 0;

	while (*p != '\0') {
		tl = strcspn(p, " ");
		nl = strcspn(p, "=? ");
		if (nl >= n && strncmp(p, w, n) == 0) {
			if (nl == n) {
				hit = p;
				hits = 1;
				break;
			}
			hit = p;
			hits++;
		}
		p += tl + (p[tl] == ' ');
	}
	if (hits != 1)
		return (-1);
	*name = hit;
	*len = strcspn(hit, "=? ");
	if (w[n] == '=' && hit[*len] != '=' && hit[*len] != '?')
		return (-1);		/* "--lines=3": takes no value */
	if (w[n] == '=' || hit[*len] != '=')
		return (0);
	return (hit[*len + 1] == '2' ? 2 : 1);
}

/*
 * Checks every option of a read-only tool against its row: an unknown
 * one makes it unknown, a special one raises r. Returns 1 if it did not
 * stay read-only.
 */
static int
cls_options_check(const struct cls_tool *t, const struct cls_words *ws,
    struct cls_res *r)
{
	const char	*w, *name, *spec;
	char		 opt[64];
	size_t		 i, k, len;
	int		 vals;

	for (i = 1; i < ws->n && t->shorts != NULL; i++) {
		w = ws->w[i];
		if (strcmp(w, "--") == 0)
			break;
		if (w[0] != '-' || w[1] == '\0' || ((t->flags & CLS_T_DIGITS) &&
		    strspn(w + 1, "0123456789") == strlen(w + 1)))
			continue;
		if (w[1] == '-') {
			if ((vals = cls_long(t->longs, w + 2, &name, &len)) < 0)
				goto unknown;
			snprintf(opt, sizeof opt, "--%.*s", (int)len, name);
			cls_option(t->name, opt, strlen(opt), r);
			i += (size_t)vals;
			continue;
		}
		for (k = 1; w[k] != '\0'; k++) {
			if (w[k] == ':' || (spec = strchr(t->shorts, w[k])) ==
			    NULL)
				goto unknown;
			snprintf(opt, sizeof opt, "-%c", w[k]);
			cls_option(t->name, opt, 2, r);
			if (spec[1] == ':') {
				i += w[k + 1] == '\0';
				break;
			}
		}
	}
	return (r->risk != CLS_READ_ONLY);
unknown:
	cls_raise(r, CLS_UNKNOWN, "unknown:option", "%s option %.40s is not "
	    "one execq knows (it may run a program or write a file)", t->name,
	    w);
	return (1);
}

/* Writers, interpreters, and everything else (unknown). */
static void
cls_known(const struct cls_words *ws, const char *name, struct cls_res *r)
{
	char	rule[CLS_RULE_MAX];
	size_t	i;

	for (i = 0; i < sizeof cls_writers / sizeof cls_writers[0]; i++) {
		if (strcmp(cls_writers[i].name, name) != 0)
			continue;
		cls_options_any(name, ws, r);
		if (strcmp(name, "rsync") == 0 && cls_rsync_remote(ws))
			cls_raise(r, CLS_NETWORK, "network:rsync", "rsync "
			    "copies to or from another machine");
		if (strcmp(name, "rsync") == 0 && (cls_has_prefix(ws,
		    "--del") || cls_has_opt(ws, "--remove-source-files")))
			cls_raise(r, CLS_DESTRUCTIVE, "destructive:rsync",
			    "rsync --delete deletes files");
		else {
			snprintf(rule, sizeof rule, "%s:%s", cls_risk_name(
			    cls_writers[i].risk), name);
			cls_raise(r, cls_writers[i].risk, rule, "%s %s", name,
			    cls_writers[i].reason);
		}
		return;
	}
	if (cls_in(name, cls_interpreters)) {
		if (ws->n == 2 && (strcmp(ws->w[1], "--version") == 0 ||
		    strcmp(ws->w[1], "-V") == 0))
			cls_raise(r, CLS_READ_ONLY, "read_only:version", "%s "
			    "only prints its version", name);
		else
			cls_raise(r, CLS_UNKNOWN, "unknown:interpreter", "%s "
			    "runs code that is not classified", name);
		return;
	}
	cls_raise(r, CLS_UNKNOWN, "unknown:command", "%s is not a command "
	    "execq knows", name);
}

/* Options that make a read-only tool run something else. */
static int
cls_runs_program(const struct cls_words *ws, const char *name)
{
	if (strcmp(name, "hash") == 0)
		return (cls_has_flag(ws, 'p', NULL));
	return (0);
}

/* ip: showing is read-only; changing the network is not. */
static void
cls_ip(const struct cls_words *ws, struct cls_res *r)
{
	static const char *const change[] = { "add", "del", "delete", "set",
	    "flush", "change", "replace", "append", "up", "down", "exec",
	    "monitor", NULL };
	size_t	i;

	for (i = 1; i < ws->n; i++)
		if (cls_in(ws->w[i], change)) {
			cls_raise(r, CLS_DESTRUCTIVE, "destructive:ip", "ip %s "
			    "changes the network", ws->w[i]);
			return;
		}
	cls_raise(r, CLS_READ_ONLY, "read_only:ip", "ip only shows");
}

/* 1 if a program path is a system one (/usr/bin/ls is ls). */
static int
cls_system_path(const char *path)
{
	static const char *const dirs[] = { "/bin/", "/usr/bin/", "/sbin/",
	    "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/", NULL };
	size_t	i;

	for (i = 0; dirs[i] != NULL; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0 &&
		    strchr(path + strlen(dirs[i]), '/') == NULL)
			return (1);
	return (0);
}

/* tar's options that run a program or write a file besides the archive. */
static const struct {
	const char	*opts;
	enum cls_risk	 risk;
	const char	*why;
} cls_tar_opts[] = {
	{ "-I --use-compress-program --to-command --rsh-command --rmt-command "
	    "-F --info-script --new-volume-script --checkpoint-action",
	    CLS_UNKNOWN, "runs another program" },
	{ "-g --listed-incremental --index-file --volno-file", CLS_WRITE,
	    "writes a file" },
};

/* tar's short options that take a value, and its long ones. */
#define CLS_TAR_SHORT_ARGS	"bCfFgHIKLNTVX"
static const char cls_tar_longs[] = "list create extract get append update "
    "diff compare delete concatenate catenate test-label file= gzip gunzip "
    "ungzip bzip2 xz lzma lzip lzop zstd compress uncompress "
    "auto-compress verbose wildcards no-wildcards wildcards-match-slash "
    "no-wildcards-match-slash exclude= exclude-from= exclude-vcs "
    "exclude-caches anchored no-anchored ignore-case no-ignore-case "
    "numeric-owner full-time utc quoting-style= show-transformed-names "
    "force-local ignore-zeros occurrence? strip-components= directory= "
    "null no-null to-stdout blocking-factor= record-size= totals? label= "
    "checkpoint? warning= no-recursion recursion block-number "
    "files-from= transform= xform= format= owner= group= mode= mtime= "
    "sort= keep-old-files skip-old-files overwrite "
    "keep-newer-files no-same-owner no-same-permissions preserve-permissions "
    "same-owner touch unlink-first recursive-unlink remove-files "
    "one-file-system dereference hard-dereference absolute-names "
    "use-compress-program= to-command= rsh-command= rmt-command= "
    "info-script= new-volume-script= checkpoint-action= listed-incremental= "
    "index-file= volno-file= help version";

/* Raises r for one tar option (short "-x" or long "--name"). */
static void
cls_tar_opt(const char *opt, size_t n, struct cls_res *r)
{
	size_t	i;

	for (i = 0; i < sizeof cls_tar_opts / sizeof cls_tar_opts[0]; i++)
		if (cls_listed(cls_tar_opts[i].opts, opt, n))
			cls_raise(r, cls_tar_opts[i].risk, cls_tar_opts[i].risk ==
			    CLS_WRITE ? "write:option" : "unknown:option", "tar "
			    "%.*s %s", (int)n, opt, cls_tar_opts[i].why);
}

/*
 * The letters of a short cluster: old style "tvf" (each letter that takes
 * a value takes the next word) or "-tvf" (the first such letter takes
 * the rest of the cluster, or the next word when it is last). The mode
 * goes to *mode, specials raise r. How many later words are values, or
 * -1 for an unknown letter.
 */
static int
cls_tar_cluster(const char *c, int dash, char *mode, struct cls_res *r)
{
	char	opt[3] = "-?";
	int	vals = 0;

	for (; *c != '\0'; c++) {
		if (strchr("ctxruAd", *c) != NULL)
			*mode = *mode == '\0' || *mode == *c ? *c : '?';
		else if (strchr("vzjJaZpPhkmOiSWwlMGnB" CLS_TAR_SHORT_ARGS,
		    *c) == NULL)
			return (-1);
		opt[1] = *c;
		cls_tar_opt(opt, 2, r);
		if (strchr(CLS_TAR_SHORT_ARGS, *c) == NULL)
			continue;
		if (dash)
			return (c[1] == '\0' ? 1 : 0);
		vals++;
	}
	return (vals);
}

/* tar: listing is read-only; other modes write; some options run things. */
static void
cls_tar(const struct cls_words *ws, struct cls_res *r)
{
	const char	*w, *name;
	char		 mode = '\0', opt[64];
	size_t		 i, len;
	int		 vals = 0;

	for (i = 1; i < ws->n; i++) {
		w = ws->w[i];
		if (strcmp(w, "--") == 0)
			break;
		if (w[0] == '-' && w[1] == '-') {
			if ((vals = cls_long(cls_tar_longs, w + 2, &name,
			    &len)) < 0)
				goto unknown;
			snprintf(opt, sizeof opt, "--%.*s", (int)len, name);
			cls_tar_opt(opt, strlen(opt), r);
			if (cls_in(opt + 2, (const char *const[]){ "list",
			    "create", "extract", "get", "append", "update",
			    "diff", "compare", "delete", "concatenate",
			    "catenate", NULL }))
				mode = mode == '\0' || mode == opt[2] ? opt[2] :
				    '?';
			i += (size_t)vals;
		} else if ((w[0] == '-' && w[1] != '\0') || i == 1) {
			if ((vals = cls_tar_cluster(w + (w[0] == '-'),
			    w[0] == '-', &mode, r)) < 0)
				goto unknown;
			i += (size_t)vals;		/* values follow */
		}
	}
	if (!cls_has_opt(ws, "--force-local") && cls_rsync_remote(ws)) {
		cls_raise(r, CLS_UNKNOWN, "unknown:option", "tar reaches an "
		    "archive on another host (HOST:FILE) through rsh");
		return;
	}
	if (mode == 'l')
		mode = 't';
	if (mode == 't')
		cls_raise(r, CLS_READ_ONLY, "read_only:tar", "tar -t only lists");
	else
		cls_raise(r, CLS_WRITE, "write:tar", "tar writes files or an "
		    "archive");
	return;
unknown:
	cls_raise(r, CLS_UNKNOWN, "unknown:option", "tar option %.40s is not "
	    "one execq knows", w);
}

/* Operands of a tool with an option table (option values skipped). */
static size_t
cls_tool_operands(const struct cls_tool *t, const struct cls_words *ws)
{
	const char	*spec, *name;
	size_t		 i, n = 0, len;
	int		 vals;

	if (t == NULL)
		return (cls_operands(ws));
	for (i = 1; i < ws->n; i++) {
		if (!cls_is_opt(ws->w[i]))
			n++;
		else if (ws->w[i][1] == '-') {
			vals = cls_long(t->longs, ws->w[i] + 2, &name, &len);
			i += vals > 0 ? (size_t)vals : 0;
		} else if ((spec = strchr(t->shorts, ws->w[i][1])) != NULL &&
		    spec[1] == ':' && ws->w[i][2] == '\0')
			i++;
	}
	return (n);
}

/* tee: read-only when it writes no file but devices. */
static void
cls_tee(const struct cls_words *ws, struct cls_res *r)
{
	size_t	i;

	for (i = 1; i < ws->n; i++) {
		if (strcmp(ws->w[i], "--") == 0) {
			i++;	/* everything after is a file */
			break;
		}
		if (!cls_is_opt(ws->w[i]) && !cls_harmless_device(ws->w[i]))
			break;
	}
	while (i < ws->n && cls_harmless_device(ws->w[i]))
		i++;
	if (i < ws->n)
		cls_raise(r, CLS_WRITE, "write:tee", "tee writes %s", ws->w[i]);
}

/* A read-only tool: its options checked, then what it writes. */
static void
cls_reader(const struct cls_words *ws, const char *name, struct cls_res *r)
{
	const struct cls_tool	*t = cls_tool_find(name);
	char			 rule[CLS_RULE_MAX];

	if (t != NULL && cls_options_check(t, ws, r))
		return;
	if ((strcmp(name, "uniq") == 0 || strcmp(name, "xxd") == 0) &&
	    cls_tool_operands(t, ws) > 1)
		cls_raise(r, CLS_WRITE, "write:output-file", "%s writes its "
		    "second operand", name);
	else if (strcmp(name, "tee") == 0)
		cls_tee(ws, r);
	snprintf(rule, sizeof rule, "read_only:%s", name);
	cls_raise(r, CLS_READ_ONLY, rule, "%s only reads or prints", name);
}

/* The command itself, wrappers gone: blocked, handlers, lists. */
void
cls_command(struct cls_ctx *ctx, const struct cls_words *ws,
    struct cls_res *r)
{
	const char	*name = cls_base(ws->w[0]);

	if (cls_blocked(ws, name, r))
		return;
	if (strchr(ws->w[0], '/') != NULL && !cls_system_path(ws->w[0])) {
		cls_raise(r, CLS_UNKNOWN, "unknown:program", "%s is a program "
		    "that is not classified", ws->w[0]);
		return;
	}
	if (strcmp(name, "git") == 0)
		cls_git(ctx, ws, r);
	else if (strcmp(name, "find") == 0)
		cls_find(ctx, ws, r);
	else if (strcmp(name, "sed") == 0)
		cls_sed(ws, r);
	else if (cls_in(name, (const char *const[]){ "awk", "gawk", "mawk",
	    "nawk", NULL }))
		cls_awk(ws, name, r);
	else if (strcmp(name, "tar") == 0)
		cls_tar(ws, r);
	else if (cls_runs_program(ws, name))
		cls_raise(r, CLS_UNKNOWN, "unknown:option", "an option of %s "
		    "runs another program", name);
	else if (cls_subcommand(ws, name, r))
		;
	else if ((strcmp(name, "date") == 0 && (cls_has_flag(ws, 's',
	    "--set") || cls_has_opt(ws, "--set"))) ||
	    (strcmp(name, "hostname") == 0 && cls_operands(ws) > 0))
		cls_raise(r, CLS_DESTRUCTIVE, "destructive:system", "%s with an "
		    "argument changes the system", name);
	else if (strcmp(name, "ip") == 0)
		cls_ip(ws, r);
	else if (strcmp(name, "date") == 0 || strcmp(name, "hostname") == 0)
		cls_raise(r, CLS_READ_ONLY, "read_only:system", "%s only "
		    "prints", name);
	else if (cls_in(name, cls_read_only))
		cls_reader(ws, name, r);
	else
		cls_known(ws, name, r);
}
