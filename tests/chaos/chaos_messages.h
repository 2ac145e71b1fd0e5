// The chaos messages' payloads and checksums (chaos.proto), shared by the
// servers and the driver.
#ifndef TESTS_CHAOS_CHAOS_MESSAGES_H_
#define TESTS_CHAOS_CHAOS_MESSAGES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace chaos {

// Octets that depend on the call, the message's index and the position.
inline std::string ChaosPayload(uint64_t call_id, uint32_t seq, size_t size) {
  std::string s(size, '\0');
  uint64_t x = call_id * 0x9E3779B97F4A7C15ull + seq + 1;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

// FNV-1a over the call id, the index and the payload.
inline uint32_t ChaosChecksum(uint64_t call_id, uint32_t seq,
                              std::string_view payload) {
  uint32_t h = 2166136261u;
  auto mix = [&h](unsigned char c) {
    h ^= c;
    h *= 16777619u;
  };
  for (int i = 0; i < 8; ++i)
    mix(static_cast<unsigned char>(call_id >> (8 * i)));
  for (int i = 0; i < 4; ++i) mix(static_cast<unsigned char>(seq >> (8 * i)));
  for (char c : payload) mix(static_cast<unsigned char>(c));
  return h;
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
