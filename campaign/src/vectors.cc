// Golden vectors: a deterministic case list covering every value type x store x level, every
// error kind and the hard inputs; expectations come from the reference, the definition.
#include "qconform/vectors.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace qconform::vectors {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string hexf(float x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(x));
  return buf;
}

bool parse_hexf(const std::string& s, float& out) {
  char* end = nullptr;
  out = std::strtof(s.c_str(), &end);
  return end && *end == '\0' && !s.empty();
}

std::string hex_bytes(const std::vector<std::uint8_t>& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (auto c : b) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

bool parse_hex_bytes(const std::string& s, std::vector<std::uint8_t>& out) {
  if (s.size() % 2) return false;
  out.clear();
  for (std::size_t i = 0; i < s.size(); i += 2) {
    unsigned v = 0;
    if (std::sscanf(s.substr(i, 2).c_str(), "%2x", &v) != 1) return false;
    out.push_back(static_cast<std::uint8_t>(v));
  }
  return true;
}

json floats(const std::vector<float>& v) {
  json a = json::array();
  for (float x : v) a.push_back(hexf(x));
  return a;
}

struct Case {
  std::string scheme;  // text, possibly malformed
  Shape shape;
  std::vector<float> input, scales;
  std::optional<float> global;
  std::optional<std::vector<float>> table;
};

// Inputs that exercise ties, ulp neighbours, ±0, subnormals, saturation and ±Inf at scale `s`.
std::vector<float> hard_inputs(std::size_t n, float s, std::uint32_t seed) {
  const float specials[] = {0.5f, -0.5f, 1.5f, -2.5f, 0x1.fffffep-2f, -0.0f, 0.0f, 0x1p-149f, -0x1p-140f, 127.5f, -128.5f,
                            3.0f, 6.5f, 448.0f, 464.0f, 1e30f, -1e30f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 2.25f, -7.5f, 0.25f, 0.75f, 5.0f};
  std::vector<float> out(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    const float base = specials[(x >> 8) % std::size(specials)];
    const int mode = static_cast<int>((x >> 24) % 4);
    float v = std::isinf(base) ? base : base * s;
    if (mode == 1) v = std::nextafter(v, std::numeric_limits<float>::infinity());
    if (mode == 2) v = static_cast<float>(static_cast<int>((x >> 4) % 2001) - 1000) * 0.01f * s;
    out[i] = v;
  }
  return out;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const std::vector<std::string> values{"q8f", "q8s", "q4f", "q4s", "q2f", "q2s", "e4m3", "e5m2", "e2m1"};
  const std::vector<std::string> stores{"native", "packed_u32:0", "packed_native:0", "packed_u32:1"};
  struct Level {
    std::string text;
    bool two_level;
  };
  const std::vector<Level> levels{{"", false}, {",tensor=f16", false}, {",block=32:f16", false},
                                  {",block=4x8:bf16", false}, {",block=7:ue4m3", false},
                                  {",block=16:ue4m3,tensor=f32", true}, {",block=2x3:f16,tensor=f32", true}};
  std::uint32_t seed = 1;
  for (const auto& v : values) {
    for (const auto& st : stores) {
      for (const auto& lv : levels) {
        Case c;
        c.scheme = "value=" + v + ",store=" + st + lv.text;
        const auto s = parse_scheme(c.scheme);
        if (!s.ok() || !validate_scheme(s.value()).ok()) continue;  // invalid combinations come below
        c.shape = {5, 37};  // partial blocks along both axes, odd line lengths
        const auto l = make_layout(s.value(), c.shape);
        if (!l.ok()) continue;
        const float scale = info(s->value).minifloat ? 0.0625f : 0.015625f;
        for (std::size_t k = 0; k < l->scale_count; ++k) c.scales.push_back(scale * static_cast<float>(1 + k % 3));
        if (lv.two_level) c.global = 0.75f;
        c.input = hard_inputs(l->elements, scale, seed++);
        out.push_back(c);
      }
    }
  }
  // Lookup mode, rank 0, empty tensors, zero scales, N-D blocks of rank 3.
  Case lookup{"value=q4s,store=packed_u32:0,mode=lookup,block=8:f16", {3, 8}, {}, {0.5f, 0.25f, 0.0f}, std::nullopt, std::nullopt};
  lookup.input = hard_inputs(24, 0.5f, 99);
  std::vector<float> table;
  for (int i = 0; i < 16; ++i) table.push_back(static_cast<float>(i - 8) * 0.75f);
  lookup.table = table;
  out.push_back(lookup);
  out.push_back({"value=q8s,store=packed_u32:0", {}, {2.5f}, {1.0f}, std::nullopt, std::nullopt});
  out.push_back({"value=e2m1,store=packed_native:0", {}, {-5.0f}, {1.0f}, std::nullopt, std::nullopt});
  out.push_back({"value=q4s,store=packed_u32:0,block=4:f16", {0, 9}, {}, {}, std::nullopt, std::nullopt});
  out.push_back({"value=q8s,store=native", {4}, {0.25f, -0.25f, 0.05f, 1.0f}, {0.0f}, std::nullopt, std::nullopt});
  out.push_back({"value=q4f,store=packed_u32:2,block=2x2x3:f16", {3, 3, 5}, hard_inputs(45, 0.25f, 7), {}, std::nullopt, std::nullopt});
  for (int k = 0; k < 2 * 2 * 2; ++k) out.back().scales.push_back(0.25f + 0.125f * static_cast<float>(k));
  out.push_back({"nvfp4", {2, 40}, hard_inputs(80, 0.25f, 11), {0.5f, 0.25f, 1.0f, 2.0f, 4.0f, 8.0f}, 0.5f, std::nullopt});

  // One vector per error kind that quantize can reach, in precedence order (SPEC §3).
  const auto q8 = std::string("value=q8s,store=native");
  out.push_back({"value=q9s", {2}, {1, 2}, {1}, std::nullopt, std::nullopt});                               // invalid-scheme
  out.push_back({q8 + ",block=0:f16", {2}, {1, 2}, {1}, std::nullopt, std::nullopt});                        // invalid-block-size
  out.push_back({q8 + ",block=1x2x3x4x5x6:f16", {2}, {1, 2}, {1}, std::nullopt, std::nullopt});              // invalid-block-size
  out.push_back({q8 + ",block=4:ue8m0", {4}, {1, 2, 3, 4}, {1}, std::nullopt, std::nullopt});                // unsupported-scale-dtype
  out.push_back({q8 + ",block=4:ue4m3,tensor=f16", {4}, {1, 2, 3, 4}, {1}, 1.0f, std::nullopt});             // narrow-global-scale
  out.push_back({q8 + ",block=4:f16,tensor=ue8m0", {4}, {1, 2, 3, 4}, {1}, 1.0f, std::nullopt});            // narrow-global-scale (the global's dtype)
  out.push_back({q8 + ",block=4:bf16,tensor=f32", {4}, {1, 2, 3, 4}, {1}, 1.0f, std::nullopt});              // block-scale-too-wide
  out.push_back({"value=q4s,store=packed_native:0", {4}, {1, 2, 3, 4}, {1}, std::nullopt, std::nullopt});    // unsupported-store
  out.push_back({"value=e4m3,store=packed_u32:0,mode=lookup", {4}, {1, 2, 3, 4}, {1}, std::nullopt, std::nullopt});  // unsupported-lookup-scheme
  out.push_back({q8 + ",block=4:ue4m3,tensor=f32", {8}, {1, 2, 3, 4, 5, 6, 7, 8}, {0.5f, 0.125f}, std::nullopt, std::nullopt});  // the seed
  out.push_back({q8 + ",block=4:ue4m3,tensor=f32", {3}, {std::numeric_limits<float>::quiet_NaN()}, {}, std::nullopt, std::nullopt});  // seed, all else wrong too
  out.push_back({q8, {4}, {1, 2, 3, 4}, {1}, 2.0f, std::nullopt});                                           // unexpected-global-scale
  out.push_back({q8, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {}, {1}, std::nullopt, std::nullopt});                      // shape-overflow (rank 9)
  out.push_back({q8, {std::size_t{1} << 62, 8}, {}, {1}, std::nullopt, std::nullopt});                        // shape-overflow (count)
  out.push_back({q8, {3}, {1, 2}, {1}, std::nullopt, std::nullopt});                                          // shape-mismatch
  out.push_back({q8 + ",block=2x2:f16", {4}, {1, 2, 3, 4}, {1}, std::nullopt, std::nullopt});                 // block-rank-exceeds-tensor
  out.push_back({"value=q4s,store=packed_u32:2", {2, 2}, {1, 2, 3, 4}, {1}, std::nullopt, std::nullopt});     // packing-dim-out-of-range
  out.push_back({q8 + ",block=3:f16", {7}, {1, 2, 3, 4, 5, 6, 7}, {1, 1}, std::nullopt, std::nullopt});       // scale-count-mismatch
  out.push_back({q8, {2}, {1, 2}, {-0.5f}, std::nullopt, std::nullopt});                                       // invalid-scale
  out.push_back({q8 + ",block=2:f16,tensor=f32", {2}, {1, 2}, {60000.0f}, 0x1p127f, std::nullopt});           // invalid-global-scale
  out.push_back({"value=q4s,store=packed_u32:0,mode=lookup", {2}, {1, 2}, {1}, std::nullopt, std::nullopt});  // missing-lookup-table
  out.push_back({q8, {2}, {1, 2}, {1}, std::nullopt, std::vector<float>{0.0f}});                               // unexpected-lookup-table
  out.push_back({"value=q2s,store=packed_u32:0,mode=lookup", {2}, {1, 2}, {1}, std::nullopt, std::vector<float>{0, 1, 2}});  // lookup-table-size
  out.push_back({"value=q2s,store=packed_u32:0,mode=lookup", {2}, {1, 2}, {1}, std::nullopt,
                 std::vector<float>{0, 1, std::numeric_limits<float>::quiet_NaN(), 3}});                      // invalid-lookup-table
  out.push_back({q8, {3}, {1, std::numeric_limits<float>::quiet_NaN(), 3}, {1}, std::nullopt, std::nullopt});  // nan-input
  return out;
}

json shape_json(const Shape& s) {
  json a = json::array();
  for (auto d : s) a.push_back(d);
  return a;
}

}  // namespace

std::string export_to(const std::string& dir, ExportSummary* summary) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create " + dir + ": " + ec.message();
  std::ofstream q(fs::path(dir) / "quantize.jsonl"), d(fs::path(dir) / "dequantize.jsonl"), k(fs::path(dir) / "calibrate.jsonl");
  if (!q || !d || !k) return "cannot write into " + dir;
  ExportSummary sum;
  for (const Case& c : cases()) {
    json j{{"op", "quantize"}, {"scheme", c.scheme}, {"shape", shape_json(c.shape)}, {"input", floats(c.input)},
           {"scales", floats(c.scales)}, {"global", c.global ? json(hexf(*c.global)) : json(nullptr)}};
    if (c.table) j["table"] = floats(*c.table);
    const auto s = parse_scheme(c.scheme);
    std::optional<Result<QTensor>> t;
    if (!s.ok()) {
      j["expect"] = {{"error", std::string(to_string(s.kind()))}};
    } else {
      t = quantize(s.value(), c.shape, c.input, c.scales, c.global,
                   table_of(c.table));
      if (!t->ok()) {
        j["expect"] = {{"error", std::string(to_string(t->kind()))}};
      } else {
        j["expect"] = {{"bytes", hex_bytes(serialize(t->value()).value())}};
      }
    }
    q << j.dump() << '\n';
    ++sum.quantize;
    // Dequantize: the good bytes, then truncated, trailing and corrupted variants.
    if (t && t->ok()) {
      const auto bytes = serialize(t->value()).value();
      std::vector<std::vector<std::uint8_t>> variants{bytes};
      if (!bytes.empty()) variants.emplace_back(bytes.begin(), bytes.end() - 1);
      auto longer = bytes;
      longer.push_back(0);
      variants.push_back(longer);
      if (!bytes.empty()) {
        auto flipped = bytes;
        flipped[0] ^= 0x80;
        variants.push_back(flipped);
        auto last = bytes;
        last.back() ^= 0x80;  // the global's or the last scale's sign bit
        variants.push_back(last);
      }
      for (const auto& b : variants) {
        json dj{{"op", "dequantize"}, {"scheme", c.scheme}, {"shape", shape_json(c.shape)}, {"bytes", hex_bytes(b)}};
        if (c.table) dj["table"] = floats(*c.table);
        const Table tab = table_of(c.table);
        const auto p = parse(s.value(), c.shape, b, tab);
        const auto v = p.ok() ? dequantize(p.value(), tab) : Result<std::vector<float>>(p.error());
        dj["expect"] = v.ok() ? json{{"values", floats(v.value())}} : json{{"error", std::string(to_string(v.kind()))}};
        d << dj.dump() << '\n';
        ++sum.dequantize;
      }
    }
  }
  // Calibration, including its own error kinds.
  const std::vector<std::tuple<std::string, Shape, std::vector<float>, std::string>> cal{
      {"value=q8s,store=native", {4}, {-1.8f, -1.0f, 0.0f, 0.5f}, "minmax"},
      {"value=q8s,store=native,block=32:f16", {2, 64}, hard_inputs(128, 0.01f, 5), "minmax"},
      {"value=q2s,store=packed_u32:0,block=8:f16", {16}, hard_inputs(16, 0.01f, 6), "absmean"},
      {"nvfp4", {2, 32}, hard_inputs(64, 0.01f, 8), "minmax"},
      {"value=e4m3,store=native,block=2x4:f16", {4, 8}, hard_inputs(32, 0.5f, 9), "minmax"},
      {"value=q8s,store=native,block=3:f16", {7}, {1, 2, 3, 4, 5, 6, 7}, "minmax"},                            // block-not-divisible
      {"value=q8s,store=native", {2}, {0x1.fffffep127f, 1.0f}, "minmax"},                                      // calibration-overflow
      {"value=q8s,store=native", {2}, {std::numeric_limits<float>::infinity(), 1.0f}, "minmax"},               // calibration-overflow
      {"value=q8s,store=native,block=4:ue4m3,tensor=f32", {8}, {1, 2, 3, 4, 5, 6, 7, 8}, "absmean"},           // absmean-two-level
      {"value=q8s,store=native", {2}, {std::numeric_limits<float>::quiet_NaN(), 1.0f}, "minmax"},              // nan-input
  };
  for (const auto& [text, shape, input, method] : cal) {
    json j{{"op", "calibrate"}, {"scheme", text}, {"shape", shape_json(shape)}, {"input", floats(input)}, {"method", method}};
    const auto r = calibrate(parse_scheme(text).value(), shape, input, method == "absmean" ? Calibration::absmean : Calibration::minmax);
    j["expect"] = r.ok() ? json{{"scales", floats(r->scales)}, {"global", r->global ? json(hexf(*r->global)) : json(nullptr)}}
                         : json{{"error", std::string(to_string(r.kind()))}};
    k << j.dump() << '\n';
    ++sum.calibrate;
  }
  json manifest{{"schema_version", kSchemaVersion},
                {"generator", "qconform vectors export"},
                {"files", {{"quantize.jsonl", sum.quantize}, {"dequantize.jsonl", sum.dequantize}, {"calibrate.jsonl", sum.calibrate}}},
                {"spec", "SPEC.md sections 1-8; hex floats in C99 %a form; bytes lowercase hex"}};
  std::ofstream(fs::path(dir) / "manifest.json") << manifest.dump(2) << '\n';
  sum.files = {"manifest.json", "quantize.jsonl", "dequantize.jsonl", "calibrate.jsonl"};
  if (summary) *summary = sum;
  return {};
}

namespace {

bool read_floats(const json& a, std::vector<float>& out) {
  if (!a.is_array()) return false;
  out.clear();
  for (const auto& e : a) {
    float f;
    if (!e.is_string() || !parse_hexf(e.get<std::string>(), f)) return false;
    out.push_back(f);
  }
  return true;
}

std::string got_text(const Error* e, const std::string& ok) { return e ? "error " + std::string(to_string(e->kind)) : ok; }

}  // namespace

VerifySummary verify(const std::string& dir, const Implementation& impl) {
  VerifySummary sum;
  for (const char* name : {"quantize.jsonl", "dequantize.jsonl", "calibrate.jsonl"}) {
    std::ifstream in(fs::path(dir) / name);
    if (!in) {
      sum.error = "cannot read " + (fs::path(dir) / name).string();
      return sum;
    }
    std::string line;
    std::size_t no = 0;
    while (std::getline(in, line)) {
      ++no;
      if (line.empty()) continue;
      auto fail = [&](const std::string& d) { sum.failures.push_back({name, no, d}); };
      try {
        const json j = json::parse(line);
        const std::string op = j.at("op");
        const std::string text = j.at("scheme");
        Shape shape = j.at("shape").get<Shape>();
        const json& expect = j.at("expect");
        std::vector<float> table_v;
        std::optional<std::vector<float>> table;
        if (j.contains("table")) {
          if (!read_floats(j["table"], table_v)) throw std::runtime_error("bad table");
          table = table_v;
        }
        const Table tab = table_of(table);
        if (table && !impl.lookup_tables()) {
          ++sum.skipped;
          continue;
        }
        const auto scheme = parse_scheme(text);
        std::string got;
        const std::string want = expect.contains("error") ? "error " + expect["error"].get<std::string>() : std::string();
        if (op == "quantize") {
          if (!impl.supports(Op::quantize) || !impl.supports(Op::serialize)) {
            if (!impl.supports(Op::quantize)) {
              ++sum.skipped;
              continue;
            }
          }
          std::vector<float> input, scales;
          if (!read_floats(j.at("input"), input) || !read_floats(j.at("scales"), scales)) throw std::runtime_error("bad floats");
          std::optional<float> global;
          if (!j.at("global").is_null()) {
            float g;
            if (!parse_hexf(j["global"].get<std::string>(), g)) throw std::runtime_error("bad global");
            global = g;
          }
          if (!scheme.ok()) {
            got = got_text(&scheme.error(), "");
          } else {
            const auto t = impl.quantize(scheme.value(), shape, input, scales, global, tab);
            if (!t.ok()) {
              got = got_text(&t.error(), "");
            } else {
              const auto b = impl.supports(Op::serialize) ? impl.serialize(t.value()) : serialize(t.value());
              got = b.ok() ? "bytes " + hex_bytes(b.value()) : got_text(&b.error(), "");
            }
          }
          const std::string w = want.empty() ? "bytes " + expect.at("bytes").get<std::string>() : want;
          if (got != w) fail("quantize " + text + ": expected " + w + ", got " + got);
        } else if (op == "dequantize") {
          std::vector<std::uint8_t> bytes;
          if (!parse_hex_bytes(j.at("bytes").get<std::string>(), bytes)) throw std::runtime_error("bad bytes");
          std::string w = want;
          if (w.empty()) {
            std::vector<float> v;
            if (!read_floats(expect.at("values"), v)) throw std::runtime_error("bad values");
            w = "values " + floats(v).dump();
          }
          // Parse with the implementation when it can, else with the reference (a plugin sees bytes).
          const auto t = impl.supports(Op::parse) ? impl.parse(scheme.value(), shape, bytes, tab) : parse(scheme.value(), shape, bytes, tab);
          if (!t.ok()) {
            got = got_text(&t.error(), "");
          } else {
            const auto v = impl.dequantize(t.value(), tab);
            got = v.ok() ? "values " + floats(v.value()).dump() : got_text(&v.error(), "");
          }
          if (got != w) fail("dequantize " + text + ": expected " + w + ", got " + got);
        } else if (op == "calibrate") {
          if (!impl.supports(Op::calibrate)) {
            ++sum.skipped;
            continue;
          }
          std::vector<float> input;
          if (!read_floats(j.at("input"), input)) throw std::runtime_error("bad floats");
          const auto method = j.at("method") == "absmean" ? Calibration::absmean : Calibration::minmax;
          const auto r = impl.calibrate(scheme.value(), shape, input, method);
          got = r.ok() ? "scales " + floats(r->scales).dump() + " global " + (r->global ? hexf(*r->global) : "null")
                       : got_text(&r.error(), "");
          std::string w = want;
          if (w.empty()) {
            std::vector<float> sc;
            if (!read_floats(expect.at("scales"), sc)) throw std::runtime_error("bad scales");
            w = "scales " + floats(sc).dump() + " global " + (expect.at("global").is_null() ? "null" : expect["global"].get<std::string>());
          }
          if (got != w) fail("calibrate " + text + ": expected " + w + ", got " + got);
        } else {
          throw std::runtime_error("unknown op " + op);
        }
        ++sum.checked;
      } catch (const std::exception& e) {
        sum.failures.push_back({name, no, std::string("malformed vector: ") + e.what()});
      }
    }
  }
  return sum;
}

}  // namespace qconform::vectors
