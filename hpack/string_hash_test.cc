#include "hpack/string_hash.h"

#include <cstddef>
#include <memory>
#include <string_view>

#include "gtest/gtest.h"

namespace hpack {
namespace {

// A heap buffer of exactly n octets (none past it), so AddressSanitizer
// reports any read beyond a string's end.
std::unique_ptr<char[]> ExactBuffer(size_t n, size_t seed) {
  std::unique_ptr<char[]> p(new char[n]);
  for (size_t i = 0; i < n; ++i) {
    p[i] = static_cast<char>((i * 37 + seed * 11 + 5) & 0xff);
  }
  return p;
}

// BytesEqual over every path (0, 1-3, 4-7, 8-16, 17-48, memcmp above 48):
// equal strings in separate buffers, and every one-octet difference (each
// of the 255 other values) at every position, both argument orders.
TEST(BytesEqualTest, EveryOneOctetDifferenceAtEveryPosition) {
  for (size_t n = 0; n <= 70; ++n) {
    const std::unique_ptr<char[]> a = ExactBuffer(n, n);
    const std::unique_ptr<char[]> b = ExactBuffer(n, n);
    const std::string_view sa(a.get(), n);
    const std::string_view sb(b.get(), n);
    ASSERT_TRUE(BytesEqual(sa, sb)) << n;
    for (size_t i = 0; i < n; ++i) {
      const char original = b[i];
      for (int x = 1; x < 256; ++x) {
        b[i] = static_cast<char>(original ^ x);
        ASSERT_FALSE(BytesEqual(sa, sb))
            << "length " << n << " position " << i << " xor " << x;
        ASSERT_FALSE(BytesEqual(sb, sa))
            << "length " << n << " position " << i << " xor " << x;
      }
      b[i] = original;
    }
    ASSERT_TRUE(BytesEqual(sa, sb)) << n;
  }
}

// Different lengths are never equal, even when one is a prefix of the other.
TEST(BytesEqualTest, DifferentLengthsAreNotEqual) {
  const std::unique_ptr<char[]> a = ExactBuffer(70, 0);
  for (size_t n = 0; n <= 70; ++n) {
    for (size_t m = 0; m <= 70; ++m) {
      if (n == m) continue;
      ASSERT_FALSE(BytesEqual(std::string_view(a.get(), n),
                              std::string_view(a.get(), m)))
          << n << " " << m;
    }
  }
}

}  // namespace
}  // namespace hpack
