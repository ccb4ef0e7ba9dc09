/* project_read.c - projection.yaml's strict reader (the writer and the text
 * form: project_yaml.c), and the normal form both go by. */
#include "project.h"
#include "project_schema.h"

#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- reader */

/* The schema first: a projection of another layout is said once, its
 * keys not read. */
static int read_root(struct projection *p, struct yctx *c, struct ydoc_node *root)
{
	int rc = 0;
	yget_int(c, root, "schema", Y_REQUIRED, &p->schema);
	if (p->schema != PROJECT_SCHEMA) {
		ydiag_add(c->diag, c->file, root->line, root->col,
			  "schema: this ddt reads projection schema %d, got %d", PROJECT_SCHEMA,
			  p->schema);
		return DDT_EINPUT;
	}
	/* an xbacktest without implementation (older records): none */
	p->iback_cover_pct = p->iback_err_pct = p->iback_width_pct = p->iback_bias_pct = NAN;
	for (const struct project_schema_part *s = project_schema_doc; s->s; s++)
		if (yschema_read_fields(c, root, s->s, p))
			rc = DDT_EINPUT;
	if (yget_check_unknown(c, root))
		rc = DDT_EINPUT;
	return rc;
}

/* Parses a projection document already loaded. */
static int project_parse(struct projection *p, struct ydoc *doc, struct ydiag *diag)
{
	struct yctx c = {doc->file, diag, NULL};
	size_t before = diag->n;
	int rc;
	if (!doc->root) {
		ydiag_add(diag, doc->file, 0, 0, "empty projection");
		return DDT_EINPUT;
	}
	if (yget_expect(&c, doc->root, YDOC_MAP, "projection"))
		return DDT_EINPUT;
	if ((rc = read_root(p, &c, doc->root)) != 0)
		return rc;
	return diag->n > before ? DDT_EINPUT : 0;
}

int project_read(struct projection *p, const char *path, struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	int rc;
	memset(p, 0, sizeof *p);
	if ((rc = ydoc_load_file(&doc, path, diag)) == 0)
		rc = project_parse(p, doc, diag);
	ydoc_free(doc);
	return rc;
}

int project_normalize(struct projection *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct projection q;
	struct ydiag diag = {0};
	struct ydoc *doc = NULL;
	int rc;

	if (!fp)
		return err_nomem();
	project_emit(p, fp);
	if (fclose(fp) != 0) {
		free(buf);
		return err_nomem();
	}
	memset(&q, 0, sizeof q);
	rc = ydoc_load_buf(&doc, "projection", buf, len, &diag);
	if (!rc)
		rc = project_parse(&q, doc, &diag);
	if (rc)
		err_set(rc, "projection: %s", diag.n ? diag.msgs[0] : err_msg());
	ydoc_free(doc);
	ydiag_free(&diag);
	free(buf);
	if (rc) {
		project_free(&q);
		return rc;
	}
	project_free(p);
	*p = q;
	return 0;
}
