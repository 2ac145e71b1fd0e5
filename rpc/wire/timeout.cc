#include "rpc/wire/timeout.h"

#include <cstdint>

namespace rpc {

namespace {

constexpr int64_t kMaxValue = 99999999;  // 8 digits

struct Unit {
  char letter;
  absl::Duration length;
};

// Finest first.
const Unit kUnits[] = {
    {'n', absl::Nanoseconds(1)},  {'u', absl::Microseconds(1)},
    {'m', absl::Milliseconds(1)}, {'S', absl::Seconds(1)},
    {'M', absl::Minutes(1)},      {'H', absl::Hours(1)},
};

size_t WriteValue(int64_t value, char unit, char* out) {
  char digits[8];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  for (size_t i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  out[n] = unit;
  return n + 1;
}

}  // namespace

size_t EncodeTimeout(absl::Duration timeout, char* out) {
  if (timeout <= absl::ZeroDuration()) return WriteValue(1, 'n', out);
  for (const Unit& unit : kUnits) {
    // Compare before dividing so that the quotient cannot overflow.
    if (timeout > unit.length * kMaxValue) continue;
    absl::Duration rem;
    int64_t value = absl::IDivDuration(timeout, unit.length, &rem);
    if (rem > absl::ZeroDuration()) ++value;
    return WriteValue(value, unit.letter, out);
  }
  return WriteValue(kMaxValue, 'H', out);
}

std::string EncodeTimeout(absl::Duration timeout) {
  char buf[kMaxTimeoutLength];
  return std::string(buf, EncodeTimeout(timeout, buf));
}

absl::StatusOr<absl::Duration> ParseTimeout(std::string_view value) {
  const size_t n = value.size();
  if (n < 2 || n > kMaxTimeoutLength) {
    return absl::InvalidArgumentError("malformed grpc-timeout");
  }
  int64_t x = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    const char c = value[i];
    if (c < '0' || c > '9') {
      return absl::InvalidArgumentError("malformed grpc-timeout");
    }
    x = x * 10 + (c - '0');
  }
  switch (value[n - 1]) {
    case 'n':
      return absl::Nanoseconds(x);
    case 'u':
      return absl::Microseconds(x);
    case 'm':
      return absl::Milliseconds(x);
    case 'S':
      return absl::Seconds(x);
    case 'M':
      return absl::Minutes(x);
    case 'H':
      return absl::Hours(x);
    default:
      return absl::InvalidArgumentError("malformed grpc-timeout");
  }
}

}  // namespace rpc
