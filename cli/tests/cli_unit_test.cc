// The CLI's literal parsers and its float printer: every printed float must read back to its
// exact bits, both through strtof and through strtod followed by a rounding to f32.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "literals.h"
#include "output.h"

namespace qconform::cli {
namespace {

std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

// Both readings of SPEC's "reading it as a double and rounding to f32 gives the exact bits".
void expect_reads_back(float x) {
  const std::string text = exact_float_text(x);
  EXPECT_EQ(bits(std::strtof(text.c_str(), nullptr)), bits(x)) << text;
  EXPECT_EQ(bits(static_cast<float>(std::strtod(text.c_str(), nullptr))), bits(x)) << text;
}

TEST(ExactFloatText, DoubleRoundingTrap) {
  // 0x15ae43fd: its shortest f32 decimal 7.038531e-26, read as a double, rounds to 0x15ae43fe.
  const float trap = std::bit_cast<float>(std::uint32_t{0x15ae43fd});
  EXPECT_NE(exact_float_text(trap), "7.038531e-26");
  expect_reads_back(trap);
  expect_reads_back(-trap);
}

TEST(ExactFloatText, SignedZeroAndIntegers) {
  EXPECT_EQ(exact_float_text(-0.0f), "-0.0");
  EXPECT_EQ(exact_float_text(0.0f), "0.0");
  EXPECT_EQ(exact_float_text(2.0f), "2.0");
  EXPECT_EQ(exact_float_text(0.014173228f), "0.014173228");
}

TEST(ExactFloatText, Extremes) {
  for (float x : {std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(), 0x1.fffffep-127f, 448.0f, 57344.0f}) {
    expect_reads_back(x);
    expect_reads_back(-x);
  }
}

// A stride prime to 2^32 visits every exponent and many mantissas quickly.
TEST(ExactFloatText, SweepOfPatterns) {
  for (std::uint64_t b = 0; b < 0x7F800000u; b += 65521) {
    expect_reads_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  }
}

TEST(JsonText, NonFiniteAsStringsAndKeyOrder) {
  Json j;
  j["values"] = json_floats(std::vector<float>{std::numeric_limits<float>::infinity(),
                                               -std::numeric_limits<float>::infinity(),
                                               std::numeric_limits<float>::quiet_NaN(), -0.0f});
  j["global"] = nullptr;
  EXPECT_EQ(json_text(j), R"({"values":["inf","-inf","nan",-0.0],"global":null})");
}

TEST(JsonText, InvalidUtf8IsReplacedNotThrown) {
  Json j;
  j["message"] = std::string("bad \xff byte");
  EXPECT_NO_THROW({ EXPECT_NE(json_text(j).find("bad "), std::string::npos); });
}

TEST(ParseFloat, StrtofSyntax) {
  EXPECT_EQ(parse_float("0x1.8p-3", "x"), 0.1875f);
  EXPECT_EQ(bits(parse_float("-0", "x")), bits(-0.0f));
  EXPECT_TRUE(std::isnan(parse_float("nan", "x")));
  EXPECT_EQ(parse_float("-inf", "x"), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(parse_float("1e50", "x"), std::numeric_limits<float>::infinity());  // strtof's value
}

TEST(ParseFloat, WholeTokenOnly) {
  for (const char* bad : {"", " 1", "1.5x", "1e", "0x", "--1", "1,2", "nan!"}) {
    EXPECT_THROW((void)parse_float(bad, "x"), UsageError) << bad;
  }
  EXPECT_THROW((void)parse_float(std::string_view("1\0", 2), "x"), UsageError);
}

TEST(ParseFloatList, EmptyMeansNone) {
  EXPECT_TRUE(parse_float_list("", "--scales").empty());
  EXPECT_EQ(parse_float_list("0.5, 0.125", "--scales"), (std::vector<float>{0.5f, 0.125f}));
  EXPECT_THROW((void)parse_float_list("0.5,", "--scales"), UsageError);
  EXPECT_THROW((void)parse_float_list(",", "--scales"), UsageError);
}

TEST(ReadFloats, AnyWhitespace) {
  std::istringstream in(" 1\t-0x1p-1\n\n inf \r\n");
  const std::vector<float> v = read_floats(in);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[1], -0.5f);
  std::istringstream bad("1 2x");
  EXPECT_THROW((void)read_floats(bad), UsageError);
}

TEST(ParseShape, RankZeroAndDims) {
  EXPECT_TRUE(parse_shape("").dims.empty());
  EXPECT_TRUE(parse_shape("scalar").dims.empty());
  EXPECT_EQ(parse_shape("0x4").dims, (Shape{0, 4}));
  EXPECT_EQ(parse_shape("007").dims, (Shape{7}));
  EXPECT_FALSE(parse_shape("2x3").overflow);
}

TEST(ParseShape, GarbageIsUsageOverflowIsNot) {
  for (const char* bad : {"x", "2x", "x3", "2xx3", "-1", "+1", "2X3", "2x3 ", "a", "1.5"}) {
    EXPECT_THROW((void)parse_shape(bad), UsageError) << bad;
  }
  EXPECT_FALSE(parse_shape("18446744073709551615").overflow);
  EXPECT_TRUE(parse_shape("18446744073709551616").overflow);
  EXPECT_TRUE(parse_shape("2x99999999999999999999999").overflow);
}

TEST(Hex, RoundTripBothCases) {
  EXPECT_EQ(parse_hex("00fFaB"), (std::vector<std::uint8_t>{0x00, 0xff, 0xab}));
  EXPECT_TRUE(parse_hex("").empty());
  EXPECT_EQ(to_hex(parse_hex("81B90023")), "81b90023");
  EXPECT_THROW((void)parse_hex("abc"), UsageError);
  EXPECT_THROW((void)parse_hex("0g"), UsageError);
  EXPECT_THROW((void)parse_hex("0 "), UsageError);
}

TEST(OneLine, ControlCharactersEscaped) {
  EXPECT_EQ(one_line("a\nb\x01"), "a\\x0ab\\x01");
  EXPECT_EQ(quote("abcdef", 3), "'abc...'");
}

}  // namespace
}  // namespace qconform::cli
