/*
 * The tool definitions an agent's model is given (exec and process):
 * cli/tools.json, built into the client as bytes, and its shapes for MCP,
 * OpenAI and Anthropic. Uses nothing of cli/ (the unit test links it
 * alone).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "logs/xmalloc.h"

/*
 * cli/tools.json as bytes: the Makefile writes them ("0x7b, 0x0a, ...")
 * to $(BUILD)/gen/cli/tools_json.inc with od, and adds $(BUILD)/gen to
 * this file's include path. The NUL ends it.
 */
static const unsigned char execq_tools_src[] = {
#include "cli/tools_json.inc"
	0x00
};

#define EXECQ_TOOLS_DIALECT	"https://json-schema.org/draft/2020-12/schema"

static const struct {
	const char			*name;
	enum execq_tools_format		 fmt;
} execq_tools_formats[] = {
	{ "mcp", EXECQ_TOOLS_MCP },
	{ "openai", EXECQ_TOOLS_OPENAI },
	{ "anthropic", EXECQ_TOOLS_ANTHROPIC },
};

int
execq_tools_format_parse(const char *s, enum execq_tools_format *fmt)
{
	size_t	i;

	for (i = 0; i < sizeof execq_tools_formats /
	    sizeof execq_tools_formats[0]; i++) {
		if (strcmp(s, execq_tools_formats[i].name) == 0) {
			*fmt = execq_tools_formats[i].fmt;
			return (0);
		}
	}
	return (-1);
}

json_t *
execq_tools_source(char **cause)
{
	json_error_t	 jerr;
	json_t		*root;

	*cause = NULL;
	root = json_loadb((const char *)execq_tools_src,
	    sizeof execq_tools_src - 1, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		xasprintf(cause, "cli/tools.json, line %d: %s", jerr.line,
		    jerr.text);
	else if (!json_is_array(json_object_get(root, "tools"))) {
		xasprintf(cause, "cli/tools.json has no array \"tools\"");
		json_decref(root);
		root = NULL;
	}
	return (root);
}

/*
 * A copy of v without its "$comment" members, at every depth (the
 * definitions name no property "$comment"). A new reference.
 */
static json_t *
execq_tools_strip(json_t *v)
{
	json_t		*out, *m;
	const char	*k;
	size_t		 i;

	if (json_is_object(v)) {
		out = json_object();
		json_object_foreach(v, k, m) {
			if (strcmp(k, "$comment") != 0)
				json_object_set_new(out, k,
				    execq_tools_strip(m));
		}
		return (out);
	}
	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, m)
			json_array_append_new(out, execq_tools_strip(m));
		return (out);
	}
	return (json_incref(v));	/* scalars are shared, never changed */
}

/*
 * A description: a string as it is, or an array of lines joined with
 * newlines. A new reference, or NULL if it is neither.
 */
static json_t *
execq_tools_join(const json_t *d)
{
	const json_t	*line;
	json_t		*out;
	size_t		 i, len = 0, n;
	char		*buf;

	if (json_is_string(d))
		return (json_stringn(json_string_value(d),
		    json_string_length(d)));
	if (!json_is_array(d) || json_array_size(d) == 0)
		return (NULL);
	json_array_foreach(d, i, line) {
		if (!json_is_string(line))
			return (NULL);
		len += json_string_length(line) + 1;
	}
	buf = xmalloc(len);
	len = 0;
	json_array_foreach(d, i, line) {
		if (i > 0)
			buf[len++] = '\n';
		n = json_string_length(line);
		memcpy(buf + len, json_string_value(line), n);
		len += n;
	}
	out = json_stringn(buf, len);
	free(buf);
	return (out);
}

/* One tool in fmt's shape, from its source t: a new reference, or NULL. */
static json_t *
execq_tools_one(const json_t *t, enum execq_tools_format fmt)
{
	json_t	*name, *desc, *schema, *in;

	name = json_object_get(t, "name");
	in = json_object_get(t, "inputSchema");
	if (!json_is_string(name) || !json_is_object(in) ||
	    (desc = execq_tools_join(json_object_get(t, "description"))) ==
	    NULL)
		return (NULL);
	schema = execq_tools_strip(in);
	switch (fmt) {
	case EXECQ_TOOLS_MCP:
		/* MCP takes 2020-12 and may say so; the others, no $schema. */
		in = schema;
		schema = json_pack("{s:s}", "$schema", EXECQ_TOOLS_DIALECT);
		json_object_update(schema, in);
		json_decref(in);
		return (json_pack("{s:O, s:o, s:o}", "name", name,
		    "description", desc, "inputSchema", schema));
	case EXECQ_TOOLS_OPENAI:
		return (json_pack("{s:s, s:{s:O, s:o, s:o}}", "type",
		    "function", "function", "name", name, "description", desc,
		    "parameters", schema));
	case EXECQ_TOOLS_ANTHROPIC:
		return (json_pack("{s:O, s:o, s:o}", "name", name,
		    "description", desc, "input_schema", schema));
	}
	json_decref(schema);
	json_decref(desc);
	return (NULL);
}

json_t *
execq_tools_json(enum execq_tools_format fmt, char **cause)
{
	json_t		*src, *tools, *t, *one;
	size_t		 i;

	if ((src = execq_tools_source(cause)) == NULL)
		return (NULL);
	tools = json_array();
	json_array_foreach(json_object_get(src, "tools"), i, t) {
		if ((one = execq_tools_one(t, fmt)) == NULL) {
			xasprintf(cause, "cli/tools.json: tool %zu needs a "
			    "name, a description and an inputSchema", i);
			json_decref(tools);
			json_decref(src);
			return (NULL);
		}
		json_array_append_new(tools, one);
	}
	json_decref(src);
	if (fmt == EXECQ_TOOLS_MCP)	/* as tools/list answers */
		return (json_pack("{s:o}", "tools", tools));
	return (tools);
}

char *
execq_tools_text(enum execq_tools_format fmt, size_t *len, char **cause)
{
	json_t	*root;
	char	*s, *text;

	if ((root = execq_tools_json(fmt, cause)) == NULL)
		return (NULL);
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (s == NULL) {
		xasprintf(cause, "the tool definitions cannot be written as "
		    "JSON");
		return (NULL);
	}
	xasprintf(&text, "%s\n", s);
	free(s);
	*len = strlen(text);
	return (text);
}

int
execq_tools_print(FILE *f, enum execq_tools_format fmt, char **cause)
{
	char	*text;
	size_t	 len;
	int	 rc = 0;

	if ((text = execq_tools_text(fmt, &len, cause)) == NULL)
		return (-1);
	if (fwrite(text, 1, len, f) != len || fflush(f) == EOF) {
		xasprintf(cause, "write: %s", strerror(errno));
		rc = -1;
	}
	free(text);
	return (rc);
}
