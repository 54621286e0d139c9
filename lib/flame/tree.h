/* SPDX-License-Identifier: MIT */
/*
 * tree.h: the merged tree of frames inside lib/flame, shared by the tree
 * (flame.c) and the SVG writer (svg.c); not part of flame.h.
 */
#ifndef SP_FLAME_TREE_H
#define SP_FLAME_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "flame.h"

#define NONE UINT32_MAX

struct node {
	uint32_t name;		/* index in names */
	uint32_t parent;
	uint32_t child, last;	/* first and last child, NONE */
	uint32_t next;		/* next sibling, NONE */
	uint32_t depth;		/* the root is 0 */
	double count;		/* cumulative: the frame's width */
	double base;		/* cumulative count before (differential) */
	double delta;		/* change of the samples it holds as leaf */
};

/* The key in the slot: a probe reads one cache line, not the node too. */
struct slot {
	uint32_t parent, name;
	uint32_t node;		/* node index + 1, 0: empty */
};

struct sp_flame {
	unsigned flags;
	struct node *nodes;
	size_t n, cap;
	uint32_t max_depth;
	struct sp_strtab names;
	struct slot *slots;	/* (parent, name) -> node index */
	size_t nslots;		/* a power of two, at most half full */
	char **frames;		/* one stack's frames, for sp_flame_add() */
	size_t frames_cap;
	uint32_t *path;		/* the nodes of the last stack added */
	size_t path_n, path_cap;
};

/* Put every node's children in byte order of their names.  0 or -ENOMEM. */
int sp_flame_sort(struct sp_flame *f);

#endif
