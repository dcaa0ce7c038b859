// Failure reports of the fuzz targets: what failed, on which input, and every implementation's
// answer side by side.
#include "check.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>

namespace qconform::fuzz {
namespace {

std::function<std::string()>& current_context() {
  static std::function<std::string()> ctx;
  return ctx;
}

std::string& input_name() {
  static std::string name;
  return name;
}

}  // namespace

Context::Context(std::function<std::string()> describe) : previous_(std::move(current_context())) {
  current_context() = std::move(describe);
}

Context::~Context() { current_context() = std::move(previous_); }

void set_input_name(std::string name) { input_name() = std::move(name); }

void fail(const char* file, int line, const char* cond, const std::string& message) {
  std::fprintf(stderr, "\n==== qconform fuzz check failed ====\n%s:%d: FUZZ_CHECK(%s)\n", file, line, cond);
  if (!message.empty()) std::fprintf(stderr, "%s\n", message.c_str());
  if (!input_name().empty()) {
    std::fprintf(stderr, "input: %s (rerun: the same binary with this file as its argument)\n",
                 input_name().c_str());
  }
  if (current_context()) {
    const std::string ctx = current_context()();
    std::fprintf(stderr, "---- decoded case ----\n%s\n", ctx.c_str());
  }
  std::fflush(stderr);
  std::abort();
}

std::string hexf(float x) {
  char buf[80];
  std::snprintf(buf, sizeof buf, "%a (0x%08x)", static_cast<double>(x),
                static_cast<unsigned>(std::bit_cast<std::uint32_t>(x)));
  return buf;
}

std::string hex_bytes(std::span<const std::uint8_t> b, std::size_t limit) {
  std::string out = "[";
  char buf[4];
  for (std::size_t i = 0; i < b.size() && i < limit; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(b[i]));
    if (i) out += ' ';
    out += buf;
  }
  if (b.size() > limit) out += cat(" ... (", b.size(), " bytes)");
  return out + "]";
}

bool same(const Outcome& a, const Outcome& b) {
  if (a.kind != b.kind) return false;
  return a.kind.has_value() || a.bytes == b.bytes;
}

void check_agree(std::string_view op, std::span<const Outcome> outcomes,
                 const std::function<std::string(const Outcome&, const Outcome&)>& explain, const char* file,
                 int line) {
  bool all_same = true;
  for (const Outcome& o : outcomes) all_same = all_same && same(o, outcomes.front());
  if (all_same) return;

  std::ostringstream os;
  os << "implementations disagree on " << op << "\n";
  std::size_t width = 4;
  for (const Outcome& o : outcomes) width = std::max(width, o.impl.size());
  for (const Outcome& o : outcomes) {
    os << "  " << o.impl << std::string(width - o.impl.size(), ' ') << " | ";
    if (o.kind) {
      os << "error " << to_string(*o.kind) << ": " << o.message << "\n";
    } else {
      os << o.message << " " << hex_bytes(o.bytes, 32) << "\n";
    }
  }
  os << "pairwise:\n";
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    for (std::size_t j = i + 1; j < outcomes.size(); ++j) {
      const Outcome& a = outcomes[i];
      const Outcome& b = outcomes[j];
      os << "  " << a.impl << " vs " << b.impl << ": ";
      if (same(a, b)) {
        os << "same\n";
        continue;
      }
      if (a.kind != b.kind) {
        os << (a.kind ? to_string(*a.kind) : std::string_view("ok")) << " vs "
           << (b.kind ? to_string(*b.kind) : std::string_view("ok")) << "\n";
        continue;
      }
      std::size_t k = 0;
      while (k < a.bytes.size() && k < b.bytes.size() && a.bytes[k] == b.bytes[k]) ++k;
      os << "first difference at byte " << k << " of " << a.bytes.size() << " / " << b.bytes.size() << "\n";
      if (explain) os << explain(a, b);
    }
  }
  fail(file, line, "all implementations agree", os.str());
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
}

void put_f32(std::vector<std::uint8_t>& out, float v) { put_u32(out, std::bit_cast<std::uint32_t>(v)); }

}  // namespace qconform::fuzz
