#include "hpack/field_validation.h"

#include <cstring>
#include <memory>
#include <string>

#include "gtest/gtest.h"

// field_validation_nosse2_test builds this file with the SSE2 routes compiled
// out (the #else paths of every other target).
#if defined(HPACK_FIELD_VALIDATION_TEST_NO_SSE2) && defined(__SSE2__)
#error "field_validation_nosse2_test still sees __SSE2__"
#endif

namespace hpack {
namespace {

// RFC 9110 tchar minus uppercase, spelled out independently of the
// implementation.
bool SpecNameChar(int c) {
  const std::string extra = "!#$%&'*+-.^_`|~";
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         extra.find(static_cast<char>(c)) != std::string::npos;
}

TEST(FieldValidationTest, ValidNames) {
  for (const char* name :
       {"a", "content-type", ":path", ":authority", "x-foo_bar.baz~", "0",
        "!#$%&'*+-.^_`|~", "grpc-timeout", "te"}) {
    EXPECT_TRUE(IsValidFieldName(name)) << name;
  }
}

TEST(FieldValidationTest, EveryOctetAsANameChar) {
  for (int c = 0; c < 256; ++c) {
    const std::string one(1, static_cast<char>(c));
    const std::string middle = "a" + one + "b";
    const std::string pseudo = ":" + one;
    EXPECT_EQ(IsValidFieldName(one), SpecNameChar(c)) << c;
    EXPECT_EQ(IsValidFieldName(middle), SpecNameChar(c)) << c;
    EXPECT_EQ(IsValidFieldName(pseudo), SpecNameChar(c)) << c;
  }
}

// The name check's 16-lane fast path against the table (its definition):
// every octet at every position of every length up to 40, after a ':' or
// not, on a background of fast-path octets and on one of other valid ones
// ('_'), whose names the fast path hands to the table.
TEST(FieldValidationTest, NameCheckEqualsTheTableForEveryOctetAndPosition) {
  for (const char* prefix : {"", ":"}) {
    for (char background : {'a', 'z', '0', '9', '-', '_'}) {
      for (size_t len = 1; len <= 40; ++len) {
        for (size_t pos = 0; pos < len; ++pos) {
          for (int c = 0; c < 256; ++c) {
            std::string n = prefix + std::string(len, background);
            n[n.size() - len + pos] = static_cast<char>(c);
            ASSERT_EQ(IsValidFieldName(n),
                      field_validation_internal::IsValidFieldNameByTable(n))
                << "'" << prefix << "' len " << len << " pos " << pos
                << " octet " << c << " background " << background;
            const bool pseudo = c == ':' && n.size() == len && pos == 0;
            ASSERT_EQ(IsValidFieldName(n), pseudo ? len > 1 : SpecNameChar(c))
                << "'" << prefix << "' len " << len << " pos " << pos
                << " octet " << c << " background " << background;
          }
        }
      }
    }
  }
}

TEST(FieldValidationTest, InvalidNames) {
  EXPECT_FALSE(IsValidFieldName(""));
  EXPECT_FALSE(IsValidFieldName(":"));       // Pseudo-header without a name.
  EXPECT_FALSE(IsValidFieldName("::path"));  // Colon only as the first octet.
  EXPECT_FALSE(IsValidFieldName("a:b"));
  EXPECT_FALSE(IsValidFieldName("path:"));
  EXPECT_FALSE(IsValidFieldName("Content-Type"));  // Uppercase.
  EXPECT_FALSE(IsValidFieldName("content-typE"));
  EXPECT_FALSE(IsValidFieldName(":Path"));
  EXPECT_FALSE(IsValidFieldName("a b"));  // SP.
  EXPECT_FALSE(IsValidFieldName(" a"));
  EXPECT_FALSE(IsValidFieldName("a\t"));
  EXPECT_FALSE(IsValidFieldName(std::string("a\0b", 3)));
  EXPECT_FALSE(IsValidFieldName("a\x7f"));        // DEL.
  EXPECT_FALSE(IsValidFieldName("caf\xc3\xa9"));  // Non-ASCII.
  EXPECT_FALSE(IsValidFieldName("a\"b"));         // Separators.
  EXPECT_FALSE(IsValidFieldName("a/b"));
  EXPECT_FALSE(IsValidFieldName("a,b"));
  // A long name with one bad octet at the very end: the accumulator sees it.
  EXPECT_FALSE(IsValidFieldName(std::string(1000, 'a') + "A"));
}

TEST(FieldValidationTest, ValidValues) {
  for (const char* value :
       {"", "a", "a b", "a\tb", "gzip, deflate", "\"quoted\"", "caf\xc3\xa9",
        "\x01", "\x7f", "x\x1fy"}) {
    EXPECT_TRUE(IsValidFieldValue(value)) << value;
  }
}

TEST(FieldValidationTest, InvalidValues) {
  EXPECT_FALSE(IsValidFieldValue(std::string("\0", 1)));
  EXPECT_FALSE(IsValidFieldValue(std::string("a\0b", 3)));
  EXPECT_FALSE(IsValidFieldValue("a\rb"));
  EXPECT_FALSE(IsValidFieldValue("a\nb"));
  EXPECT_FALSE(IsValidFieldValue("a\r\nb"));
  EXPECT_FALSE(IsValidFieldValue(" a"));   // Leading SP.
  EXPECT_FALSE(IsValidFieldValue("a "));   // Trailing SP.
  EXPECT_FALSE(IsValidFieldValue("\ta"));  // Leading HTAB.
  EXPECT_FALSE(IsValidFieldValue("a\t"));  // Trailing HTAB.
  EXPECT_FALSE(IsValidFieldValue(" "));
  EXPECT_FALSE(IsValidFieldValue("\t"));
  EXPECT_FALSE(
      IsValidFieldValue(std::string(1000, 'v') + "\n" + std::string(10, 'v')));
}

TEST(FieldValidationTest, ValidateFieldReportsEachPart) {
  EXPECT_EQ(ValidateField("a", "b"), kFieldValid);
  EXPECT_EQ(ValidateField("A", "b"), kFieldNameInvalid);
  EXPECT_EQ(ValidateField("a", "b\n"), kFieldValueInvalid);
  EXPECT_EQ(ValidateField("A", "b\n"), kFieldNameInvalid | kFieldValueInvalid);
}

// The word-at-a-time value check against the table (its definition): every
// octet at every position of every length up to 40, on a valid background.
TEST(FieldValidationTest, ValueCheckEqualsTheTableForEveryOctetAndPosition) {
  for (size_t len = 1; len <= 40; ++len) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (int c = 0; c < 256; ++c) {
        std::string v(len, 'x');
        v[pos] = static_cast<char>(c);
        ASSERT_EQ(IsValidFieldValue(v),
                  field_validation_internal::IsValidFieldValueByTable(v))
            << "len " << len << " pos " << pos << " octet " << c;
      }
    }
  }
  EXPECT_TRUE(IsValidFieldValue(""));
  // Two octets varied together (borrows between neighbours in the SWAR test).
  for (size_t len : {size_t{5}, size_t{8}, size_t{9}, size_t{16}, size_t{17}}) {
    for (int c = 0; c < 256; ++c) {
      for (int d :
           {0x00, 0x01, 0x09, 0x0a, 0x0b, 0x0d, 0x0e, 0x20, 0x7f, 0x80, 0xff}) {
        for (size_t pos = 0; pos + 1 < len; ++pos) {
          std::string v(len, 'x');
          v[pos] = static_cast<char>(c);
          v[pos + 1] = static_cast<char>(d);
          ASSERT_EQ(IsValidFieldValue(v),
                    field_validation_internal::IsValidFieldValueByTable(v))
              << len << " " << pos << " " << c << " " << d;
        }
      }
    }
  }
}

// Every route reads only the string's own octets (the overlapping loads
// included): each string here is a heap block of exactly its length, so under
// AddressSanitizer (--config=asan) a read past either end fails the test.
TEST(FieldValidationTest, ChecksReadOnlyTheStringsOctets) {
  for (size_t len = 0; len <= 40; ++len) {
    for (char fill : {'a', '_'}) {
      const std::unique_ptr<char[]> buf(new char[len]);
      std::memset(buf.get(), fill, len);
      const std::string_view s(buf.get(), len);
      EXPECT_EQ(IsValidFieldName(s), len > 0) << len;
      EXPECT_TRUE(IsValidFieldValue(s)) << len;
      if (len > 0) buf[0] = ':';
      EXPECT_EQ(IsValidFieldName(s), len > 1) << len;
    }
  }
}

TEST(FieldValidationTest, HasUpperAsciiAtEveryPositionAndOctet) {
  for (size_t len = 1; len <= 19; ++len) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (int c = 0; c < 256; ++c) {
        std::string s(len, 'a');
        s[pos] = static_cast<char>(c);
        ASSERT_EQ(HasUpperAscii(s), c >= 'A' && c <= 'Z')
            << len << " " << pos << " " << c;
      }
    }
  }
  EXPECT_FALSE(HasUpperAscii(""));
}

TEST(FieldValidationTest, ToLowerAsciiReturnsTheInputWhenAlreadyLower) {
  const std::string in =
      "content-type: application/grpc \xc1\xda";  // 0xc1 & 0x7f == 'A'.
  std::string storage = "untouched";
  const std::string_view out = ToLowerAscii(in, &storage);
  EXPECT_EQ(out.data(), in.data());
  EXPECT_EQ(out.size(), in.size());
  EXPECT_EQ(storage, "untouched");
}

TEST(FieldValidationTest, ToLowerAsciiLowersOnlyAsciiUppercase) {
  std::string in;
  for (int c = 0; c < 256; ++c) in.push_back(static_cast<char>(c));
  in += in;  // 512 octets, every value at two alignments.
  std::string expected = in;
  for (char& c : expected) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  std::string storage;
  EXPECT_EQ(ToLowerAscii(in, &storage), expected);
  for (size_t len = 0; len < 40; ++len) {
    const std::string sub =
        in.substr(60, len);  // Straddles 'A'..'Z' at odd offsets.
    EXPECT_EQ(ToLowerAscii(sub, &storage), expected.substr(60, len)) << len;
  }
  std::string in_place = "Content-Type";
  ToLowerAsciiInPlace(&in_place);
  EXPECT_EQ(in_place, "content-type");
}

}  // namespace
}  // namespace hpack
