// The fusion pass pipeline: each pass takes a graph and returns a graph.
#pragma once

#include <functional>
#include <span>
#include <string_view>

#include "graph/graph.h"

namespace braze {

// Note [Views sink to the leaves]
// A view of an element-wise result is the element-wise op applied to views
// of its inputs: (x * 2).T == x.T * 2. push_views rewrites every chain of
// movement ops down through element-wise ops until it sits on a leaf (an
// input, a constant, an arange) or on a node that ends an index space (a
// reduction, a library call, a copy). After it, consumers in one kernel
// share one index space and every input is read through its own baked
// strides, so a transposed, sliced or broadcast input costs no copy. An
// element-wise node seen through two different views is computed twice,
// once per view: cheaper than writing it out and reading it back.
// Note [Padding sinks under a mask]: a pad (Note [Windows]) sinks too, but
// f(0) is not 0 for most f (exp(pad(x)) has ones where pad(exp(x)) has
// zeros): where the moves pad, the element-wise result is selected back to
// zero outside the window, by a comparison of the index (aranges, fused
// like any other), so pad(exp(x)) is one kernel whose loads of x are
// masked, as long as the pad at most doubles the elements computed
// (pads_little: a lazy concatenation's parts are computed once each).
// Note [Recomputing under views is bounded]: a node read through
// several views is computed once per view only while that is cheap (at
// most kMaxRecomputed element-wise ops in its tree): a stencil's step,
// u' = u + a * (u[:-2] + u[2:] - 2u), reads u through three views, so
// twenty lazy steps pushed every view through every earlier step, 3^20
// trees (six steps of a 2-D one made 356 kernels); past the bound the node
// is computed once and its views read it. Four exceptions, where the views
// stay where they are:
//   - that one;
//   - a broadcast of a value computed from a reduction (a row statistic
//     such as rsqrt(var + eps)), so the statistic is computed once per row;
//     the partition reads it back over the row;
//   - a view of a library call's post-op (Note [Library epilogues]): in
//     heads(x @ w + b) the bias add stays in the matmul's layout, where the
//     library applies it as it writes, instead of becoming a kernel that
//     reads the matmul through the heads view;
//   - a view read by a library call, which reads any strides (or gets a
//     copy: copy_unread_operands): the element-wise result is computed once
//     even where another reader needs it as it is. A backward pass reads
//     each activation so: h feeds the next matmul and, transposed, the
//     matmul of that layer's weight gradient (h^T g); pushed, the view made
//     a second kernel recompute h in the transposed layout.
Graph push_views(const Graph& g);

// Note [Reductions in memory order]
// After push_views, a reduction of a permuted view reads its leaves
// through the permutation: x.transpose(1, 2, 0).sum(axis=0) of a
// contiguous [A, B, C] x reduces over [B, C, A] with strides [C, 1, B*C].
// Its result is dense over the kept axes in that order ([C, A]), which is
// not the order memory has them in ([A, C]), so no loop order can both
// read x along its rows and write the result densely: the kernel walked
// memory 32 KB at a time, 20x slower than NumPy. The reduction is
// rewritten to run over the kept axes in memory order (of what its
// element-wise tree reads, weighed by memory_keys in fusion/loop_order.h)
// and its result viewed back through the
// inverse permutation: r = permute(reduce(permute(e, q), q^-1(axes)),
// q^-1), where permute(e, q) rebuilds e's element-wise nodes over
// permuted operands (so the permutation meets the leaves' own and they
// cancel) and views anything else, a library call's post-op included,
// through q. Only the kept axes longer than 1 move, among themselves; the
// reduced ones keep their places and their order, so every result
// combines its elements in the same order as before, bit for bit. The
// permuted result is small (one value per row), and its readers read it
// through the view; an output gets its dense Copy. An element-wise node
// over such results (and broadcast scalars) only is computed in their
// order and viewed back in turn, so var's mean (sum / n) stays in
// memory's order for the second reduction, x - mean, to read. The reduced axes' place
// among the kept ones is the spec's loop order (Note [Loops in memory
// order], fusion/loop_order.h).
Graph reduce_in_memory_order(const Graph& g);

// Note [Split reductions]
// A reduction with few results has little parallel work for a target that
// gives each result one block (a row in memory) or one thread (a column):
// on a GPU, x.sum() of 64M floats ran as one block on one of 132 SMs, and
// X.sum(axis=0) of [8192, 8192] as 131072 threads with 2 MB of loads in
// flight, a third of the bandwidth. Such a reduction becomes two: one
// reduced axis of extent n is viewed as [parts, n / parts], the first
// reduction keeps `parts` partial results per result, and the second
// combines them (the same op: sum of sums, max of maxes). The view is a
// reshape that sinks to the leaves (push_views), so the first kernel reads
// memory as the one kernel did; the partial results are small (parts per
// result) and the planner gives them arena space like any intermediate.
// A target asks for it through its rules (ReductionSplit in
// fusion/library_rules.h: how many blocks and threads it wants busy, and
// how much work one of them should at least get); the CPU's kernels split
// a long reduction across threads themselves and never ask. Not split:
// argmax/argmin (a position is not a value to combine), float16 sums and
// products (a rounded partial value would differ from the one kernel's
// float accumulator), a reduction whose element-wise input is read by
// anything else (the one kernel computes it once for all its readers;
// split, it would be computed again or written out) or padded (the reshape
// would copy), and an axis with no divisor in range (a prime length stays
// one kernel). The combined order differs from the one kernel's, as the
// GPU's tree of partial values already does (integers wrap the same).
struct ReductionSplit;
Graph split_reductions(const Graph& g, const ReductionSplit& want);

// Note [Integer matmul]
// NumPy multiplies integer matrices in their own type, wrapping: a
// quantized layer is written a.astype(int32) @ w.astype(int32) with int8
// (or uint8) a and int8 w, so that products of 8-bit values add up in
// int32. Run as written, that is an int32 matmul, which no library here
// runs: the reference interpreter did, 100x slower. oneDNN multiplies
// 8-bit operands into int32 directly (VNNI's vpdpbusd), so the pass
// integer_matmul rewrites the matmul of two such casts, each seen through
// any movement ops, into a MatMul of the 8-bit operands whose attr names
// int32, its result's type (graph/infer.cpp). It is exact: every product
// and every partial sum are the same integers, in int32 as in NumPy, as
// long as they fit (a row of K products of at most 128 x 128 always does
// for K < 131072; past that both wrap, the reference interpreter as
// NumPy). oneDNN runs it without post-ops (a bias add is a kernel after
// it) and only where it sums exactly (jit_cpu/dnn.h, sums_int8_exactly:
// with VNNI); uint8 weights, and CPUs without VNNI, get the reference
// interpreter, counted and said as for any call oneDNN refuses. A CUDA
// device refuses this product (cuBLASLt's int8 layouts are issue 28's
// next step). A convolution is the same sum of products: conv2d of two
// such casts (NumPy has none; bz.conv2d takes integers, and sums them as
// its matmul does) becomes a Conv2d of the 8-bit operands, its attr the
// seven of the convolution and int32, which oneDNN runs as u8/s8 x s8 ->
// s32 on the same terms.
Graph integer_matmul(const Graph& g);

// Whether integer_matmul makes the matmul or convolution `n` (its inputs
// ids in `g`) an accumulating product of 8-bit operands.
bool accumulates_bytes(const Graph& g, const Node& n);

// Note [Integer matmul as a sum]
// Every other matmul of integers (int32 @ int32, int16, int64, uint8 @
// uint8, ...) has no library to run on: the reference interpreter ran it,
// 2-10x slower than NumPy's own loops. sum_integer_matmuls writes it as
// NumPy defines it, products summed over k: a[..., m, k, 1] * b[..., 1,
// k, n] in the result's dtype (each product wraps, as NumPy's), summed
// over k in int64 and cast back (the total wraps as NumPy's running sum
// does: both are the exact sum modulo 2^bits). The fusion pass makes it
// one generated reduction kernel on either backend, the products never
// stored: int32 [512, 512] @ [512, 512] takes 9.7 ms where NumPy takes
// 145 and PyTorch 7.2 (bench/library_calls.py). It runs before dense_outputs and push_views, which then treat its
// reshapes and broadcasts as any others, and leaves alone what
// integer_matmul claims.
Graph sum_integer_matmuls(const Graph& g);

// Note [Constant folding] (fusion/fold_constants.cpp): an element-wise op
// on constants becomes the constant the reference would store, where every
// backend computes that same value.
Graph fold_constants(const Graph& g);

// Note [Exact simplification] (fusion/simplify.cpp): rewrites such as
// x * 1 -> x after which the reference gives the same bits for every input,
// infinities and signed zeros included (a NaN may come out as another NaN);
// and shorter chains of movement ops (Note [Movement chains]).
Graph simplify(const Graph& g);

// Note [Dead nodes] (fusion/eliminate_dead.cpp): drops what no output reads.
Graph eliminate_dead(const Graph& g);

// A graph output that is a view or a leaf becomes a Copy of it, so every
// output is a value some kernel writes densely.
Graph dense_outputs(const Graph& g);

// Rebuilds the nodes of `g` that its outputs reach, in topological order:
// `rewrite` gets each with its inputs already renumbered into `out` (and
// its id in `g`) and returns its id there (`out.add(n)` keeps it as it is).
// Every input keeps its number, read or not. What the local passes are
// made of.
using Rewrite = std::function<NodeId(Graph& out, const Node& n, NodeId id)>;
Graph rewrite_nodes(const Graph& g, const Rewrite& rewrite);

// Per node of `g`: whether an output reaches it.
std::vector<bool> live_nodes(const Graph& g);
// Per node of `g`: how many times live computed nodes read it, directly or
// through views, or an output returns it.
std::vector<uint32_t> count_readers(const Graph& g);

struct PassEntry {
  std::string_view name;
  Graph (*run)(const Graph&);
};

// The passes in the order run_pipeline runs them (kPipeline, in
// fusion/passes.cpp, where the order is explained).
std::span<const PassEntry> pipeline();

// Runs the pipeline, leaving out the passes named in `skip` (tests compare
// a graph with and without the rewriting passes). Every pass keeps the
// inputs and the outputs' number, dtypes and shapes; that is checked
// after each one.
Graph run_pipeline(Graph g, std::span<const std::string_view> skip = {});

}  // namespace braze
