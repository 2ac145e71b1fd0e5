#include "rpc/compression/codec.h"

#include <zlib.h>
#include <zstd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "rpc/compression/encoding.h"

// The largest single operator-new allocation while `g_track` is set: the zip
// bomb test checks Decompress never asks for more than the limit.
namespace {
std::atomic<bool> g_track{false};
std::atomic<size_t> g_largest{0};
}  // namespace

void* operator new(size_t size) {
  if (g_track.load(std::memory_order_relaxed)) {
    size_t seen = g_largest.load(std::memory_order_relaxed);
    while (size > seen && !g_largest.compare_exchange_weak(seen, size)) {
    }
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace rpc::compression {
namespace {

constexpr Encoding kCompressed[] = {Encoding::kDeflate, Encoding::kGzip,
                                    Encoding::kZstd};

// Half repeated field text, half random octets: a serialized message with
// strings and packed numbers, as compressors see it.
std::string Payload(size_t size, uint32_t seed = 1) {
  static const char* kWords[] = {"feature", "latitude", "longitude", "name",
                                 "route",   "point",    "location",  "note"};
  std::mt19937 rng(seed);
  std::string out;
  while (out.size() < size) {
    out += kWords[rng() % 8];
    for (int i = 0; i < 6; ++i) out.push_back(static_cast<char>(rng()));
  }
  out.resize(size);
  return out;
}

std::string Compress(Encoding e, std::string_view in) {
  Compressor c(e);
  std::string out;
  EXPECT_TRUE(c.Compress(in, &out).ok());
  return out;
}

std::string ZlibInflate(std::string_view in, int window_bits) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, window_bits), Z_OK);
  std::string out(1 << 20, '\0');
  std::string result;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int r;
  do {
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    r = inflate(&z, Z_NO_FLUSH);
    result.append(out.data(), out.size() - z.avail_out);
  } while (r == Z_OK);
  EXPECT_EQ(r, Z_STREAM_END);
  inflateEnd(&z);
  return result;
}

std::string ZlibDeflate(std::string_view in, int window_bits, int level = 6) {
  z_stream z{};
  EXPECT_EQ(
      deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY),
      Z_OK);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// zstd frames without a recorded size (a streaming compressor's).
std::string ZstdStreamed(std::string_view in, int level = 3) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  std::string out(ZSTD_compressBound(in.size()) + 64, '\0');
  ZSTD_inBuffer input = {in.data(), in.size(), 0};
  ZSTD_outBuffer output = {out.data(), out.size(), 0};
  while (ZSTD_compressStream2(c, &output, &input, ZSTD_e_continue) != 0 &&
         input.pos < input.size) {
  }
  while (ZSTD_compressStream2(c, &output, &input, ZSTD_e_end) != 0) {
  }
  ZSTD_freeCCtx(c);
  out.resize(output.pos);
  return out;
}

TEST(CodecTest, RoundTripEverySizeAndEncoding) {
  const size_t sizes[] = {0, 1, 7, 100, 1023, 1024, 4096, 65536, 1 << 20};
  for (Encoding e : kAllEncodings) {
    Compressor c(e);
    Decompressor d(e);
    for (size_t size : sizes) {
      const std::string message = Payload(size, static_cast<uint32_t>(size));
      std::string compressed = "prefix";
      ASSERT_TRUE(c.Compress(message, &compressed).ok());
      ASSERT_EQ(compressed.substr(0, 6), "prefix");  // appended
      compressed.erase(0, 6);
      if (e != Encoding::kIdentity && size >= 1024) {
        EXPECT_LT(compressed.size(), message.size() * 3 / 4)
            << EncodingName(e) << " " << size;
      }
      std::string out = "x";
      const absl::Status s = d.Decompress(compressed, size, &out);
      ASSERT_TRUE(s.ok()) << EncodingName(e) << " " << size << ": " << s;
      EXPECT_TRUE(out == "x" + message) << EncodingName(e) << " " << size;
    }
  }
}

TEST(CodecTest, RoundTripThroughCallerBuffers) {
  for (Encoding e : kAllEncodings) {
    for (size_t size : {size_t{0}, size_t{5}, size_t{3000}, size_t{70000}}) {
      const std::string message = Payload(size);
      std::vector<char> buffer(MaxCompressedSize(e, size));
      Compressor c(e);
      absl::StatusOr<size_t> n = c.Compress(message, absl::MakeSpan(buffer));
      ASSERT_TRUE(n.ok()) << n.status();
      // Exactly the same octets as the std::string form.
      EXPECT_EQ(std::string_view(buffer.data(), *n), Compress(e, message));
      std::vector<char> plain(size);
      Decompressor d(e);
      absl::StatusOr<size_t> m = d.Decompress(
          std::string_view(buffer.data(), *n), absl::MakeSpan(plain));
      ASSERT_TRUE(m.ok()) << m.status();
      EXPECT_EQ(*m, size);
      EXPECT_EQ(std::string_view(plain.data(), *m), message);
    }
  }
}

TEST(CodecTest, MaxCompressedSizeBoundsIncompressibleInput) {
  std::mt19937 rng(7);
  for (size_t size : {size_t{0}, size_t{1}, size_t{1000}, size_t{100000}}) {
    std::string noise(size, '\0');
    for (char& c : noise) c = static_cast<char>(rng());
    for (Encoding e : kAllEncodings) {
      for (int level : {Compressor::kDefaultLevel, 0, 1, 9}) {
        if (e == Encoding::kZstd && level == 0) continue;
        std::vector<char> buffer(MaxCompressedSize(e, size));
        Compressor c(e, level);
        EXPECT_TRUE(c.Compress(noise, absl::MakeSpan(buffer)).ok())
            << EncodingName(e) << " level " << level << " size " << size;
      }
    }
  }
}

TEST(CodecTest, CallerBufferTooSmall) {
  const std::string message = Payload(5000);
  for (Encoding e : kAllEncodings) {
    std::vector<char> small(10);
    Compressor c(e);
    EXPECT_EQ(c.Compress(message, absl::MakeSpan(small)).status().code(),
              absl::StatusCode::kResourceExhausted)
        << EncodingName(e);
    // The context is still good.
    EXPECT_EQ(Compress(e, message).empty(), false);
    std::string out;
    EXPECT_TRUE(c.Compress(message, &out).ok());
    std::vector<char> plain(message.size() - 1);
    Decompressor d(e);
    EXPECT_EQ(d.Decompress(out, absl::MakeSpan(plain)).status().code(),
              absl::StatusCode::kResourceExhausted)
        << EncodingName(e);
  }
}

// gRPC C++ sends "deflate" as zlib format and "gzip" as gzip format: ours must
// read theirs (plain zlib output) and theirs ours (plain zlib readers).
TEST(CodecTest, InteropWithPlainZlib) {
  const std::string message = Payload(50000);
  const std::string deflate = Compress(Encoding::kDeflate, message);
  const std::string gzip = Compress(Encoding::kGzip, message);
  // Wire formats: zlib header (CM 8, 32 KiB window) and gzip magic.
  EXPECT_EQ(static_cast<uint8_t>(deflate[0]), 0x78);
  EXPECT_EQ((static_cast<uint8_t>(deflate[0]) * 256 +
             static_cast<uint8_t>(deflate[1])) %
                31,
            0);
  EXPECT_EQ(static_cast<uint8_t>(gzip[0]), 0x1f);
  EXPECT_EQ(static_cast<uint8_t>(gzip[1]), 0x8b);

  // zlib's one-call uncompress() reads our deflate.
  std::string plain(message.size(), '\0');
  uLongf plain_size = plain.size();
  ASSERT_EQ(uncompress(reinterpret_cast<Bytef*>(plain.data()), &plain_size,
                       reinterpret_cast<const Bytef*>(deflate.data()),
                       deflate.size()),
            Z_OK);
  EXPECT_EQ(plain, message);
  // zlib's gzip reader reads our gzip.
  EXPECT_EQ(ZlibInflate(gzip, 15 + 16), message);

  // We read zlib's compress() and a gzip writer's output, at several levels.
  for (int level : {1, 6, 9}) {
    std::string zlib_out(compressBound(message.size()), '\0');
    uLongf zlib_size = zlib_out.size();
    ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(zlib_out.data()), &zlib_size,
                        reinterpret_cast<const Bytef*>(message.data()),
                        message.size(), level),
              Z_OK);
    zlib_out.resize(zlib_size);
    std::string out;
    ASSERT_TRUE(Decompressor(Encoding::kDeflate)
                    .Decompress(zlib_out, message.size(), &out)
                    .ok());
    EXPECT_EQ(out, message);
    out.clear();
    ASSERT_TRUE(Decompressor(Encoding::kGzip)
                    .Decompress(ZlibDeflate(message, 15 + 16, level),
                                message.size(), &out)
                    .ok());
    EXPECT_EQ(out, message);
  }
  // The formats are not interchangeable.
  std::string out;
  EXPECT_EQ(
      Decompressor(Encoding::kGzip).Decompress(deflate, 1 << 20, &out).code(),
      absl::StatusCode::kInternal);
  EXPECT_EQ(
      Decompressor(Encoding::kDeflate).Decompress(gzip, 1 << 20, &out).code(),
      absl::StatusCode::kInternal);
  // Raw deflate (no zlib header) is not "deflate".
  EXPECT_EQ(Decompressor(Encoding::kDeflate)
                .Decompress(ZlibDeflate(message, -15), 1 << 20, &out)
                .code(),
            absl::StatusCode::kInternal);
  EXPECT_TRUE(out.empty());
}

TEST(CodecTest, InteropWithPlainZstd) {
  const std::string message = Payload(300000);
  const std::string ours = Compress(Encoding::kZstd, message);
  // libzstd's one-call API reads ours; the frame records its size.
  EXPECT_EQ(ZSTD_getFrameContentSize(ours.data(), ours.size()), message.size());
  std::string plain(message.size(), '\0');
  EXPECT_EQ(
      ZSTD_decompress(plain.data(), plain.size(), ours.data(), ours.size()),
      message.size());
  EXPECT_EQ(plain, message);

  Decompressor d(Encoding::kZstd);
  // A one-call compressor's frame.
  std::string simple(ZSTD_compressBound(message.size()), '\0');
  simple.resize(ZSTD_compress(simple.data(), simple.size(), message.data(),
                              message.size(), 1));
  std::string out;
  ASSERT_TRUE(d.Decompress(simple, message.size(), &out).ok());
  EXPECT_EQ(out, message);
  // A streaming compressor's frame (no size recorded).
  const std::string streamed = ZstdStreamed(message);
  EXPECT_EQ(ZSTD_getFrameContentSize(streamed.data(), streamed.size()),
            ZSTD_CONTENTSIZE_UNKNOWN);
  out.clear();
  absl::Status s = d.Decompress(streamed, message.size(), &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out, message);
  // Two frames back to back make one message.
  out.clear();
  s = d.Decompress(ours + streamed, 2 * message.size(), &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out, message + message);
}

TEST(CodecTest, TruncatedInputIsInternal) {
  for (Encoding e : kCompressed) {
    const std::string message = Payload(2000);
    const std::string compressed = Compress(e, message);
    Decompressor d(e);
    for (size_t n = 0; n < compressed.size(); ++n) {
      std::string out = "keep";
      const absl::Status s =
          d.Decompress(compressed.substr(0, n), 1 << 20, &out);
      EXPECT_EQ(s.code(), absl::StatusCode::kInternal)
          << EncodingName(e) << " prefix " << n << ": " << s;
      EXPECT_EQ(out, "keep");
    }
    // The context recovers after every failure.
    std::string out;
    ASSERT_TRUE(d.Decompress(compressed, message.size(), &out).ok());
    EXPECT_EQ(out, message);
  }
}

TEST(CodecTest, TruncatedStreamedZstdIsInternal) {
  const std::string message = Payload(100000);
  const std::string streamed = ZstdStreamed(message);
  Decompressor d(Encoding::kZstd);
  for (size_t n : {size_t{0}, size_t{3}, size_t{10}, streamed.size() / 2,
                   streamed.size() - 1}) {
    std::string out;
    EXPECT_EQ(d.Decompress(streamed.substr(0, n), 1 << 20, &out).code(),
              absl::StatusCode::kInternal)
        << n;
  }
}

TEST(CodecTest, CorruptInputIsInternal) {
  std::mt19937 rng(3);
  for (Encoding e : kCompressed) {
    const std::string message = Payload(20000);
    const std::string compressed = Compress(e, message);
    Decompressor d(e);
    int detected = 0;
    for (int i = 0; i < 300; ++i) {
      std::string bad = compressed;
      bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
      std::string out;
      const absl::Status s = d.Decompress(bad, 1 << 20, &out);
      // A flipped octet is caught by the format or its checksum (CRC-32,
      // Adler-32, XXH64) with overwhelming probability.
      if (s.ok()) continue;
      ++detected;
      EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << EncodingName(e);
    }
    EXPECT_EQ(detected, 300) << EncodingName(e);
    std::string out;
    EXPECT_EQ(d.Decompress("this is not compressed", 1 << 20, &out).code(),
              absl::StatusCode::kInternal);
    EXPECT_EQ(d.Decompress("", 1 << 20, &out).code(),
              absl::StatusCode::kInternal);
  }
}

TEST(CodecTest, DataAfterTheEndIsInternal) {
  for (Encoding e : {Encoding::kDeflate, Encoding::kGzip}) {
    std::string out;
    EXPECT_EQ(Decompressor(e)
                  .Decompress(Compress(e, "hello") + "junk", 100, &out)
                  .code(),
              absl::StatusCode::kInternal)
        << EncodingName(e);
  }
  std::string out;
  EXPECT_EQ(
      Decompressor(Encoding::kZstd)
          .Decompress(Compress(Encoding::kZstd, "hello") + "junk", 100, &out)
          .code(),
      absl::StatusCode::kInternal);
}

TEST(CodecTest, LimitIsInclusive) {
  for (Encoding e : kAllEncodings) {
    for (size_t size : {size_t{1}, size_t{1000}, size_t{100000}}) {
      const std::string message = Payload(size);
      const std::string compressed = Compress(e, message);
      Decompressor d(e);
      std::string out;
      EXPECT_TRUE(d.Decompress(compressed, size, &out).ok()) << size;
      EXPECT_EQ(out, message);
      out = "keep";
      const absl::Status s = d.Decompress(compressed, size - 1, &out);
      EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted)
          << EncodingName(e) << " " << size << ": " << s;
      EXPECT_EQ(out, "keep");
    }
  }
  // Streamed zstd frames (no recorded size) take the growing path.
  const std::string message = Payload(100000);
  const std::string streamed = ZstdStreamed(message);
  Decompressor d(Encoding::kZstd);
  std::string out;
  EXPECT_TRUE(d.Decompress(streamed, message.size(), &out).ok());
  EXPECT_EQ(d.Decompress(streamed, message.size() - 1, &out).code(),
            absl::StatusCode::kResourceExhausted);
}

// 10 MB of zeros compress to a few KB; with a 4 MB limit, decompression must
// stop at the limit, allocating no more than the limit for the message.
TEST(CodecTest, ZipBombStopsAtTheLimit) {
  const std::string zeros(10 << 20, '\0');
  constexpr size_t kLimit = 4 << 20;
  struct Bomb {
    const char* name;
    Encoding encoding;
    std::string data;
  };
  const Bomb bombs[] = {
      {"deflate", Encoding::kDeflate, Compress(Encoding::kDeflate, zeros)},
      {"gzip", Encoding::kGzip, Compress(Encoding::kGzip, zeros)},
      {"zstd", Encoding::kZstd, Compress(Encoding::kZstd, zeros)},
      {"zstd streamed", Encoding::kZstd, ZstdStreamed(zeros)},
      // gzip whose ISIZE lies (claims 1 KiB).
      {"gzip lying", Encoding::kGzip,
       [&] {
         std::string g = Compress(Encoding::kGzip, zeros);
         g[g.size() - 4] = 0;
         g[g.size() - 3] = 4;
         g[g.size() - 2] = 0;
         g[g.size() - 1] = 0;
         return g;
       }()},
  };
  for (const Bomb& bomb : bombs) {
    EXPECT_LT(bomb.data.size(), 20000u) << bomb.name;
    Decompressor d(bomb.encoding);
    std::string out;
    g_largest = 0;
    g_track = true;
    const absl::Status s = d.Decompress(bomb.data, kLimit, &out);
    g_track = false;
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted)
        << bomb.name << ": " << s;
    EXPECT_TRUE(out.empty());
    EXPECT_LE(g_largest.load(), kLimit + 1) << bomb.name;
    // Into a caller's 4 MB buffer.
    std::vector<char> buffer(kLimit);
    EXPECT_EQ(d.Decompress(bomb.data, absl::MakeSpan(buffer)).status().code(),
              absl::StatusCode::kResourceExhausted)
        << bomb.name;
  }
}

TEST(CodecTest, ContextsReusedAcrossManyMessages) {
  std::mt19937 rng(11);
  for (Encoding e : kAllEncodings) {
    Compressor c(e);
    Decompressor d(e);
    for (int i = 0; i < 500; ++i) {
      const size_t size = rng() % 5000;
      const std::string message = Payload(size, static_cast<uint32_t>(i));
      std::string compressed;
      ASSERT_TRUE(c.Compress(message, &compressed).ok());
      // Each message stands alone: a fresh context decodes it too.
      if (i % 100 == 0) {
        std::string fresh;
        ASSERT_TRUE(Decompressor(e).Decompress(compressed, size, &fresh).ok());
        EXPECT_EQ(fresh, message);
      }
      std::string out;
      ASSERT_TRUE(d.Decompress(compressed, size, &out).ok()) << i;
      ASSERT_EQ(out, message) << i;
      if (i % 50 == 7 && e != Encoding::kIdentity) {
        // Errors in between do not poison the context.
        EXPECT_FALSE(d.Decompress("garbage!", size, &out).ok());
      }
    }
  }
}

TEST(CodecTest, MovedCodecsKeepWorking) {
  Compressor c(Encoding::kGzip);
  Decompressor d(Encoding::kGzip);
  std::string compressed;
  ASSERT_TRUE(c.Compress("first", &compressed).ok());
  Compressor c2 = std::move(c);
  Decompressor d2 = std::move(d);
  compressed.clear();
  ASSERT_TRUE(c2.Compress("second", &compressed).ok());
  std::string out;
  ASSERT_TRUE(d2.Decompress(compressed, 100, &out).ok());
  EXPECT_EQ(out, "second");
  EXPECT_EQ(c2.encoding(), Encoding::kGzip);
  EXPECT_EQ(d2.encoding(), Encoding::kGzip);
}

TEST(CodecTest, CompressionLevels) {
  const std::string message = Payload(100000);
  for (Encoding e : kCompressed) {
    const size_t fast = Compress(e, message).size();
    Compressor best(e, e == Encoding::kZstd ? 19 : 9);
    std::string out;
    ASSERT_TRUE(best.Compress(message, &out).ok());
    EXPECT_LE(out.size(), fast) << EncodingName(e);
  }
  std::string out;
  EXPECT_FALSE(Compressor(Encoding::kGzip, 42).Compress("x", &out).ok());
}

TEST(CodecTest, ThresholdHelper) {
  EXPECT_FALSE(ShouldCompress(Encoding::kGzip, 1023));
  EXPECT_TRUE(ShouldCompress(Encoding::kGzip, 1024));
  EXPECT_FALSE(ShouldCompress(Encoding::kIdentity, 1 << 20));
  EXPECT_TRUE(ShouldCompress(Encoding::kZstd, 10, /*threshold=*/0));
  EXPECT_FALSE(ShouldCompress(Encoding::kZstd, 99, /*threshold=*/100));
  static_assert(kDefaultCompressionThreshold == 1024);
}

TEST(CodecTest, UnsupportedEncodingIsUnimplementedWithTheList) {
  const absl::Status s = UnsupportedEncodingError(
      "br", {Encoding::kIdentity, Encoding::kDeflate, Encoding::kGzip});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("'br'"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("identity, deflate, gzip"),
            absl::string_view::npos)
      << s;
}

}  // namespace
}  // namespace rpc::compression
