/* accept_cache.c - replays cached by the content hash of the trace (accept_cache.h). */
#include "accept_cache.h"

#include "err.h"
#include "fsx.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CACHE_MAGIC 0x31434341544444ull /* "DDTACC1" */
#define CACHE_VERSION 1

void accept_cache_dir(char *buf, size_t len)
{
	struct paths p;
	paths_init(&p, "default");
	snprintf(buf, len, "%s/build/cache/acceptance", p.home);
}

/* *h with the bytes of path folded in, *size their count. Returns 0 or DDT_EIO. */
static int hash_file(uint64_t *h, long long *size, const char *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	if (fd < 0)
		return DDT_EIO;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		*h = fsx_hash(*h, buf, (size_t)n);
		*size += n;
	}
	close(fd);
	return n < 0 ? DDT_EIO : 0;
}

/* The key of (trace bytes, options, the running program's bytes: a
 * rebuilt ddt replays again). Returns 0 or an error (then no cache). */
static int cache_key(uint64_t *key, const char *path, const struct acceptance_opts *o)
{
	uint64_t h = FSX_HASH_SEED;
	long long size = 0, exe_size = 0;
	if (hash_file(&h, &exe_size, "/proc/self/exe") || hash_file(&h, &size, path))
		return DDT_EIO;
	uint64_t layout[4] = {CACHE_VERSION, sizeof(struct acceptance_result),
			      sizeof(struct acceptance_budget), (uint64_t)size};
	h = fsx_hash(h, layout, sizeof layout);
	h = fsx_hash(h, &o->nbudgets, sizeof o->nbudgets);
	h = fsx_hash(h, o->budgets, (size_t)o->nbudgets * sizeof *o->budgets);
	h = fsx_hash(h, &o->block, sizeof o->block);
	h = fsx_hash(h, &o->resamples, sizeof o->resamples);
	h = fsx_hash(h, &o->level, sizeof o->level);
	*key = fsx_hash(h, &o->seed, sizeof o->seed);
	return 0;
}

/* The entry's bytes after the header: the struct, histograms, covariance. */
static uint64_t body_hash(const struct acceptance_result *r)
{
	struct acceptance_result flat;
	memcpy(&flat, r, sizeof flat); /* padding too: the bytes written are the bytes hashed */
	flat.trace = NULL;
	flat.cov = NULL;
	for (int j = 0; j < ACCEPTANCE_MAX_BUDGETS; j++)
		flat.b[j].hist = NULL;
	uint64_t h = fsx_hash(FSX_HASH_SEED, &flat, sizeof flat);
	for (int j = 0; j < r->nb; j++)
		h = fsx_hash(h, r->b[j].hist, ((size_t)r->block + 1) * sizeof *r->b[j].hist);
	return fsx_hash(h, r->cov, (size_t)r->nb * r->nb * sizeof *r->cov);
}

static int cache_write(const struct acceptance_result *r, const char *file)
{
	struct fsx_file f;
	struct acceptance_result flat;
	uint64_t head[2] = {CACHE_MAGIC, body_hash(r)};
	memcpy(&flat, r, sizeof flat);
	flat.trace = NULL;
	flat.cov = NULL;
	for (int j = 0; j < ACCEPTANCE_MAX_BUDGETS; j++)
		flat.b[j].hist = NULL;
	if (fsx_open(&f, file))
		return DDT_EIO;
	fwrite(head, sizeof head, 1, f.fp);
	fwrite(&flat, sizeof flat, 1, f.fp);
	for (int j = 0; j < r->nb; j++)
		fwrite(r->b[j].hist, sizeof *r->b[j].hist, (size_t)r->block + 1, f.fp);
	fwrite(r->cov, sizeof *r->cov, (size_t)r->nb * r->nb, f.fp);
	return fsx_commit(&f);
}

/* Reads an entry into r (its trace named path). Returns 0, or -1 when there
 * is none or it is not whole (r freed). */
static int cache_read(struct acceptance_result *r, const char *file, const char *path)
{
	uint64_t head[2];
	FILE *fp = fopen(file, "rb");
	int ok = fp && fread(head, sizeof head, 1, fp) == 1 && head[0] == CACHE_MAGIC &&
		 fread(r, sizeof *r, 1, fp) == 1 && r->nb >= 1 && r->nb <= ACCEPTANCE_MAX_BUDGETS &&
		 r->block >= 2 && r->block <= 256;
	if (ok) {
		r->trace = NULL;
		r->cov = NULL;
		for (int j = 0; j < ACCEPTANCE_MAX_BUDGETS; j++)
			r->b[j].hist = NULL;
		for (int j = 0; ok && j < r->nb; j++)
			ok = (r->b[j].hist = malloc(((size_t)r->block + 1) * sizeof *r->b[j].hist)) &&
			     fread(r->b[j].hist, sizeof *r->b[j].hist, (size_t)r->block + 1, fp) ==
				     (size_t)r->block + 1;
		ok = ok && (r->cov = malloc((size_t)r->nb * r->nb * sizeof *r->cov)) &&
		     fread(r->cov, sizeof *r->cov, (size_t)r->nb * r->nb, fp) ==
			     (size_t)r->nb * r->nb &&
		     fgetc(fp) == EOF && body_hash(r) == head[1] && (r->trace = strdup(path));
	} else {
		memset(r, 0, sizeof *r);
	}
	if (fp)
		fclose(fp);
	if (!ok)
		acceptance_free(r);
	return ok ? 0 : -1;
}

int accept_cache_replay(struct acceptance_result *r, const char *path,
			const struct acceptance_opts *o, const char *dir, int *hit)
{
	uint64_t key;
	char file[4096];
	*hit = 0;
	if (!dir || !strcmp(path, "-") || cache_key(&key, path, o))
		return acceptance_replay(r, path, o);
	snprintf(file, sizeof file, "%s/%016llx.bin", dir, (unsigned long long)key);
	if (!cache_read(r, file, path)) {
		*hit = 1;
		return 0;
	}
	int rc = acceptance_replay(r, path, o);
	if (rc)
		return rc;
	if (!fsx_mkdir_p(dir))
		cache_write(r, file); /* a cache that cannot be written costs a replay, no more */
	err_clear();
	return 0;
}
