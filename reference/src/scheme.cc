// Scheme text form (SPEC §1) and the static validation of SPEC §3.1.
#include "qconform/scheme.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>

namespace qconform {
namespace {

struct DtypeRow {
  ScaleDtype dtype;
  std::string_view name;
  std::size_t bytes;
};

constexpr DtypeRow kDtypes[] = {
#define QCONFORM_X(id, name, bytes) {ScaleDtype::id, name, bytes},
    QCONFORM_SCALE_DTYPES(QCONFORM_X)
#undef QCONFORM_X
};

Error invalid(std::string_view text, std::string_view why) {
  return Error{ErrorKind::invalid_scheme,
               "invalid scheme '" + std::string(text) + "': " + std::string(why)};
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Decimal digits to an integer, saturating at `cap` (digits are validated by the caller).
std::uint64_t digits_value(std::string_view s, std::uint64_t cap) {
  std::uint64_t v = 0;
  for (char c : s) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (cap - d) / 10) return cap;
    v = v * 10 + d;
  }
  return v;
}

std::optional<ScaleDtype> parse_dtype(std::string_view s) {
  for (const auto& row : kDtypes) {
    if (row.name == s) return row.dtype;
  }
  return std::nullopt;
}

std::optional<Value> parse_value(std::string_view s) {
  for (const auto& row : kValues) {
    if (row.name == s) return row.value;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(ScaleDtype d) noexcept { return kDtypes[static_cast<std::size_t>(d)].name; }

std::size_t scale_bytes(ScaleDtype d) noexcept { return kDtypes[static_cast<std::size_t>(d)].bytes; }

float scale_max(ScaleDtype d) noexcept {
  switch (d) {
    case ScaleDtype::f32: return std::numeric_limits<float>::max();
    case ScaleDtype::f16: return 65504.0f;
    case ScaleDtype::bf16: return 0x1.fep127f;  // bf16 pattern 0x7F7F
    case ScaleDtype::ue8m0: return 0x1p127f;
    case ScaleDtype::ue4m3: return 448.0f;
  }
  return 0.0f;
}

void canonicalize_block(std::vector<std::uint8_t>& dims) {
  std::size_t skip = 0;
  while (skip < dims.size() && dims[skip] == 1) ++skip;
  if (skip == dims.size()) {
    // An all-ones block is one element per block; it keeps one dim so it prints as "1".
    dims.assign(1, 1);
    return;
  }
  dims.erase(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(skip));
}

Scheme nvfp4() {
  Scheme s;
  s.value = Value::e2m1;
  s.store = Store{StoreKind::packed_native, 0};
  s.mode = Mode::symmetric;
  s.block = BlockLevel{{16}, ScaleDtype::ue4m3};
  s.tensor = ScaleDtype::f32;
  return s;
}

Result<Scheme> parse_scheme(std::string_view text) {
  if (text == "nvfp4") return nvfp4();
  Scheme s;
  // The empty text omits every item, so it is the default scheme.
  if (text.empty()) return s;
  std::array<bool, 5> seen{};  // value, store, mode, block, tensor
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return invalid(text, "item '" + std::string(item) + "' is not key=value");
    const std::string_view key = item.substr(0, eq);
    const std::string_view val = item.substr(eq + 1);
    std::size_t slot;
    if (key == "value") {
      slot = 0;
      const auto v = parse_value(val);
      if (!v) return invalid(text, "unknown value '" + std::string(val) + "'");
      s.value = *v;
    } else if (key == "store") {
      slot = 1;
      const std::size_t colon = val.find(':');
      const std::string_view kind = val.substr(0, colon);
      if (kind == "native") {
        if (colon != std::string_view::npos) return invalid(text, "store=native takes no :D");
        s.store = Store{StoreKind::native, 0};
      } else if (kind == "packed_u32" || kind == "packed_native") {
        std::uint64_t dim = 0;
        if (colon != std::string_view::npos) {
          const std::string_view d = val.substr(colon + 1);
          if (!all_digits(d)) return invalid(text, "packed dimension '" + std::string(d) + "' is not digits");
          dim = digits_value(d, std::numeric_limits<std::uint64_t>::max());
        }
        s.store = Store{kind == "packed_u32" ? StoreKind::packed_u32 : StoreKind::packed_native, dim};
      } else {
        return invalid(text, "unknown store '" + std::string(val) + "'");
      }
    } else if (key == "mode") {
      slot = 2;
      if (val == "symmetric") {
        s.mode = Mode::symmetric;
      } else if (val == "lookup") {
        s.mode = Mode::lookup;
      } else {
        return invalid(text, "unknown mode '" + std::string(val) + "'");
      }
    } else if (key == "block") {
      slot = 3;
      const std::size_t colon = val.find(':');
      if (colon == std::string_view::npos) return invalid(text, "block needs dims:dtype");
      const auto dtype = parse_dtype(val.substr(colon + 1));
      if (!dtype) return invalid(text, "unknown block scale dtype '" + std::string(val.substr(colon + 1)) + "'");
      BlockLevel level;
      level.dtype = *dtype;
      const std::string_view dims = val.substr(0, colon);
      std::size_t dpos = 0;
      while (true) {
        const std::size_t x = dims.find('x', dpos);
        const std::string_view d =
            dims.substr(dpos, x == std::string_view::npos ? std::string_view::npos : x - dpos);
        if (!all_digits(d)) return invalid(text, "block dim '" + std::string(d) + "' is not digits");
        const std::uint64_t n = digits_value(d, 256);
        if (n > 255) return invalid(text, "block dim " + std::string(d) + " is over 255");
        level.dims.push_back(static_cast<std::uint8_t>(n));
        if (x == std::string_view::npos) break;
        dpos = x + 1;
      }
      canonicalize_block(level.dims);
      s.block = std::move(level);
    } else if (key == "tensor") {
      slot = 4;
      const auto dtype = parse_dtype(val);
      if (!dtype) return invalid(text, "unknown tensor scale dtype '" + std::string(val) + "'");
      s.tensor = *dtype;
    } else {
      return invalid(text, "unknown key '" + std::string(key) + "'");
    }
    if (seen[slot]) return invalid(text, "duplicate key '" + std::string(key) + "'");
    seen[slot] = true;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return s;
}

std::string print_scheme(const Scheme& s) {
  std::string out = "value=";
  out += info(s.value).name;
  out += ",store=";
  switch (s.store.kind) {
    case StoreKind::native: out += "native"; break;
    case StoreKind::packed_u32: out += "packed_u32:" + std::to_string(s.store.dim); break;
    case StoreKind::packed_native: out += "packed_native:" + std::to_string(s.store.dim); break;
  }
  out += s.mode == Mode::symmetric ? ",mode=symmetric" : ",mode=lookup";
  if (s.block) {
    out += ",block=";
    for (std::size_t i = 0; i < s.block->dims.size(); ++i) {
      if (i) out += 'x';
      out += std::to_string(s.block->dims[i]);
    }
    out += ':';
    out += to_string(s.block->dtype);
  }
  if (s.tensor) {
    out += ",tensor=";
    out += to_string(*s.tensor);
  }
  return out;
}

Status validate_scheme(const Scheme& s) {
  const auto text = [&s] { return print_scheme(s); };  // only for messages: no allocation on success
  if (s.block) {
    if (s.block->dims.empty() || s.block->dims.size() > 5) {
      return Error{ErrorKind::invalid_block_size,
                   "block of " + std::to_string(s.block->dims.size()) + " dims (1..5 allowed) in " + text()};
    }
    for (std::size_t i = 0; i < s.block->dims.size(); ++i) {
      if (s.block->dims[i] == 0) {
        return Error{ErrorKind::invalid_block_size, "block dim " + std::to_string(i) + " is 0 in " + text()};
      }
    }
  }
  // "The scale dtype" of SPEC §1: the innermost level's. A two-level scheme's tensor dtype is
  // its global's, which §3.1 checks next (narrow-global-scale).
  if (s.scale_dtype() == ScaleDtype::ue8m0) {
    return Error{ErrorKind::unsupported_scale_dtype, "ue8m0 scales have no round-up rule, in " + text()};
  }
  if (s.two_level()) {
    if (*s.tensor != ScaleDtype::f32) {
      return Error{ErrorKind::narrow_global_scale,
                   "two-level global scale must be f32, got " + std::string(to_string(*s.tensor)) + " in " + text()};
    }
    if (scale_max(s.block->dtype) > 65504.0f) {
      return Error{ErrorKind::block_scale_too_wide,
                   "two-level block dtype " + std::string(to_string(s.block->dtype)) +
                       " reaches past 65504, in " + text()};
    }
  }
  if (s.store.kind == StoreKind::packed_native && !info(s.value).minifloat && info(s.value).bits < 8) {
    return Error{ErrorKind::unsupported_store,
                 "packed_native has no layout for " + std::string(info(s.value).name) + ", in " + text()};
  }
  if (s.mode == Mode::lookup && (s.store.kind != StoreKind::packed_u32 || info(s.value).minifloat)) {
    return Error{ErrorKind::unsupported_lookup_scheme,
                 "lookup needs an integer value in packed_u32, in " + text()};
  }
  return {};
}

}  // namespace qconform
