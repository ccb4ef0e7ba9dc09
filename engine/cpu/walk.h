/* walk.h - accept's greedy walk alone (no KV compaction), so the acceptance replay of drafter traces runs the engine's own walk. */
#ifndef DDT_WALK_H
#define DDT_WALK_H

#include <stdint.h>

/* The walk of engine/ops/accept.h over a tree of n nodes (parents first,
 * parent[0] = -1, sibling tokens distinct): from the root, follow the child
 * whose token is target[node] while one exists and the path is shorter than
 * L + 1 nodes. Writes the path's node indices to path[0..len) (path[0] = 0;
 * indices increase along it), the target's token after the last accepted node
 * to *bonus, and returns len (root included, 1..L+1). Cannot fail. */
int accept_walk(const int32_t *parent, const int32_t *token, const int32_t *target, int n, int L,
		int32_t *path, int32_t *bonus);

#endif
