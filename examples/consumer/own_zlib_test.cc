// Passes only when @zlib is this workspace's own repository (WORKSPACE), not
// the one h2rpc_dependencies() defines when there is none: that one has no
// CONSUMER_OWN_ZLIB.
#include <zlib.h>

#include <cstdio>
#include <cstring>

#ifndef CONSUMER_OWN_ZLIB
#error "@zlib is not this workspace's own: h2rpc_dependencies() replaced it"
#endif

int main() {
  const char text[] = "123456789";
  const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(text),
                          static_cast<uInt>(std::strlen(text)));
  if (crc != 0xCBF43926UL) {  // The CRC-32 check value.
    std::printf("crc32 = %lx\n", crc);
    return 1;
  }
  std::printf("own zlib %s: ok\n", zlibVersion());
  return 0;
}
