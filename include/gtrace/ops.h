/*
 * gtrace/ops.h - the operator table (PyTorch TensorBoard plugin's operator
 * view, torch_tb_profiler op_tree/op_agg rules; docs/analyses.md "Operators").
 *
 * Per host thread, framework operators (GT_EV_CPU_OP) and ProfilerStep spans
 * nest by containment (start order, longer first on equal starts; an event
 * that partly overlaps the open one is left out).  CUDA runtime calls attach
 * to the operator with the same external id (the first such operator takes
 * all of them); GPU work (kernels, copies, memsets) attaches to its runtime
 * call by correlation id within the rank.  An operator whose only child has
 * its name is merged with it (the child's children and runtime calls become
 * the parent's; the child is not counted), as the autograd profiler does.
 *
 *   host total  = the operator's duration
 *   host self   = host total - children's durations - its runtime calls' durations
 *   device self = duration of the GPU work its own runtime calls launched
 *   device total= device self + children's device total
 *
 * Counted: CPU ops except ProfilerStep#, DataLoader (enumerate(DataLoader)#
 * ...__next__), Optimizer.* and (Distributed)DataParallel.forward.  Tensor
 * Core eligibility: the plugin's operator allow-list, or any child eligible,
 * or a launched kernel whose name is on the plugin's Tensor Core kernel list.
 *
 * Scope: an operator counts when its start lies in [t0, t1) and its lane is
 * of sc->rank; sc->gpu keeps only GPU work on that device.
 */
#ifndef GTRACE_OPS_H
#define GTRACE_OPS_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/report.h"
#include "gtrace/store.h"

/* the plugin's groupings of the operator table: rows per name, per name +
 * input shapes (Kineto "Input Dims"), per name + call stack ("Call stack") */
enum gt_ops_group { GT_OPS_BY_NAME = 0, GT_OPS_BY_SHAPE, GT_OPS_BY_STACK, GT_OPS_GROUP_COUNT };

struct gt_ops_row {
	uint32_t name;            /* string id of the operator name */
	uint32_t key;             /* GT_OPS_BY_SHAPE / GT_OPS_BY_STACK: string id of the row's input
				     shapes / call stack (0 = the calls have none); else 0 */
	int has_stack;            /* some call of the row has a call stack */
	uint64_t calls;
	int64_t host_total_ns, host_self_ns;
	int64_t dev_total_ns, dev_self_ns;
	int64_t tc_self_ns, tc_total_ns;  /* of device self / total: Tensor Core kernels */
	int tc_eligible;
	/* gt_ops_compute_mem only: allocator records of one device (the plugin's
	   memory statistics): self = records whose innermost operator is this
	   one, total = with its descendants'.  increase = sum of bytes (frees
	   negative); alloc = records with bytes > 0, their count and bytes */
	int64_t mem_self_inc, mem_self_alloc_n, mem_self_alloc_bytes;
	int64_t mem_inc, mem_alloc_n, mem_alloc_bytes;
};

struct gt_ops_result {
	struct gt_ops_row *rows;     /* sorted by device self time, then host self time, descending */
	size_t n;
	uint64_t ops_seen;        /* operators counted */
	uint64_t dropped;         /* operators left out: partial overlap on their thread */
	uint64_t mem_records;     /* gt_ops_compute_mem: records of the device seen */
	uint64_t mem_unattributed;/* ... of which no counted operator was open */
};

/* operator table over the scope (NULL = whole trace); 0 or negative errno
 * with a message in err */
int gt_ops_compute(const struct gt_store *s, const struct gt_scope *sc, struct gt_ops_result *out,
		char *err, size_t errlen);
/* the same table with rows per `group` (enum gt_ops_group): one row per
 * (name, input shapes) or (name, call stack), as the plugin's
 * op_agg.aggregate_ops keys them; a CPU op's shapes are string id arg bits
 * 0-31, its call stack string id aux (the Kineto importer keeps them) */
int gt_ops_compute_by(const struct gt_store *s, const struct gt_scope *sc, int group,
		   struct gt_ops_result *out, char *err, size_t errlen);
/* the ops report's grouping rides in gt_scope.flags (stats --group-by) */
#define GT_OPS_SCOPE_GROUP_SHIFT 8
#define GT_OPS_SCOPE_GROUP(flags) ((int)(((flags) >> GT_OPS_SCOPE_GROUP_SHIFT) & 3u))

/* string ids of a CPU op event's input shapes and call stack (0 = none) */
static inline uint32_t gt_ops_event_shape(const struct gt_event *e)
{
	return e->kind == GT_EV_CPU_OP ? (uint32_t)(e->arg & 0xffffffffu) : 0;
}
static inline uint32_t gt_ops_event_stack(const struct gt_event *e)
{
	return e->kind == GT_EV_CPU_OP ? e->aux : 0;
}
void gt_ops_result_done(struct gt_ops_result *r);
/* the calls and memory statistics (no device or Tensor Core times: left 0)
 * of device `mem_device` (a CUDA
 * ordinal or GT_MEM_HOST): each GT_EVF_MEMORY instant of that device goes to
 * the innermost counted operator open at its time on its thread (none: not
 * counted, as the plugin drops it); r->mem_records / mem_unattributed count them */
int gt_ops_compute_mem(const struct gt_store *s, const struct gt_scope *sc, uint32_t mem_device,
		    struct gt_ops_result *out, char *err, size_t errlen);

/* Tensor Core rules of the plugin: an operator name on its allow-list; a
 * kernel name containing one of its patterns */
int gt_ops_tc_op_name(const char *name);
int gt_ops_tc_kernel_name(const char *name);

#endif
