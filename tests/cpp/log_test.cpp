// BRAZE_LOG's levels (graph/log.h); what each level prints is checked from
// Python (tests/python/test_dump.py), where the variable can be set per process.
#include <gtest/gtest.h>

#include "graph/log.h"

namespace braze {
namespace {

TEST(Log, ParsesTheLevelsAndOffSpellings) {
  EXPECT_EQ(parse_log_level(""), LogLevel::Off);
  EXPECT_EQ(parse_log_level("0"), LogLevel::Off);
  EXPECT_EQ(parse_log_level("off"), LogLevel::Off);
  EXPECT_EQ(parse_log_level("info"), LogLevel::Info);
  EXPECT_EQ(parse_log_level("debug"), LogLevel::Debug);
}

TEST(Log, AnUnknownLevelNamesTheValueAndTheChoices) {
  try {
    parse_log_level("verbose");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "BRAZE_LOG='verbose' is not a log level; expected info or debug (or unset for none)");
  }
}

}  // namespace
}  // namespace braze
