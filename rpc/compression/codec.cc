#include "rpc/compression/codec.h"

#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "rpc/compression/encoding.h"

namespace rpc::compression {
namespace codec_internal {

struct CompressorState {
  ~CompressorState() {
    if (zlib_ready) deflateEnd(&z);
    ZSTD_freeCCtx(zstd);  // Accepts nullptr.
  }
  z_stream z{};
  bool zlib_ready = false;
  ZSTD_CCtx* zstd = nullptr;
};

struct DecompressorState {
  ~DecompressorState() {
    if (zlib_ready) inflateEnd(&z);
    ZSTD_freeDCtx(zstd);
  }
  z_stream z{};
  bool zlib_ready = false;
  ZSTD_DCtx* zstd = nullptr;
};

}  // namespace codec_internal

namespace {

using codec_internal::CompressorState;
using codec_internal::DecompressorState;

// deflate cannot expand more than this (RFC 1951: a 258-octet match in at
// least 2 bits, per octet of input ~1032:1).
constexpr size_t kMaxDeflateRatio = 1032;
// The smallest first allocation when the format gives no size.
constexpr size_t kMinGrowth = 256;
constexpr size_t kMaxZlibChunk = std::numeric_limits<uInt>::max();

// Debian's Abseil has its own string_view, not std::string_view.
absl::string_view Absl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

constexpr int kZlibWindowBits = 15;
constexpr int kGzipWindowBits = 15 + 16;  // zlib's "gzip wrapper" flag.

bool IsZlibFormat(Encoding e) {
  return e == Encoding::kGzip || e == Encoding::kDeflate;
}

int WindowBits(Encoding e) {
  return e == Encoding::kGzip ? kGzipWindowBits : kZlibWindowBits;
}

absl::Status TooLarge(Encoding e, size_t limit) {
  return absl::ResourceExhaustedError(
      absl::StrCat("decompressed ", Absl(EncodingName(e)),
                   " message larger than the limit of ", limit, " octets"));
}

absl::Status Corrupt(Encoding e, std::string_view what) {
  return absl::InternalError(absl::StrCat(
      "cannot decompress ", Absl(EncodingName(e)), " message: ", Absl(what)));
}

// Output appended to a std::string, growing geometrically up to a limit; the
// string's capacity never exceeds (its size before + limit) octets.
class StringOutput {
 public:
  StringOutput(std::string* s, size_t limit)
      : s_(s), base_(s->size()), limit_(limit) {}

  char* cursor() { return s_->data() + base_ + written_; }
  size_t room() const { return allocated_ - written_; }
  size_t written() const { return written_; }
  size_t limit() const { return limit_; }
  void Commit(size_t n) { written_ += n; }

  // Makes room for `want` more octets (at least doubling what it has), or as
  // many as the limit allows; false if the limit is reached.
  bool Grow(size_t want) {
    const size_t target = std::min(
        limit_, std::max({allocated_ * 2, written_ + want, kMinGrowth}));
    if (target <= allocated_) return false;
    const size_t needed = base_ + target;
    if (needed > s_->capacity()) {
      // std::string::reserve may round up to twice the old capacity; a fresh
      // string reserves exactly, which keeps the limit a limit on memory.
      std::string bigger;
      bigger.reserve(needed);
      bigger.append(s_->data(), base_ + written_);
      s_->swap(bigger);
    }
    s_->resize(needed);
    allocated_ = target;
    return true;
  }

  void Finish() { s_->resize(base_ + written_); }
  void Abandon() { s_->resize(base_); }

 private:
  std::string* s_;
  size_t base_;
  size_t limit_;
  size_t allocated_ = 0;
  size_t written_ = 0;
};

// Output into a caller's fixed buffer.
class SpanOutput {
 public:
  explicit SpanOutput(absl::Span<char> span) : span_(span) {}

  char* cursor() { return span_.data() + written_; }
  size_t room() const { return span_.size() - written_; }
  size_t written() const { return written_; }
  size_t limit() const { return span_.size(); }
  void Commit(size_t n) { written_ += n; }
  bool Grow(size_t) { return room() != 0; }
  void Finish() {}
  void Abandon() {}

 private:
  absl::Span<char> span_;
  size_t written_ = 0;
};

Bytef* InputBytes(std::string_view in) {
  return reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
}

// ---------------------------------------------------------------------------
// Compression.

template <typename Output>
absl::Status CompressZlib(Encoding e, int level, CompressorState& st,
                          std::string_view in, Output& out) {
  if (in.size() > kMaxZlibChunk) {
    return absl::ResourceExhaustedError("message too large to compress");
  }
  z_stream& z = st.z;
  if (!st.zlib_ready) {
    const int r = deflateInit2(&z, level, Z_DEFLATED, WindowBits(e),
                               /*memLevel=*/8, Z_DEFAULT_STRATEGY);
    if (r != Z_OK) {
      return absl::InternalError(absl::StrCat("deflateInit2 failed: ", r));
    }
    st.zlib_ready = true;
  } else if (deflateReset(&z) != Z_OK) {
    return absl::InternalError("deflateReset failed");
  }
  out.Grow(deflateBound(&z, static_cast<uLong>(in.size())));
  z.next_in = InputBytes(in);
  z.avail_in = static_cast<uInt>(in.size());
  const uInt room =
      static_cast<uInt>(std::min<size_t>(out.room(), kMaxZlibChunk));
  z.next_out = reinterpret_cast<Bytef*>(out.cursor());
  z.avail_out = room;
  const int r = deflate(&z, Z_FINISH);
  out.Commit(room - z.avail_out);
  if (r == Z_STREAM_END) return absl::OkStatus();
  if (r == Z_OK || r == Z_BUF_ERROR) {
    return absl::ResourceExhaustedError("output buffer too small");
  }
  return absl::InternalError(absl::StrCat("deflate failed: ", r));
}

template <typename Output>
absl::Status CompressZstd(int level, CompressorState& st, std::string_view in,
                          Output& out) {
  if (st.zstd == nullptr) {
    st.zstd = ZSTD_createCCtx();
    if (st.zstd == nullptr) return absl::InternalError("ZSTD_createCCtx");
    const size_t r =
        ZSTD_CCtx_setParameter(st.zstd, ZSTD_c_compressionLevel, level);
    if (ZSTD_isError(r)) {
      return absl::InvalidArgumentError(
          absl::StrCat("zstd level ", level, ": ", ZSTD_getErrorName(r)));
    }
    // A 4-octet checksum per frame, so corruption is caught as gzip's CRC-32
    // and zlib's Adler-32 catch it.
    ZSTD_CCtx_setParameter(st.zstd, ZSTD_c_checksumFlag, 1);
  }
  out.Grow(ZSTD_compressBound(in.size()));
  // ZSTD_compress2 starts a new frame (the session is reset, the level kept)
  // and records the content size in the frame header.
  const size_t r =
      ZSTD_compress2(st.zstd, out.cursor(), out.room(), in.data(), in.size());
  if (ZSTD_isError(r)) {
    if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall) {
      return absl::ResourceExhaustedError("output buffer too small");
    }
    return absl::InternalError(
        absl::StrCat("ZSTD_compress2: ", ZSTD_getErrorName(r)));
  }
  out.Commit(r);
  return absl::OkStatus();
}

template <typename Output>
absl::Status CompressAny(Encoding e, int level,
                         std::unique_ptr<CompressorState>& st,
                         std::string_view in, Output& out) {
  if (e == Encoding::kIdentity) {
    out.Grow(in.size());
    if (out.room() < in.size()) {
      return absl::ResourceExhaustedError("output buffer too small");
    }
    if (!in.empty()) std::memcpy(out.cursor(), in.data(), in.size());
    out.Commit(in.size());
    return absl::OkStatus();
  }
  if (st == nullptr) st = std::make_unique<CompressorState>();
  if (IsZlibFormat(e)) {
    return CompressZlib(
        e, level == Compressor::kDefaultLevel ? Z_DEFAULT_COMPRESSION : level,
        *st, in, out);
  }
  return CompressZstd(
      level == Compressor::kDefaultLevel ? ZSTD_CLEVEL_DEFAULT : level, *st, in,
      out);
}

// ---------------------------------------------------------------------------
// Decompression.

// The first allocation for a zlib-format message: gzip's ISIZE (the length mod
// 2^32, untrusted) plus one spare octet so inflate can reach the end of the
// stream without a second allocation; for deflate, 4x the input. Capped by
// deflate's maximum ratio (the limit caps it again).
size_t ZlibSizeHint(Encoding e, std::string_view in) {
  size_t hint = in.size() * 4;
  if (e == Encoding::kGzip && in.size() >= 18) {
    const auto* p = reinterpret_cast<const uint8_t*>(in.data() + in.size() - 4);
    hint = (size_t{p[0]} | size_t{p[1]} << 8 | size_t{p[2]} << 16 |
            size_t{p[3]} << 24) +
           1;
  }
  return std::min(hint, in.size() * kMaxDeflateRatio + kMinGrowth);
}

template <typename Output>
absl::Status InflateMessage(Encoding e, DecompressorState& st,
                            std::string_view in, Output& out) {
  if (in.size() > kMaxZlibChunk) return TooLarge(e, out.limit());
  z_stream& z = st.z;
  if (!st.zlib_ready) {
    const int r = inflateInit2(&z, WindowBits(e));
    if (r != Z_OK) {
      return absl::InternalError(absl::StrCat("inflateInit2 failed: ", r));
    }
    st.zlib_ready = true;
  } else if (inflateReset(&z) != Z_OK) {
    return absl::InternalError("inflateReset failed");
  }
  z.next_in = InputBytes(in);
  z.avail_in = static_cast<uInt>(in.size());
  out.Grow(ZlibSizeHint(e, in));
  Bytef probe;
  for (;;) {
    // At the limit, inflate into a one-octet probe: any output means the
    // message is larger than the limit.
    const bool probing = out.room() == 0 && !out.Grow(out.written());
    const uInt room =
        probing
            ? 1
            : static_cast<uInt>(std::min<size_t>(out.room(), kMaxZlibChunk));
    z.next_out = probing ? &probe : reinterpret_cast<Bytef*>(out.cursor());
    z.avail_out = room;
    const int r = inflate(&z, Z_NO_FLUSH);
    const uInt produced = room - z.avail_out;
    if (probing && produced != 0) return TooLarge(e, out.limit());
    if (!probing) out.Commit(produced);
    switch (r) {
      case Z_STREAM_END:
        if (z.avail_in != 0) return Corrupt(e, "data after the end");
        return absl::OkStatus();
      case Z_OK:
      case Z_BUF_ERROR:  // No progress: out of room (grow) or of input.
        if (z.avail_in == 0 && z.avail_out != 0) {
          return Corrupt(e, "truncated");
        }
        break;
      case Z_NEED_DICT:
        return Corrupt(e, "preset dictionary");
      case Z_MEM_ERROR:
        return absl::ResourceExhaustedError("inflate: out of memory");
      default:
        return Corrupt(e, z.msg != nullptr ? z.msg : "inflate error");
    }
  }
}

// The zstd window a frame without a recorded size may ask for (a decoder
// allocates it): the limit rounded up to a power of two, at least 2 MiB (what
// streaming compressors use at levels 1-4), at most zstd's default maximum
// (128 MiB). Frames with a recorded size need no window buffer.
int ZstdWindowLogMax(size_t limit) {
  int log = 21;
  while (log < 27 && (size_t{1} << log) < limit) ++log;
  return log;
}

absl::Status ZstdError(size_t r, size_t limit) {
  if (ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "zstd frame window too large for the limit of ", limit, " octets"));
  }
  return Corrupt(Encoding::kZstd, ZSTD_getErrorName(r));
}

template <typename Output>
absl::Status ZstdDecompressMessage(DecompressorState& st, std::string_view in,
                                   Output& out) {
  if (st.zstd == nullptr) {
    st.zstd = ZSTD_createDCtx();
    if (st.zstd == nullptr) return absl::InternalError("ZSTD_createDCtx");
  } else {
    ZSTD_DCtx_reset(st.zstd, ZSTD_reset_session_only);
  }
  ZSTD_DCtx_setParameter(st.zstd, ZSTD_d_windowLogMax,
                         ZstdWindowLogMax(out.limit()));

  if (in.empty()) return Corrupt(Encoding::kZstd, "empty");
  // One frame that records its size (our compressor's frames do): one call
  // into a buffer of exactly that size.
  const size_t frame_size = ZSTD_findFrameCompressedSize(in.data(), in.size());
  if (ZSTD_isError(frame_size)) return ZstdError(frame_size, out.limit());
  const unsigned long long size =
      ZSTD_getFrameContentSize(in.data(), in.size());
  if (size == ZSTD_CONTENTSIZE_ERROR) return Corrupt(Encoding::kZstd, "frame");
  if (size != ZSTD_CONTENTSIZE_UNKNOWN && frame_size == in.size()) {
    if (size > out.limit()) return TooLarge(Encoding::kZstd, out.limit());
    out.Grow(static_cast<size_t>(size));
    const size_t r = ZSTD_decompressDCtx(st.zstd, out.cursor(), out.room(),
                                         in.data(), in.size());
    if (ZSTD_isError(r)) return ZstdError(r, out.limit());
    if (r != size) return Corrupt(Encoding::kZstd, "size mismatch");
    out.Commit(r);
    return absl::OkStatus();
  }

  // Several frames, or sizes not recorded: decompress as zlib formats are,
  // growing to the limit.
  ZSTD_inBuffer input = {in.data(), in.size(), 0};
  out.Grow(in.size() * 4);
  char probe;
  for (;;) {
    const bool probing = out.room() == 0 && !out.Grow(out.written());
    ZSTD_outBuffer output = {probing ? &probe : out.cursor(),
                             probing ? 1 : out.room(), 0};
    const size_t r = ZSTD_decompressStream(st.zstd, &output, &input);
    if (ZSTD_isError(r)) return ZstdError(r, out.limit());
    if (probing && output.pos != 0) {
      return TooLarge(Encoding::kZstd, out.limit());
    }
    if (!probing) out.Commit(output.pos);
    const bool input_done = input.pos == input.size;
    if (r == 0 && input_done) return absl::OkStatus();  // Last frame ended.
    if (input_done && output.pos < output.size) {
      return Corrupt(Encoding::kZstd, "truncated");
    }
  }
}

template <typename Output>
absl::Status DecompressAny(Encoding e, std::unique_ptr<DecompressorState>& st,
                           std::string_view in, Output& out) {
  if (e == Encoding::kIdentity) {
    if (in.size() > out.limit()) return TooLarge(e, out.limit());
    out.Grow(in.size());
    if (!in.empty()) std::memcpy(out.cursor(), in.data(), in.size());
    out.Commit(in.size());
    return absl::OkStatus();
  }
  if (st == nullptr) st = std::make_unique<DecompressorState>();
  if (IsZlibFormat(e)) return InflateMessage(e, *st, in, out);
  return ZstdDecompressMessage(*st, in, out);
}

}  // namespace

absl::Status UnsupportedEncodingError(std::string_view name,
                                      EncodingSet supported) {
  return absl::UnimplementedError(absl::StrCat(
      "compression algorithm '", Absl(name), "' is not supported; supported: ",
      Absl(GrpcAcceptEncodingValue(supported))));
}

size_t MaxCompressedSize(Encoding encoding, size_t input_size) {
  switch (encoding) {
    case Encoding::kIdentity:
      return input_size;
    case Encoding::kDeflate:
    case Encoding::kGzip:
      // deflateBound's conservative bound (any level and memory setting)
      // plus gzip's wrapper (18 octets; zlib's is 6).
      return input_size + ((input_size + 7) >> 3) + ((input_size + 63) >> 6) +
             5 + 18;
    case Encoding::kZstd:
      return ZSTD_compressBound(input_size);
  }
  return input_size;
}

Compressor::Compressor(Encoding encoding, int level)
    : encoding_(encoding), level_(level) {}
Compressor::~Compressor() = default;
Compressor::Compressor(Compressor&&) noexcept = default;
Compressor& Compressor::operator=(Compressor&&) noexcept = default;

absl::Status Compressor::Compress(std::string_view message, std::string* out) {
  StringOutput output(out, MaxCompressedSize(encoding_, message.size()));
  absl::Status status = CompressAny(encoding_, level_, state_, message, output);
  if (status.ok()) {
    output.Finish();
  } else {
    output.Abandon();
  }
  return status;
}

absl::StatusOr<size_t> Compressor::Compress(std::string_view message,
                                            absl::Span<char> out) {
  SpanOutput output(out);
  absl::Status status = CompressAny(encoding_, level_, state_, message, output);
  if (!status.ok()) return status;
  return output.written();
}

Decompressor::Decompressor(Encoding encoding) : encoding_(encoding) {}
Decompressor::~Decompressor() = default;
Decompressor::Decompressor(Decompressor&&) noexcept = default;
Decompressor& Decompressor::operator=(Decompressor&&) noexcept = default;

absl::Status Decompressor::Decompress(std::string_view message, size_t max_size,
                                      std::string* out) {
  StringOutput output(out, max_size);
  absl::Status status = DecompressAny(encoding_, state_, message, output);
  if (status.ok()) {
    output.Finish();
  } else {
    output.Abandon();
  }
  return status;
}

absl::StatusOr<size_t> Decompressor::Decompress(std::string_view message,
                                                absl::Span<char> out) {
  SpanOutput output(out);
  absl::Status status = DecompressAny(encoding_, state_, message, output);
  if (!status.ok()) return status;
  return output.written();
}

}  // namespace rpc::compression
