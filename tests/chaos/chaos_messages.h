// The chaos messages' payloads and checksums (chaos.proto), shared by the
// servers and the driver.
#ifndef TESTS_CHAOS_CHAOS_MESSAGES_H_
#define TESTS_CHAOS_CHAOS_MESSAGES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace chaos {

// Octets that depend on the call, the message's index and the position
// (xorshift64, eight octets a step).
inline std::string ChaosPayload(uint64_t call_id, uint32_t seq, size_t size) {
  std::string s(size, '\0');
  uint64_t x = call_id * 0x9E3779B97F4A7C15ull + seq + 1;
  for (size_t i = 0; i < size; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(&s[i], &x, std::min<size_t>(8, size - i));
  }
  return s;
}

// A 64-bit multiply-xor hash (FNV-like, eight octets a step) over the call
// id, the index and the payload, folded to 32 bits.
inline uint32_t ChaosChecksum(uint64_t call_id, uint32_t seq,
                              std::string_view payload) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](uint64_t w) {
    h ^= w;
    h *= 1099511628211ull;
    h ^= h >> 29;
  };
  mix(call_id);
  mix(seq);
  mix(payload.size());
  for (size_t i = 0; i < payload.size(); i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, payload.data() + i,
                std::min<size_t>(8, payload.size() - i));
    mix(w);
  }
  return static_cast<uint32_t>(h ^ (h >> 32));
}

// The order-sensitive digest of a stream of checksums.
inline uint32_t ChaosFold(uint32_t digest, uint32_t checksum) {
  return (digest * 31u + 7u) ^ checksum;
}

// Fills in a message's identity, payload and checksum.
template <typename M>
void Seal(M* m, uint64_t call_id, uint32_t seq, size_t size) {
  m->set_call_id(call_id);
  m->set_seq(seq);
  m->set_payload(ChaosPayload(call_id, seq, size));
  m->set_checksum(ChaosChecksum(call_id, seq, m->payload()));
}

// "" when `m` is message `seq` of call `call_id`, intact; else what is wrong.
template <typename M>
std::string CheckMessage(const M& m, uint64_t call_id, uint32_t seq) {
  if (m.call_id() != call_id) {
    return absl::StrCat("message of call ", m.call_id(), " in call ", call_id);
  }
  if (m.seq() != seq) {
    return absl::StrCat("message #", m.seq(), " where #", seq,
                        " was due (lost, duplicated or reordered)");
  }
  if (m.checksum() != ChaosChecksum(call_id, seq, m.payload())) {
    return absl::StrCat("message #", seq, " corrupted");
  }
  return "";
}

}  // namespace chaos

#endif  // TESTS_CHAOS_CHAOS_MESSAGES_H_
