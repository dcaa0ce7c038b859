// Adapter: qconform::optimized pinned to one target. Scale round-up and single minifloat
// conversions have no SIMD entry point of their own; they are checked through quantize.
#include "optimized_adapter.h"

#include "qconform/optimized.h"

namespace qconform::detail {
namespace {

class Optimized final : public ReferenceImplementation {
 public:
  Optimized(std::int64_t target, std::string name) : target_(target), name_(std::move(name)) {}
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] unsigned ops() const override {
    return static_cast<unsigned>(Op::all) & ~(static_cast<unsigned>(Op::round_up) | static_cast<unsigned>(Op::minifloat));
  }
  [[nodiscard]] Result<QTensor> quantize(const Scheme& s, std::span<const std::size_t> shape,
                                         std::span<const float> data, std::span<const float> scales,
                                         std::optional<float> global, Table table) const override {
    return optimized::quantize(s, shape, data, scales, global, table, target_);
  }
  [[nodiscard]] Result<std::vector<float>> dequantize(const QTensor& t, Table table) const override {
    return optimized::dequantize(t, table, target_);
  }
  [[nodiscard]] Result<QParams> calibrate(const Scheme& s, std::span<const std::size_t> shape,
                                          std::span<const float> data, Calibration method) const override {
    return optimized::calibrate(s, shape, data, method, target_);
  }
  [[nodiscard]] Result<std::vector<std::uint8_t>> pack(const Scheme& s, std::span<const std::size_t> shape,
                                                       std::span<const std::int32_t> codes) const override {
    return optimized::pack(s, shape, codes, target_);
  }
  [[nodiscard]] Result<std::vector<std::int32_t>> unpack(const Scheme& s, std::span<const std::size_t> shape,
                                                         std::span<const std::uint8_t> storage) const override {
    return optimized::unpack(s, shape, storage, target_);
  }
  [[nodiscard]] Result<std::vector<std::uint8_t>> serialize(const QTensor& t) const override {
    return optimized::serialize(t, target_);
  }
  [[nodiscard]] Result<QTensor> parse(const Scheme& s, std::span<const std::size_t> shape,
                                      std::span<const std::uint8_t> bytes, Table table) const override {
    return optimized::parse(s, shape, bytes, table, target_);
  }

 private:
  std::int64_t target_;
  std::string name_;
};

}  // namespace

std::vector<std::unique_ptr<Implementation>> optimized_implementations() {
  std::vector<std::unique_ptr<Implementation>> out;
  for (const auto& t : optimized::targets()) {
    if (t.supported) out.push_back(std::make_unique<Optimized>(t.bits, "optimized:" + t.name));
  }
  return out;
}

std::unique_ptr<Implementation> make_optimized(std::string_view name) {
  if (name == "optimized") return std::make_unique<Optimized>(0, "optimized:" + optimized::target_name(optimized::best_target()));
  constexpr std::string_view prefix = "optimized:";
  if (name.substr(0, prefix.size()) != prefix) return nullptr;
  const auto bits = optimized::find_target(name.substr(prefix.size()));
  if (!bits) return nullptr;
  return std::make_unique<Optimized>(*bits, "optimized:" + optimized::target_name(*bits));
}

std::vector<std::string> optimized_names() {
  std::vector<std::string> out{"optimized"};
  for (const auto& t : optimized::targets()) {
    if (t.supported) out.push_back("optimized:" + t.name);
  }
  return out;
}

}  // namespace qconform::detail
