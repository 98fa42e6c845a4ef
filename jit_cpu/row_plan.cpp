#include "jit_cpu/row_plan.h"

#include <algorithm>

namespace braze::jit {

int64_t RowPlan::rows() const { return numel(outer); }

int64_t RowPlan::elements() const {
  if (columns) return rows() * column_tile * reduce_length;
  if (row_tile > 0) return rows() / outer.back() * row_length;
  return rows() * row_length;
}

std::optional<RowPlan> plan_rows(const KernelSpec& spec, std::string& why) {
  const Shape& d = spec.domain;
  auto reduced = [&](size_t axis) {
    return std::binary_search(spec.reduce_axes.begin(), spec.reduce_axes.end(), static_cast<int64_t>(axis));
  };
  // Axes of the domain that survive: size > 1.
  std::vector<size_t> axes;
  for (size_t a = 0; a < d.size(); ++a)
    if (d[a] != 1) axes.push_back(a);
  // Groups of adjacent kept axes that merge: same reduced-ness, and every
  // strided input walks them as one axis.
  auto mergeable = [&](size_t a, size_t b) {  // a directly before b among kept axes
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
  // The reduced groups: none; the last (a row reduction); one before the
  // last (a column reduction); or one before the last and the last (a
  // column reduction whose per-column results are reduced along the row).
  std::vector<size_t> reduced_groups;
  for (size_t g = 0; g < groups.size(); ++g)
    if (reduced(groups[g][0])) reduced_groups.push_back(g);
  const size_t last = groups.empty() ? 0 : groups.size() - 1;
  if (reduced_groups.size() > 2 || (reduced_groups.size() == 2 && reduced_groups[1] != last)) {
    why = "it reduces over three groups of axes, or two that leave the row out";
    return std::nullopt;
  }
  size_t reduced_group = reduced_groups.empty() ? groups.size() : reduced_groups[0];
  plan.reduces = !reduced_groups.empty() && reduced_groups.back() == last;
  plan.columns = !reduced_groups.empty() && reduced_group < last;
  // An empty group list is a single element: one row of length 1.
  if (!groups.empty()) plan.row_length = extent(groups.back());
  for (size_t g = 0; g + 1 < groups.size(); ++g) {
    if (g == reduced_group && plan.columns) continue;
    plan.outer.push_back(extent(groups[g]));
  }
  if (plan.columns) {
    plan.reduce_length = extent(groups[reduced_group]);
    // Reduced along the row too, a unit needs every column: one tile.
    plan.column_tile = plan.reduces ? plan.row_length : std::min(plan.row_length, kColumnTile);
    plan.outer.push_back(plan.reduces ? 1 : (plan.row_length + kColumnTile - 1) / kColumnTile);
  }
  auto access = [&](const View& view, Space space) {
    RowPlan::Access acc;
    acc.offset = view.offset;
    // A merged group's stride is its last axis's stride.
    for (size_t g = 0; g + 1 < groups.size(); ++g) {
      if (g == reduced_group && plan.columns) continue;
      acc.outer_strides.push_back(view.strides[groups[g].back()]);
    }
    if (!groups.empty() && !(space == Space::Reduced && plan.reduces))
      acc.inner_stride = view.strides[groups.back().back()];
    if (plan.columns) {
      acc.outer_strides.push_back(acc.inner_stride * kColumnTile);  // the tile axis
      if (space == Space::Full) acc.reduce_stride = view.strides[groups[reduced_group].back()];
    }
    return acc;
  };
  for (const KernelInput& in : spec.inputs)
    plan.inputs.push_back(in.kind == KernelInput::Kind::Scalar ? RowPlan::Access{} : access(in.view, in.space));
  if (!plan.reduces && !plan.columns && plan.row_length > kRowTile) {  // Note [Row tiles]
    plan.row_tile = kRowTile;
    plan.outer.push_back((plan.row_length + kRowTile - 1) / kRowTile);
    for (RowPlan::Access& a : plan.inputs) a.outer_strides.push_back(a.inner_stride * kRowTile);
  }
  if (plan.columns)
    for (const KernelOutput& o : spec.outputs)
      plan.full_outputs.push_back(o.space == Space::Full ? access(View::contiguous(d), Space::Full) : RowPlan::Access{});
  return plan;
}

}  // namespace braze::jit
