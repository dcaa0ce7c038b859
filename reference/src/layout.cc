// Sizes, blocks and storage layouts (SPEC §4, §6, §7), all overflow-checked.
#include <limits>
#include <string>

#include "qconform/reference.h"

namespace qconform {
namespace {

bool mul_ok(std::size_t a, std::size_t b, std::size_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool add_ok(std::size_t a, std::size_t b, std::size_t& out) { return !__builtin_add_overflow(a, b, &out); }

std::string shape_text(std::span<const std::size_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Error overflow(std::span<const std::size_t> shape, std::string_view what) {
  return Error{ErrorKind::shape_overflow, "shape " + shape_text(shape) + ": " + std::string(what)};
}

}  // namespace

Status make_layout_into(const Scheme& s, std::span<const std::size_t> shape, std::optional<std::size_t> data_len,
                        Layout& l) {
  l = Layout{};
  l.rank = shape.size();
  if (l.rank > kMaxRank) return overflow(shape, "rank " + std::to_string(l.rank) + " exceeds 8");
  l.shape.assign(shape);
  // The true product: a zero extent makes every buffer empty, however large the others are.
  bool empty = false;
  for (std::size_t n : shape) empty = empty || n == 0;
  l.elements = empty ? 0 : 1;
  for (std::size_t n : shape) {
    if (!empty && !mul_ok(l.elements, n, l.elements)) return overflow(shape, "element count overflows size_t");
  }
  std::size_t tmp;
  if (!mul_ok(l.elements, sizeof(float), tmp)) return overflow(shape, "float buffer size overflows size_t");

  const ValueInfo& vi = info(s.value);
  l.bits = vi.bits;
  switch (s.store.kind) {
    case StoreKind::native: l.per_unit = 1; l.unit_bytes = 1; break;
    case StoreKind::packed_u32: l.per_unit = 32 / vi.bits; l.unit_bytes = 4; break;
    case StoreKind::packed_native: l.per_unit = 8 / vi.bits; l.unit_bytes = 1; break;
  }
  const bool block_fits = !s.block || s.block->dims.size() <= l.rank;
  const bool packed = s.store.kind != StoreKind::native;
  const bool dim_fits = !packed || l.rank == 0 || s.store.dim < l.rank;

  // Storage (SPEC §6): each line along the packed axis is padded to whole units on its own.
  l.storage_shape.assign(shape);
  if (l.per_unit == 1) {
    l.storage_units = l.elements;
  } else if (l.rank == 0) {
    l.storage_units = 1;
  } else if (dim_fits) {
    l.packed_axis = l.rank - 1 - static_cast<std::size_t>(s.store.dim);
    const std::size_t n = shape[l.packed_axis];
    l.storage_shape[l.packed_axis] = n / l.per_unit + (n % l.per_unit != 0);
    l.storage_units = empty ? 0 : 1;
    for (std::size_t n_i : l.storage_shape) {
      if (empty) break;
      if (!mul_ok(l.storage_units, n_i, l.storage_units)) return overflow(shape, "storage size overflows size_t");
    }
  }
  if (!mul_ok(l.storage_units, l.unit_bytes, l.storage_bytes)) return overflow(shape, "storage bytes overflow size_t");

  // Scale grid (SPEC §4): rank-relative block, partial blocks take a scale.
  if (s.block && block_fits) {
    l.block.assign(l.rank, 1);
    const std::size_t off = l.rank - s.block->dims.size();
    for (std::size_t i = 0; i < s.block->dims.size(); ++i) l.block[off + i] = s.block->dims[i];
    l.grid.resize(l.rank);
    l.scale_count = 1;
    for (std::size_t i = 0; i < l.rank; ++i) {
      const std::size_t b = l.block[i] == 0 ? 1 : l.block[i];
      l.grid[i] = shape[i] / b + (shape[i] % b != 0);
      l.scale_count *= l.grid[i];  // <= elements, cannot overflow
    }
  } else {
    l.scale_count = 1;
  }
  if (!mul_ok(l.scale_count, scale_bytes(s.scale_dtype()), l.scale_bytes) ||
      !mul_ok(l.scale_count, sizeof(float), tmp)) {
    return overflow(shape, "scale buffer size overflows size_t");
  }
  l.global_bytes = s.two_level() ? 4 : 0;
  if (!add_ok(l.storage_bytes, l.scale_bytes, l.total_bytes) || !add_ok(l.total_bytes, l.global_bytes, l.total_bytes)) {
    return overflow(shape, "serialized size overflows size_t");
  }

  if (data_len && *data_len != l.elements) {
    return Error{ErrorKind::shape_mismatch, std::to_string(*data_len) + " values for shape " + shape_text(shape) +
                                                " of " + std::to_string(l.elements) + " elements"};
  }
  if (!block_fits) {
    return Error{ErrorKind::block_rank_exceeds_tensor, "block of " + std::to_string(s.block->dims.size()) +
                                                           " dims on a tensor of rank " + std::to_string(l.rank)};
  }
  if (!dim_fits) {
    return Error{ErrorKind::packing_dim_out_of_range, "packed dimension " + std::to_string(s.store.dim) +
                                                          " on a tensor of rank " + std::to_string(l.rank)};
  }
  return {};
}

Result<Layout> make_layout(const Scheme& s, std::span<const std::size_t> shape,
                           std::optional<std::size_t> data_len) {
  Layout l;
  if (Status st = make_layout_into(s, shape, data_len, l); !st.ok()) return st.error();
  return l;
}

std::size_t block_of(const Layout& l, std::size_t index) noexcept {
  if (l.grid.empty()) return 0;
  std::size_t block = 0;
  std::size_t stride = 1;
  // Peel coordinates from the innermost axis; a block is a rectangle, not a run of storage.
  for (std::size_t d = l.rank; d-- > 0;) {
    if (l.shape[d] == 0) return 0;
    const std::size_t c = index % l.shape[d];
    index /= l.shape[d];
    block += c / l.block[d] * stride;
    stride *= l.grid[d];
  }
  return block;
}

}  // namespace qconform
