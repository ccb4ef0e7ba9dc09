/* accept_cache.h - a trace's replay kept by the hash of its bytes and the options, so estimate and nightly replay a trace once, not every run. */
#ifndef DDT_ACCEPT_CACHE_H
#define DDT_ACCEPT_CACHE_H

#include "acceptance.h"

/*
 * The key: FNV-1a 64 of the trace's bytes, its size, the options that change
 * the figures (budgets, block, resamples, level, seed), the layout of the
 * result and the running program's own bytes (a rebuilt ddt, whose replay
 * may differ, never reads an older one's entries). The entry: <dir>/<key>.bin, the result's fields, histograms and
 * covariance, then a hash of all that; written atomically (fsx_open,
 * fsx_commit), so a reader sees a whole entry or none. An entry that does
 * not read back whole, or whose hash does not match, is replayed again and
 * rewritten. Standard input is never cached.
 */

/* As acceptance_replay, through the cache in dir (NULL: no cache). *hit
 * says whether the result came from it. A cache that cannot be written is
 * not an error (the result stands). */
int accept_cache_replay(struct acceptance_result *r, const char *path,
			const struct acceptance_opts *o, const char *dir, int *hit);

/* <home>/build/cache/acceptance into buf (len bytes). Cannot fail. */
void accept_cache_dir(char *buf, size_t len);

#endif
