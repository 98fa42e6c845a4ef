// The loop order of a kernel's domain, chosen once from the memory its
// inputs read, below every code generator.
#pragma once

#include "fusion/kernel_spec.h"

namespace braze {

// Note [Loops in memory order]
// A group's domain comes in the axis order of the graph, which for a
// reduction of a permuted view (x.T.sum(axis=0)) is the order of the view,
// not of memory: the reduced axis of x.T is x's contiguous one, so a
// generator that reduces along the domain's last axis or down its columns
// walks memory across rows, 25-50x slower than NumPy. order_loops permutes
// the domain so the axes run from the largest stride to the smallest, as
// far as two rules allow, each kept so that no result changes by a bit:
//   - the kept axes stay in their order, and so do the reduced axes. A
//     Reduced output is dense over the kept axes, so it keeps its layout;
//     each result combines its elements in the same order as before (the
//     reduced axes' odometer is unchanged), so sums round alike and
//     max/min pick the same signed zero; an argmax counts positions in the
//     same order. Only where the reduced axes sit among the kept ones
//     changes: x.T.sum(axis=0) becomes x.sum(axis=1), a row reduction, and
//     x.T.sum(axis=1) becomes x.sum(axis=0), a column reduction of
//     contiguous rows (Note [Column reductions] in jit_cpu/row_plan.h);
//   - a spec with a Full output (dense over the whole domain) keeps its
//     order: moving an axis would move the output's elements.
// The order is a merge of the two sequences, taking at each step the head
// whose axis comes first in memory (memory_keys below, over the buffers
// read per element; ties keep the graph's order). Every view in the spec
// (inputs, Reduced inputs, aranges) and every reduction's axes move with
// the domain, and the kernel key is computed after, so x.T.sum(axis=0) and
// x.sum(axis=1) share one kernel.
//
// The code generators go one step further (Combine::AnyOrder): they also
// sort the reduced axes by stride, so x.T.sum(axis=(0, 2)) of [A, B, C]
// walks x's rows, not its columns. That changes the order in which a
// result's elements combine, which a generated kernel may do (its sums
// already run in several accumulators and blocks: Note [Blocked sums]),
// but the spec, which the spec interpreter runs bit for bit like the
// reference, may not. An argmax over several axes counts positions in the
// spec's order, so its reduced axes stay.
enum class Combine { InSpecOrder, AnyOrder };
void order_loops(KernelSpec& spec, Combine combine = Combine::InSpecOrder);

// What "memory's order" means, for order_loops and Note [Reductions in
// memory order] alike: per axis of a domain read through `views` (with
// their element sizes), a key that sorts the outer axes first. The reads
// are weighed by how much memory they span: the key is the step in bytes
// of the largest (a mean read back over x's rows must not order the loops
// over x), then the largest step of any.
struct MemoryRead {
  const View* view;
  int64_t itemsize;
};
using AxisKey = std::pair<int64_t, int64_t>;
std::vector<AxisKey> memory_keys(const std::vector<MemoryRead>& reads, size_t rank);

}  // namespace braze
