// Big-endian loads and stores for the frame codec: one unaligned load or store
// plus a byte swap each (memcpy compiles to a plain mov), the building blocks
// of the fast paths. Header-only; no dependencies.

#ifndef TRANSPORT_FRAME_FRAME_WIRE_H_
#define TRANSPORT_FRAME_FRAME_WIRE_H_

#include <cstdint>
#include <cstring>

namespace transport {
namespace wire {

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
inline uint16_t ToBig(uint16_t v) { return v; }
inline uint32_t ToBig(uint32_t v) { return v; }
inline uint64_t ToBig(uint64_t v) { return v; }
#else
inline uint16_t ToBig(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t ToBig(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t ToBig(uint64_t v) { return __builtin_bswap64(v); }
#endif

inline uint16_t LoadBE16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return ToBig(v);
}
inline uint32_t LoadBE32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return ToBig(v);
}
inline uint64_t LoadBE64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return ToBig(v);
}
inline void StoreBE16(uint8_t* p, uint16_t v) {
  v = ToBig(v);
  std::memcpy(p, &v, sizeof(v));
}
inline void StoreBE32(uint8_t* p, uint32_t v) {
  v = ToBig(v);
  std::memcpy(p, &v, sizeof(v));
}
inline void StoreBE64(uint8_t* p, uint64_t v) {
  v = ToBig(v);
  std::memcpy(p, &v, sizeof(v));
}

}  // namespace wire
}  // namespace transport

#endif  // TRANSPORT_FRAME_FRAME_WIRE_H_
