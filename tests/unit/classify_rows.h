/*
 * The table runner the classify tests share: each row is a command, the
 * risk it must get, the rule that must decide it (a prefix), and the
 * shell that reads it (0: not known, both readings).
 */

#ifndef EXECQ_TEST_CLASSIFY_ROWS_H
#define EXECQ_TEST_CLASSIFY_ROWS_H

struct row {
	const char	*src;
	enum cls_risk	 risk;
	const char	*rule;		/* prefix of the verdict's rule */
	enum cls_shell	 shell;
};

/* Classifies every row from cwd (NULL: none); fails on a wrong one. */
static void
classify_rows(const struct row *rows, size_t n, const char *cwd,
    const char *name)
{
	struct cls_policy	 p;
	struct cls_verdict	 v;
	size_t			 i, bad = 0;

	for (i = 0; i < n; i++) {
		memset(&p, 0, sizeof p);
		p.shell = rows[i].shell;
		cls_classify(&p, rows[i].src, strlen(rows[i].src), cwd, &v);
		if (v.risk != rows[i].risk || v.rule == NULL ||
		    strncmp(v.rule, rows[i].rule, strlen(rows[i].rule)) != 0) {
			print_error("row %zu (shell %d): %s\n  want %s %s, got "
			    "%s %s (%s)\n", i, rows[i].shell, rows[i].src,
			    cls_risk_name(rows[i].risk), rows[i].rule,
			    cls_risk_name(v.risk), v.rule, v.reason);
			bad++;
		}
		cls_verdict_release(&v);
	}
	print_message("%s: %zu rows\n", name, n);
	assert_int_equal(bad, 0);
}

#endif
