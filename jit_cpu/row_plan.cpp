#include "jit_cpu/row_plan.h"

#include "fusion/lower_windows.h"

#include <algorithm>
#include <cstdlib>

namespace braze::jit {

int64_t RowPlan::rows() const { return numel(outer); }

int64_t RowPlan::elements() const {
  // O C R, the domain's own elements (so they fit int64); tiles times
  // column_tile counts the last tile's missing columns too, up to twice
  // the domain: UBSan's overflow for a sum down [1.1e15, 8193] of int8.
  if (columns) return row_length == 0 ? 0 : units() / outer[tile_axis()] * row_length * reduce_length;
  if (pair_blocks > 0) return row_length * row_length;
  if (row_tile > 0) return rows() / outer.back() * row_length;
  return rows() * row_length;
}

namespace {

bool is_reduced(const KernelSpec& spec, size_t axis) {
  return std::binary_search(spec.reduce_axes.begin(), spec.reduce_axes.end(), static_cast<int64_t>(axis));
}

// Note [Split columns]: whether a column plan's kernel is one pass of float
// sums, products, maxima and minima, nothing reading their totals but the
// per-unit results.
bool one_pass_of_float_reductions(const KernelSpec& spec) {
  auto reduction = [](const KernelOp& op) { return is_reduce(op.op) && !op.attr.ints.empty(); };
  std::vector<bool> after_total(spec.body.size(), false);  // reads a total
  for (size_t v = 0; v < spec.body.size(); ++v) {
    const KernelOp& op = spec.body[v];
    for (int32_t a : op.args) after_total[v] = after_total[v] || after_total[a];
    if (!reduction(op)) continue;
    bool float_fold = op.op == Op::Sum || op.op == Op::Prod || op.op == Op::Max || op.op == Op::Min;
    if (after_total[v] || !float_fold || !is_float(op.dtype)) return false;
    after_total[v] = true;
  }
  for (const KernelOutput& o : spec.outputs)
    if (o.space == Space::Full && after_total[o.value]) return false;
  return true;
}

// Note [Tile pairs]: whether an element-wise plan over [N, N] reads a
// buffer of 32-bit elements both transposed and straight.
bool reads_transposed_pair(const KernelSpec& spec, const RowPlan& plan) {
  if (plan.reduces || plan.columns || plan.outer.size() != 1 || plan.outer[0] != plan.row_length) return false;
  if (plan.row_length % kPairBlock != 0 || plan.row_length < 2 * kPairBlock) return false;
  // A pair's blocks are walked as groups of rows at 32-bit offsets from
  // the block's start (jit_cpu/gen_tiles.cpp).
  const int64_t limit = int64_t{1} << 31;
  for (const RowPlan::Access& a : plan.inputs)
    if (!a.outer_strides.empty() && std::max(std::abs(a.outer_strides[0]), std::abs(a.inner_stride)) * kPairBlock * 8 >= limit)
      return false;
  if (plan.row_length * kPairBlock * 8 >= limit) return false;
  for (size_t k = 0; k < spec.inputs.size(); ++k)
    if (straight_partner(spec, plan, k) >= 0) return true;
  return false;
}

}  // namespace

int32_t straight_partner(const KernelSpec& spec, const RowPlan& plan, size_t k) {
  auto transposes = [](const RowPlan::Access& t, const RowPlan::Access& u) {
    return t.outer_strides.size() == 1 && u.outer_strides.size() == 1 && t.outer_strides[0] == 1 &&
           t.inner_stride == u.outer_strides[0] && u.inner_stride == 1 && t.offset == u.offset;
  };
  if (spec.inputs[k].kind != KernelInput::Kind::Buffer || itemsize(spec.inputs[k].dtype) != 4) return -1;
  if (masked_inputs(spec)[k]) return -1;  // never staged in tiles (Note [Masked loads on the CPU])
  for (size_t m = 0; m < spec.inputs.size(); ++m) {
    const bool shared = spec.inputs[k].same_buffer_as == static_cast<int32_t>(m) ||
                        spec.inputs[m].same_buffer_as == static_cast<int32_t>(k);
    if (shared && transposes(plan.inputs[k], plan.inputs[m])) return static_cast<int32_t>(m);
  }
  return -1;
}

namespace {

// Note [Reductions in memory order]
// A reduction over every axis (sum(x.T), max of a slice) gives the same
// result whatever order it visits the elements in, as long as nothing
// else the kernel writes depends on that order: no Full output and no
// argmax/argmin, whose index is a position in the domain's order. Such a
// kernel walks its axes in the order of the first strided input's
// memory, largest stride first, so that input's rows are its rows and
// merge where they are contiguous: sum(x.T) of [4096, 4096] read one
// column of x per row of the plan (16 KB apart, a gather per vector),
// 92 ms against NumPy's 2.7.
std::vector<size_t> walk_order(const KernelSpec& spec, std::vector<size_t> axes) {
  if (!std::all_of(axes.begin(), axes.end(), [&](size_t a) { return is_reduced(spec, a); })) return axes;
  for (const KernelOutput& o : spec.outputs)
    if (o.space == Space::Full) return axes;
  for (const KernelOp& op : spec.body)
    if (op.op == Op::ArgMax || op.op == Op::ArgMin) return axes;
  for (const KernelInput& in : spec.inputs) {
    if (in.kind != KernelInput::Kind::Buffer || in.space != Space::Full) continue;
    std::stable_sort(axes.begin(), axes.end(), [&](size_t a, size_t b) {
      return std::abs(in.view.strides[a]) > std::abs(in.view.strides[b]);
    });
    break;
  }
  return axes;
}

// Note [Reductions over nothing]
// A reduction whose reduced axes include one of size 0 ([2, 0, 3] summed
// over every axis, or over axis 1) reads nothing and gives its identity
// at every kept position. Planned like any other it became a column plan
// of no columns (over every axis of [2, 0, 3]: groups [2] down and [0, 3]
// along the row) or of no rows (over axis 1), and the first wrote past
// its output (heap corruption). So such a kernel walks the kept axes, in
// order, as its rows, and one reduced axis of size 0 as the row: a row
// reduction of length 0, which starts each accumulator from its identity
// (gen_reductions.cpp, start_value), runs no vector and stores it. The
// other reduced axes are dropped: nothing is read along any of them.
// (Max, min, argmax and argmin of nothing have no identity: recording
// them is an error, as in NumPy.)
std::vector<size_t> reduction_over_nothing(const KernelSpec& spec, const std::vector<size_t>& axes) {
  const Shape& d = spec.domain;
  auto empty = std::find_if(axes.begin(), axes.end(), [&](size_t a) { return d[a] == 0 && is_reduced(spec, a); });
  if (empty == axes.end()) return axes;
  std::vector<size_t> out;
  for (size_t a : axes)
    if (!is_reduced(spec, a)) out.push_back(a);
  out.push_back(*empty);
  return out;
}

}  // namespace

RowPlan plan_rows(const KernelSpec& spec) {
  const Shape& d = spec.domain;
  auto reduced = [&](size_t axis) { return is_reduced(spec, axis); };
  // Axes of the domain that survive: size > 1, in the order the kernel walks them.
  std::vector<size_t> axes;
  for (size_t a = 0; a < d.size(); ++a)
    if (d[a] != 1) axes.push_back(a);
  axes = reduction_over_nothing(spec, walk_order(spec, std::move(axes)));
  // Groups of adjacent kept axes that merge: same reduced-ness, and every
  // strided input walks them as one axis.
  auto mergeable = [&](size_t a, size_t b) {  // a directly before b among the walked axes
    if (reduced(a) != reduced(b)) return false;
    for (const KernelInput& in : spec.inputs) {
      if (in.kind == KernelInput::Kind::Scalar) continue;
      if (in.space == Space::Reduced && reduced(a)) continue;  // both are size 1 there
      if (in.view.strides[a] != in.view.strides[b] * d[b]) return false;
    }
    return true;
  };
  std::vector<std::vector<size_t>> groups;
  for (size_t k = 0; k < axes.size(); ++k) {
    if (k > 0 && mergeable(axes[k - 1], axes[k])) groups.back().push_back(axes[k]);
    else groups.push_back({axes[k]});
  }
  auto extent = [&](const std::vector<size_t>& g) {
    int64_t n = 1;
    for (size_t a : g) n *= d[a];
    return n;
  };
  RowPlan plan;
  // The reduced groups: the last one (a row reduction), the ones before it
  // (a column reduction, Note [Column reductions]), or both.
  const size_t last = groups.empty() ? 0 : groups.size() - 1;
  std::vector<bool> down(groups.size(), false);  // a reduced group before the row
  for (size_t g = 0; g < groups.size(); ++g) {
    if (!reduced(groups[g][0])) continue;
    if (g == last) plan.reduces = true;
    else down[g] = plan.columns = true;
  }
  // An empty group list is a single element: one row of length 1.
  if (!groups.empty()) plan.row_length = extent(groups.back());
  for (size_t g = 0; g + 1 < groups.size(); ++g) {
    if (down[g]) plan.reduce_extents.push_back(extent(groups[g]));
    else plan.outer.push_back(extent(groups[g]));
  }
  if (plan.columns) {
    plan.reduce_length = numel(plan.reduce_extents);
    // Reduced along the row too, a unit needs every column: one tile.
    plan.column_tile = plan.reduces ? plan.row_length : std::min(plan.row_length, kColumnTile);
    plan.outer.push_back(plan.reduces ? 1 : (plan.row_length + kColumnTile - 1) / kColumnTile);
  }
  auto access = [&](const View& view, Space space) {
    RowPlan::Access acc;
    acc.offset = view.offset;
    // A merged group's stride is its last axis's stride.
    for (size_t g = 0; g + 1 < groups.size(); ++g) {
      if (!down[g]) acc.outer_strides.push_back(view.strides[groups[g].back()]);
      else acc.reduce_strides.push_back(space == Space::Full ? view.strides[groups[g].back()] : 0);
    }
    if (!groups.empty() && !(space == Space::Reduced && plan.reduces))
      acc.inner_stride = view.strides[groups.back().back()];
    if (plan.columns) acc.outer_strides.push_back(acc.inner_stride * kColumnTile);  // the tile axis
    return acc;
  };
  for (const KernelInput& in : spec.inputs)
    plan.inputs.push_back(in.kind == KernelInput::Kind::Scalar ? RowPlan::Access{} : access(in.view, in.space));
  if (reads_transposed_pair(spec, plan)) {  // Note [Tile pairs]
    plan.pair_blocks = plan.row_length / kPairBlock;
    plan.outer = {plan.pair_blocks * (plan.pair_blocks + 1) / 2};
  } else if (!plan.reduces && !plan.columns && plan.row_length > kRowTile) {  // Note [Row tiles]
    plan.row_tile = kRowTile;
    plan.outer.push_back((plan.row_length + kRowTile - 1) / kRowTile);
    for (RowPlan::Access& a : plan.inputs) a.outer_strides.push_back(a.inner_stride * kRowTile);
  }
  if (plan.columns)
    for (const KernelOutput& o : spec.outputs)
      plan.full_outputs.push_back(o.space == Space::Full ? access(View::contiguous(d), Space::Full) : RowPlan::Access{});
  // Note [Split columns]
  const int64_t R = plan.reduce_length;
  if (plan.columns && !plan.reduces && plan.reduce_extents.size() == 1 && plan.rows() < kColumnParts &&
      R >= 2 * kMinPartRows && one_pass_of_float_reductions(spec)) {
    int64_t per = (R + kColumnParts - 1) / kColumnParts;
    plan.part_rows = (std::max(per, kMinPartRows) + kColumnBlock - 1) / kColumnBlock * kColumnBlock;
    plan.column_parts = (R + plan.part_rows - 1) / plan.part_rows;
    plan.outer.push_back(plan.column_parts);
    auto part_stride = [&](RowPlan::Access& a) {
      a.outer_strides.push_back(a.reduce_strides.empty() ? 0 : a.reduce_strides[0] * plan.part_rows);
    };
    for (RowPlan::Access& a : plan.inputs) part_stride(a);
    for (RowPlan::Access& a : plan.full_outputs) part_stride(a);
  }
  return plan;
}

}  // namespace braze::jit
