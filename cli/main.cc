// qconform: the command line through which people and acceptance checks drive the quantizers.
//
// Exit status: 0 success, 1 a typed error (its kind on stderr, and as JSON with --json),
// 2 a usage error, 3 an internal failure. No exception escapes main.

#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "extra.h"
#include "impls.h"
#include "qconform/plugin_host.h"
#include "literals.h"
#include "output.h"
#include "qconform/reference.h"

#ifndef QCONFORM_VERSION
#define QCONFORM_VERSION "unknown"
#endif

namespace qconform::cli {
namespace {

// Every option of every subcommand; each subcommand reads the ones it declares.
struct Options {
  std::string scheme;
  std::string shape;
  std::optional<std::string> scales;
  std::optional<std::string> global;
  std::optional<std::string> table;
  std::string bytes;
  std::string method = "minmax";
  std::string impl = "reference";
  bool json = false;
};

// Usage-level inputs of the tensor subcommands, all checked before any typed error.
struct Inputs {
  Impl impl;
  ShapeArg shape;
  std::optional<std::vector<float>> table;
};

Inputs common_inputs(const Options& o) {
  Inputs in;
  std::optional<Impl> impl = find_impl(o.impl);
  if (!impl && (o.impl.find('/') != std::string::npos || o.impl.ends_with(".so"))) {
    // A plugin (qconform/plugin.h), run out of process; what its ABI lacks is the reference's.
    PluginLoad p = load_plugin(o.impl);
    if (!p.impl) throw UsageError("--impl: cannot load plugin " + quote(o.impl) + ": " + p.error);
    impl = find_impl("reference");
    impl->name = p.impl->name();
    impl->object = std::shared_ptr<const Implementation>(std::move(p.impl));
  }
  if (!impl) {
    throw UsageError("--impl: unknown implementation " + quote(o.impl) + " (known: " +
                     known_impls() + ", or a plugin path)");
  }
  in.impl = std::move(*impl);
  in.shape = parse_shape(o.shape);
  if (o.table) in.table = parse_float_list(*o.table, "--table");
  return in;
}

Table table_of(const Inputs& in) { return qconform::table_of(in.table); }

Calibration calibration_of(const std::string& method) {
  return method == "absmean" ? Calibration::absmean : Calibration::minmax;
}

// A dim that does not fit size_t is shape-overflow, but only once the checks that SPEC §3
// puts first (scheme, global presence, absmean-two-level) have passed: the library is given
// a shape it must itself reject as shape-overflow, and its answer decides which error wins.
Shape library_shape(const ShapeArg& s) {
  if (!s.overflow) return s.dims;
  return Shape(kMaxRank + 1, static_cast<std::size_t>(-1));
}

Error with_shape_message(Error e, const ShapeArg& s) {
  if (s.overflow && e.kind == ErrorKind::shape_overflow) e.message = "--shape: " + *s.overflow;
  return e;
}

Error overflow_error(const ShapeArg& s) {
  return Error{ErrorKind::shape_overflow, "--shape: " + *s.overflow};
}

std::string shape_text(const Shape& dims) {
  if (dims.empty()) return "scalar (rank 0)";
  std::string out;
  for (std::size_t d : dims) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

std::string join_floats(std::span<const float> xs) {
  if (xs.empty()) return "(none)";
  std::string out;
  for (float x : xs) out += (out.empty() ? "" : ", ") + format_float(x);
  return out;
}

std::string global_text(std::optional<float> g) { return g ? format_float(*g) : "none"; }

Json global_json(std::optional<float> g) { return g ? json_float(*g) : Json(nullptr); }

std::string code_text(std::int32_t code, const Scheme& s) {
  std::string out = std::to_string(code);
  if (s.mode == Mode::symmetric && info(s.value).minifloat) {
    char buf[16];
    std::snprintf(buf, sizeof buf, " (0x%02x)", static_cast<unsigned>(code) & 0xFFu);
    out += buf;
  }
  return out;
}

void print_row(const std::string& a, const std::string& b, const std::string& c) {
  std::printf("%8s  %16s  %12s\n", a.c_str(), b.c_str(), c.c_str());
}

int cmd_quantize(const Options& o) {
  const Inputs in = common_inputs(o);
  std::optional<std::vector<float>> scales;
  std::optional<float> global;
  if (o.scales) scales = parse_float_list(*o.scales, "--scales");
  if (o.global) global = parse_float(*o.global, "--global");
  const std::vector<float> data = read_floats(std::cin);

  const Result<Scheme> scheme = parse_scheme(o.scheme);
  if (!scheme) return report(scheme.error(), o.json);
  if (global && !scales) {
    // SPEC §3's first checks still come first: the scheme's own errors, then a global given to a
    // one-level scheme. Only a two-level scheme is left, whose global calibration computes.
    if (const Status valid = validate_scheme(*scheme); !valid.ok()) return report(valid.error(), o.json);
    if (!scheme->two_level()) {
      return report(Error{ErrorKind::unexpected_global_scale,
                          "a one-level scheme takes no global scale: " + print_scheme(*scheme)},
                    o.json);
    }
    throw UsageError("--global needs --scales for a two-level scheme (without --scales, quantize "
                     "calibrates the scales and the global itself)");
  }
  const Shape shape = library_shape(in.shape);

  const bool calibrated = !scales.has_value();
  if (calibrated) {
    Result<QParams> q = in.impl.calibrate(*scheme, shape, data, calibration_of(o.method));
    if (!q) return report(with_shape_message(q.error(), in.shape), o.json);
    scales = std::move(q.value().scales);
    global = q->global;
  }
  const Result<QTensor> t =
      in.impl.quantize(*scheme, shape, data, *scales, global, table_of(in));
  if (!t) return report(with_shape_message(t.error(), in.shape), o.json);
  if (in.shape.overflow) return report(overflow_error(in.shape), o.json);
  const Result<std::vector<std::uint8_t>> bytes = in.impl.serialize(*t);
  if (!bytes) return report(bytes.error(), o.json);

  if (o.json) {
    Json j;
    j["codes"] = Json::array();
    for (std::int32_t c : t->codes) j["codes"].push_back(static_cast<std::int64_t>(c));
    j["scales"] = json_floats(t->scales);
    j["global"] = global_json(t->global);
    j["bytes"] = to_hex(*bytes);
    print_json(j);
    return kExitOk;
  }
  std::printf("scheme  %s\nshape   %s\n", print_scheme(t->scheme).c_str(),
              shape_text(t->shape).c_str());
  print_row("index", "input", "code");
  for (std::size_t i = 0; i < t->codes.size() && i < data.size(); ++i) {
    print_row(std::to_string(i), format_float(data[i]), code_text(t->codes[i], t->scheme));
  }
  std::printf("scales  %s%s\n", join_floats(t->scales).c_str(),
              calibrated ? ("   (calibrated: " + o.method + ", stored after round-up)").c_str()
                         : "   (stored, after round-up)");
  std::printf("global  %s\nbytes   %s   (%zu bytes)\n", global_text(t->global).c_str(),
              to_hex(*bytes).c_str(), bytes->size());
  return kExitOk;
}

// Prints dequantized values; `t` is the parsed tensor, whose codes and scales go beside them
// (null when a plugin parsed the bytes itself).
int print_dequantized(const Options& o, const Scheme& s, const Shape& shape, const std::vector<float>& values,
                      const QTensor* t) {
  if (o.json) {
    Json j;
    j["values"] = json_floats(values);
    print_json(j);
    return kExitOk;
  }
  std::printf("scheme  %s\nshape   %s\n", print_scheme(s).c_str(), shape_text(shape).c_str());
  print_row("index", t ? "code" : "", "value");
  for (std::size_t i = 0; i < values.size() && (!t || i < t->codes.size()); ++i) {
    print_row(std::to_string(i), t ? code_text(t->codes[i], t->scheme) : "", format_float(values[i]));
  }
  if (t) std::printf("scales  %s\nglobal  %s\n", join_floats(t->scales).c_str(), global_text(t->global).c_str());
  return kExitOk;
}

int cmd_dequantize(const Options& o) {
  const Inputs in = common_inputs(o);
  const std::vector<std::uint8_t> bytes = parse_hex(o.bytes);

  const Result<Scheme> scheme = parse_scheme(o.scheme);
  if (!scheme) return report(scheme.error(), o.json);
  const Shape shape = library_shape(in.shape);

  if (in.impl.object && in.impl.object->supports(Op::dequantize)) {
    // A plugin parses the untrusted bytes itself (its dequantize is handed them as they are).
    if (in.shape.overflow) return report(overflow_error(in.shape), o.json);
    const Result<std::vector<float>> v = in.impl.object->dequantize_bytes(*scheme, shape, bytes, table_of(in));
    if (!v) return report(with_shape_message(v.error(), in.shape), o.json);
    return print_dequantized(o, *scheme, shape, *v, nullptr);
  }
  const Result<QTensor> t = in.impl.parse(*scheme, shape, bytes, table_of(in));
  if (!t) return report(with_shape_message(t.error(), in.shape), o.json);
  if (in.shape.overflow) return report(overflow_error(in.shape), o.json);
  const Result<std::vector<float>> values = in.impl.dequantize(*t, table_of(in));
  if (!values) return report(values.error(), o.json);
  return print_dequantized(o, t->scheme, t->shape, *values, &t.value());
}

int cmd_calibrate(const Options& o) {
  const Inputs in = common_inputs(o);
  if (!in.impl.calibrates()) {
    throw UsageError("--impl: " + in.impl.name + " is a plugin, whose ABI has no calibrate "
                     "(use reference or optimized)");
  }
  const std::vector<float> data = read_floats(std::cin);

  const Result<Scheme> scheme = parse_scheme(o.scheme);
  if (!scheme) return report(scheme.error(), o.json);
  const Result<QParams> q =
      in.impl.calibrate(*scheme, library_shape(in.shape), data, calibration_of(o.method));
  if (!q) return report(with_shape_message(q.error(), in.shape), o.json);
  if (in.shape.overflow) return report(overflow_error(in.shape), o.json);

  if (o.json) {
    Json j;
    j["scales"] = json_floats(q->scales);
    j["global"] = global_json(q->global);
    print_json(j);
    return kExitOk;
  }
  std::printf("scheme  %s\nshape   %s\nmethod  %s\n", print_scheme(*scheme).c_str(),
              shape_text(in.shape.dims).c_str(), o.method.c_str());
  std::printf("scales  %s   (raw, before round-up)\nglobal  %s\n",
              join_floats(q->scales).c_str(), global_text(q->global).c_str());
  return kExitOk;
}

int cmd_scheme(const std::string& text, bool json) {
  const Result<Scheme> s = parse_scheme(text);
  if (!s) return report(s.error(), json);
  const Status valid = validate_scheme(*s);
  if (!valid.ok()) {
    // The text parses, so its canonical form exists; the static checks still reject it.
    if (!json) std::printf("%s\n", print_scheme(*s).c_str());
    return report(valid.error(), json);
  }
  if (json) {
    Json j;
    j["scheme"] = print_scheme(*s);
    print_json(j);
  } else {
    std::printf("%s\n", print_scheme(*s).c_str());
  }
  return kExitOk;
}

int cmd_errors(bool json) {
  Json names = Json::array();
  for (const auto& [kind, name] : kErrorKinds) {
    if (json) {
      names.push_back(std::string(name));
    } else {
      std::printf("%.*s\n", static_cast<int>(name.size()), name.data());
    }
  }
  if (json) {
    Json j;
    j["errors"] = names;
    print_json(j);
  }
  return kExitOk;
}

int cmd_targets(bool json) {
  Json names = Json::array();
  for (const Impl& impl : impls()) {
    if (json) {
      names.push_back(impl.name);
    } else {
      std::printf("%s\n", impl.name.c_str());
    }
  }
  // Then every target compiled in and those this CPU supports (best first), as comment lines
  // that a reader of the names above can skip.
  const TargetReport report = target_report();
  if (json) {
    Json j;
    j["targets"] = names;
    j["compiled"] = report.compiled;
    j["supported"] = report.supported;
    print_json(j);
  } else {
    auto line = [](const char* head, const std::vector<std::string>& list) {
      std::string text = head;
      for (const std::string& n : list) text += " " + n;
      std::printf("%s\n", text.c_str());
    };
    line("# compiled in:", report.compiled);
    line("# supported by this CPU:", report.supported);
  }
  return kExitOk;
}

void add_tensor_options(CLI::App* cmd, Options& o) {
  cmd->add_option("--scheme", o.scheme, "scheme text, e.g. value=q8s,store=native or nvfp4")
      ->required();
  cmd->add_option("--shape", o.shape, "dims joined by x (2x3, 8, 0x4); '' or scalar is rank 0")
      ->required();
  cmd->add_option("--impl", o.impl, "implementation (qconform targets lists them)")
      ->capture_default_str();
  cmd->add_flag("--json", o.json, "print one JSON object on stdout");
}

int run(int argc, char** argv) {
  CLI::App app{"qconform: bit-exact conformance harness for tensor quantizers"};
  app.set_version_flag("--version", std::string("qconform ") + QCONFORM_VERSION);
  app.require_subcommand(1);
  Options o;
  std::string scheme_text;

  CLI::App* quantize =
      app.add_subcommand("quantize", "quantize the floats on stdin (calibrates without --scales)");
  add_tensor_options(quantize, o);
  quantize->add_option("--scales", o.scales, "comma-separated raw scales ('' is none)");
  quantize->add_option("--global", o.global, "per-tensor global scale of a two-level scheme");
  quantize->add_option("--table", o.table, "comma-separated lookup table (mode=lookup)");
  quantize->add_option("--method", o.method, "calibration without --scales")
      ->check(CLI::IsMember({"minmax", "absmean"}))
      ->capture_default_str();

  CLI::App* dequantize =
      app.add_subcommand("dequantize", "parse serialized bytes and dequantize them");
  add_tensor_options(dequantize, o);
  dequantize->add_option("--bytes", o.bytes, "serialized layout in hex")->required();
  dequantize->add_option("--table", o.table, "comma-separated lookup table (mode=lookup)");

  CLI::App* calibrate = app.add_subcommand("calibrate", "calibrate scales for the floats on stdin");
  add_tensor_options(calibrate, o);
  calibrate->add_option("--method", o.method, "calibration method")
      ->check(CLI::IsMember({"minmax", "absmean"}))
      ->capture_default_str();

  CLI::App* scheme = app.add_subcommand("scheme", "print the canonical form of a scheme");
  scheme->add_option("text", scheme_text, "scheme text")->required();
  scheme->add_flag("--json", o.json, "print one JSON object on stdout");

  CLI::App* errors = app.add_subcommand("errors", "list the error kinds in precedence order");
  errors->add_flag("--json", o.json, "print one JSON object on stdout");
  CLI::App* targets = app.add_subcommand("targets", "list the implementations available here");
  targets->add_flag("--json", o.json, "print one JSON object on stdout");

  const auto extra = add_extra_commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(e);  // --help, --version
    }
    return report_usage(std::string(e.what()) + " (run with --help for usage)");
  }

  try {
    if (quantize->parsed()) return cmd_quantize(o);
    if (dequantize->parsed()) return cmd_dequantize(o);
    if (calibrate->parsed()) return cmd_calibrate(o);
    if (scheme->parsed()) return cmd_scheme(scheme_text, o.json);
    if (errors->parsed()) return cmd_errors(o.json);
    if (targets->parsed()) return cmd_targets(o.json);
    if (const int status = extra->dispatch(); status >= 0) return status;
  } catch (const UsageError& e) {
    return report_usage(e.what());
  }
  return report_usage("no subcommand (run with --help for usage)");
}

}  // namespace
}  // namespace qconform::cli

int main(int argc, char** argv) {
  using namespace qconform::cli;
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("qconform: internal error: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qconform: internal error: %s\n", one_line(e.what()).c_str());
  } catch (...) {
    std::fputs("qconform: internal error: unknown exception\n", stderr);
  }
  return kExitInternal;
}
