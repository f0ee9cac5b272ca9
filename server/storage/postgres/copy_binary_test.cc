#include "server/storage/postgres/copy_binary.h"

#include <string>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

TEST(CopyBinaryTest, EmptyDataIsHeaderAndTrailer) {
  // 11-byte signature, flags 0 (4 bytes), extension length 0 (4 bytes),
  // trailer -1 (2 bytes): 21 bytes.
  std::string d = CopyBinary().Finish();
  ASSERT_EQ(d.size(), 21u);
  EXPECT_EQ(d.substr(0, 11), std::string("PGCOPY\n\377\r\n\0", 11));
  EXPECT_EQ(d.substr(11), Bytes({0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF}));
}

TEST(CopyBinaryTest, FieldsAreLengthPrefixedBigEndian) {
  CopyBinary c;
  c.BeginRow(5);
  c.AddBytes("ab");
  c.AddInt8(258);    // 0x102
  c.AddInt4(-2);     // 0xFFFFFFFE
  c.AddFloat8(1.5);  // 0x3FF8000000000000
  c.AddOptFloat8(std::nullopt);
  std::string d = c.Finish();
  std::string row = d.substr(19, d.size() - 19 - 2);
  EXPECT_EQ(
      row,
      Bytes({0,    5,                           // 5 fields
             0,    0,    0,    2,   'a',  'b',  // "ab"
             0,    0,    0,    8,   0,    0,    0,    0,    0, 0, 1, 2,  // 258
             0,    0,    0,    4,   0xFF, 0xFF, 0xFF, 0xFE,              // -2
             0,    0,    0,    8,   0x3F, 0xF8, 0,    0,    0, 0, 0, 0,  // 1.5
             0xFF, 0xFF, 0xFF, 0xFF}));                                  // NULL
}

}  // namespace
}  // namespace tracehealth::server
