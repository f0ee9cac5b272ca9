#include "common/escape.h"

#include <string>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(EscapeTextTest, KeepsPrintableTextAndUtf8) {
  EXPECT_EQ(EscapeText(""), "");
  EXPECT_EQ(EscapeText("db-17 role=web, zone=\"us-east\""),
            "db-17 role=web, zone=\"us-east\"");
  // é (2 bytes), € (3), 𝄞 (4).
  EXPECT_EQ(EscapeText("caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e");
}

TEST(EscapeTextTest, EscapesC0ControlsAndDel) {
  // A forged line, a screen clear, a bell.
  EXPECT_EQ(EscapeText("web\nfake-host  STALL"), "web\\nfake-host  STALL");
  EXPECT_EQ(EscapeText("\x1b[2J\x1b[H"), "\\x1b[2J\\x1b[H");
  EXPECT_EQ(EscapeText("ding\x07"), "ding\\x07");
  EXPECT_EQ(EscapeText("a\rb\tc"), "a\\rb\\tc");
  EXPECT_EQ(EscapeText(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(EscapeText("\x01\x1f\x7f"), "\\x01\\x1f\\x7f");
  // Backslash doubles, so "\\n" (two characters) differs from a newline.
  EXPECT_EQ(EscapeText("a\\nb"), "a\\\\nb");
  // Space (0x20) and tilde (0x7e) are the printable boundaries.
  EXPECT_EQ(EscapeText(" ~"), " ~");
}

TEST(EscapeTextTest, EscapesC1AndLineAndBidiControls) {
  // U+0080, U+009B (CSI), U+009F; U+00A0 is printable (no-break space).
  EXPECT_EQ(EscapeText("\xc2\x80\xc2\x9b\xc2\x9f\xc2\xa0"),
            "\\u0080\\u009b\\u009f\xc2\xa0");
  EXPECT_EQ(EscapeText("a\xe2\x80\xa8"
                       "b\xe2\x80\xa9"),
            "a\\u2028b\\u2029");
  // U+202E (right-to-left override), U+2066 (left-to-right isolate); U+2027
  // and U+202F are printable neighbours.
  EXPECT_EQ(EscapeText("\xe2\x80\xae\xe2\x81\xa6\xe2\x80\xa7\xe2\x80\xaf"),
            "\\u202e\\u2066\xe2\x80\xa7\xe2\x80\xaf");
}

TEST(EscapeTextTest, EscapesInvalidUtf8ByteByByte) {
  EXPECT_EQ(EscapeText("\xc3\x28"), "\\xc3(");      // bad continuation
  EXPECT_EQ(EscapeText("\x80x"), "\\x80x");         // stray continuation
  EXPECT_EQ(EscapeText("\xe2\x82"), "\\xe2\\x82");  // truncated
  EXPECT_EQ(EscapeText("\xc0\xaf"), "\\xc0\\xaf");  // overlong '/'
  EXPECT_EQ(EscapeText("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // surrogate
  EXPECT_EQ(EscapeText("\xf4\x90\x80\x80"),
            "\\xf4\\x90\\x80\\x80");  // U+110000
  EXPECT_EQ(EscapeText("\xff"), "\\xff");
}

TEST(TruncateTextTest, CutsLongTextAndSaysHowLong) {
  EXPECT_EQ(TruncateText("abc", 3), "abc");
  EXPECT_EQ(TruncateText("abcd", 3), "abc…(4 bytes)");
  EXPECT_EQ(TruncateText(std::string(20000, 'h'), 128),
            std::string(128, 'h') + "…(20000 bytes)");
  // "aé" is 3 bytes: a cut at 2 would split é, so only "a" stays.
  EXPECT_EQ(TruncateText("a\xc3\xa9z", 2), "a…(4 bytes)");
  EXPECT_EQ(TruncateText("a\xc3\xa9z", 3), "a\xc3\xa9…(4 bytes)");
}

TEST(EchoTextTest, TruncatesThenEscapes) {
  const std::string id = std::string(127, 'x') + "\n" + std::string(100, 'y');
  // 128 bytes kept (127 x and the newline), then escaped.
  EXPECT_EQ(EchoText(id), std::string(127, 'x') + "\\n…(228 bytes)");
  EXPECT_EQ(EchoText("short\x1b"), "short\\x1b");
}

}  // namespace
}  // namespace tracehealth
