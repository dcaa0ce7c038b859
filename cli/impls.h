// The implementations the CLI can drive (`--impl NAME`, `qconform targets`), one table row each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <memory>

#include "qconform/implementation.h"
#include "qconform/reference.h"

namespace qconform::cli {

// The operations of SPEC §9 that the CLI exposes, with the reference's signatures plus the
// trailing `target` of qconform/optimized.h (0: the implementation's default), so a SIMD
// implementation's functions fit a row as they are.
struct Ops {
  Result<QTensor> (*quantize)(const Scheme&, std::span<const std::size_t>, std::span<const float>,
                              std::span<const float>, std::optional<float>, Table, std::int64_t);
  Result<std::vector<float>> (*dequantize)(const QTensor&, Table, std::int64_t);
  Result<QParams> (*calibrate)(const Scheme&, std::span<const std::size_t>,
                               std::span<const float>, Calibration, std::int64_t);
  Result<std::vector<std::uint8_t>> (*serialize)(const QTensor&, std::int64_t);
  Result<QTensor> (*parse)(const Scheme&, std::span<const std::size_t>,
                           std::span<const std::uint8_t>, Table, std::int64_t);
};

// One target of a backend: `--impl backend:name` runs it when this CPU supports it.
struct Variant {
  std::string name;
  std::int64_t target;
  bool supported = true;
};

// One row of the registry. `variants` lists every target compiled in, best first, with whether
// this CPU supports it (null: none); the supported ones are selectable, and the backend itself
// always is, by its bare name, with target 0 (its best supported target).
struct Backend {
  std::string_view name;
  std::vector<Variant> (*variants)();
  Ops ops;
};

// A resolved `--impl`: the backend's operations bound to one target, or an implementation object
// (a plugin) for the operations it answers, with `ops` (the reference's) for the others.
struct Impl {
  std::string name;
  std::int64_t target = 0;
  const Ops* ops = nullptr;
  std::shared_ptr<const Implementation> object;

  [[nodiscard]] Result<QTensor> quantize(const Scheme& s, std::span<const std::size_t> shape,
                                         std::span<const float> data,
                                         std::span<const float> scales,
                                         std::optional<float> global, Table table) const {
    if (object && object->supports(Op::quantize)) return object->quantize(s, shape, data, scales, global, table);
    return ops->quantize(s, shape, data, scales, global, table, target);
  }
  [[nodiscard]] Result<std::vector<float>> dequantize(const QTensor& t, Table table) const {
    if (object && object->supports(Op::dequantize)) return object->dequantize(t, table);
    return ops->dequantize(t, table, target);
  }
  // Whether calibrate is the implementation's own (a plugin's ABI has none).
  [[nodiscard]] bool calibrates() const { return !object || object->supports(Op::calibrate); }
  [[nodiscard]] Result<QParams> calibrate(const Scheme& s, std::span<const std::size_t> shape,
                                          std::span<const float> data, Calibration m) const {
    if (object && object->supports(Op::calibrate)) return object->calibrate(s, shape, data, m);
    return ops->calibrate(s, shape, data, m, target);
  }
  [[nodiscard]] Result<std::vector<std::uint8_t>> serialize(const QTensor& t) const {
    return ops->serialize(t, target);
  }
  [[nodiscard]] Result<QTensor> parse(const Scheme& s, std::span<const std::size_t> shape,
                                      std::span<const std::uint8_t> bytes, Table table) const {
    return ops->parse(s, shape, bytes, table, target);
  }
};

// Every implementation selectable on this machine, the reference first: each backend by its
// bare name, then `backend:variant` for each supported variant.
[[nodiscard]] std::vector<Impl> impls();

// The implementation called `name`, if it is selectable here.
[[nodiscard]] std::optional<Impl> find_impl(std::string_view name);

// "reference, optimized, ..." for messages.
[[nodiscard]] std::string known_impls();

// What `qconform targets` reports beside the selectable names: every `backend:target` compiled
// in and those this CPU supports, best first, over the backends that have targets.
struct TargetReport {
  std::vector<std::string> compiled;
  std::vector<std::string> supported;
};
[[nodiscard]] TargetReport target_report();

}  // namespace qconform::cli
