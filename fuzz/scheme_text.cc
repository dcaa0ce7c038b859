// Fuzz target scheme_text: arbitrary text to the scheme parser.
//
// Invariant: parse_scheme of any bytes either fails with invalid-scheme (never another kind,
// never a crash) or gives a scheme whose canonical print parses back to an equal scheme and
// prints identically (SPEC §1: parse(print(s)) == s); validate_scheme of it returns the same
// answer for both. Aborts when any of this fails.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "check.h"
#include "qconform/fuzz_producer.h"
#include "qconform/scheme.h"

using namespace qconform;
using namespace qconform::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const Context ctx([input] { return describe("scheme_text", input); });
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const Result<Scheme> parsed = parse_scheme(text);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.kind() == ErrorKind::invalid_scheme, "unparsable text gave ", to_string(parsed.kind()));
    FUZZ_CHECK(!parsed.error().message.empty(), "an error must say what is wrong");
    return 0;
  }
  const std::string printed = print_scheme(parsed.value());
  const Result<Scheme> again = parse_scheme(printed);
  FUZZ_CHECK(again.ok(), "the canonical print '", printed, "' does not parse: ",
             again.ok() ? std::string() : again.error().message);
  FUZZ_CHECK(again.value() == parsed.value(), "'", printed, "' parses to a different scheme: '",
             print_scheme(again.value()), "'");
  FUZZ_CHECK(print_scheme(again.value()) == printed, "printing is not canonical: '", printed, "' then '",
             print_scheme(again.value()), "'");

  const Status v1 = validate_scheme(parsed.value());
  const Status v2 = validate_scheme(again.value());
  FUZZ_CHECK(v1.ok() == v2.ok() && (v1.ok() || v1.kind() == v2.kind()), "validation differs after a round trip");
  return 0;
}
