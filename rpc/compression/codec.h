// Message compression for gRPC: one Compressor and one Decompressor per
// stream and direction, each owning its codec context (zlib z_stream, zstd
// CCtx/DCtx) for the stream's life and resetting it per message, so a
// stream pays the context's allocation once (zlib's deflate state is ~256
// KiB), on its first compressed message, not per message.
//
// Formats (what grpc-encoding names, as gRPC C++ reads and writes them):
//   identity  the bytes as they are
//   deflate   zlib format (RFC 1950: 2-octet header, deflate, Adler-32), as
//             gRPC C++ writes it; raw deflate (no header) is not accepted
//   gzip      gzip format (RFC 1952), one member
//   zstd      zstd frames (RFC 8878); ours record the content size and a
//             checksum, any valid frames are read
//
// Interface: a message in as one contiguous byte range (std::string_view),
// out either appended to a std::string or written into a caller's buffer
// (absl::Span<char>). A SliceBuffer adapter can sit on the span form.
//
// Errors, chosen to be the gRPC status the rpc layer sends unchanged:
//   kResourceExhausted  the decompressed message would exceed the limit (the
//                       max receive message size), or a caller's buffer is
//                       too small, or a zstd frame asks for a window larger
//                       than the limit allows. Decompression stops there:
//                       nothing beyond the limit is produced or allocated.
//   kInternal           corrupt or truncated input, data after the end of
//                       the compressed stream, a codec failure. gRPC's
//                       status code table (doc/statuscodes.md) maps "could
//                       not decompress, but compression algorithm supported"
//                       to INTERNAL, so we do too (not kDataLoss).
//   kUnimplemented      UnsupportedEncodingError: a grpc-encoding we do not
//                       support (gRPC's compression spec).
// A context that failed is reset by the next call and works again.
//
// Memory bound of Decompress into a std::string: the string grows
// geometrically but never past (its size before the call + max_size) octets
// of capacity; the first allocation is sized from the format's own hint
// (gzip's ISIZE, zstd's frame content size) capped by the limit and, for
// zlib formats, by deflate's maximum ratio (1032:1). No single allocation
// exceeds the limit; while growing, the old and new buffers coexist for the
// copy (peak 1.5x the limit). zstd frames that record their size (ours do)
// decode in one call into a buffer of that size; others stream, and the
// window they may demand is bounded by the limit rounded up to a power of two
// (at least 2 MiB, the window of streaming zstd at levels 1-4; a larger window
// is kResourceExhausted).

#ifndef RPC_COMPRESSION_CODEC_H_
#define RPC_COMPRESSION_CODEC_H_

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "rpc/compression/encoding.h"

namespace rpc::compression {

namespace codec_internal {
struct CompressorState;    // A zlib z_stream or a ZSTD_CCtx.
struct DecompressorState;  // A zlib z_stream or a ZSTD_DCtx.
}  // namespace codec_internal

// Messages smaller than this are sent uncompressed even on a compressed call:
// compressing ~1 KiB costs ~20 us with gzip and saves a few hundred octets.
inline constexpr size_t kDefaultCompressionThreshold = 1024;

// Whether to compress a message of `size` octets on a call whose negotiated
// encoding is `encoding`: not identity, and at least `threshold` octets.
constexpr bool ShouldCompress(Encoding encoding, size_t size,
                              size_t threshold = kDefaultCompressionThreshold) {
  return encoding != Encoding::kIdentity && size >= threshold;
}

// UNIMPLEMENTED for a received grpc-encoding `name` we cannot decode, naming
// what we can (the rpc layer also sends grpc-accept-encoding with `supported`).
absl::Status UnsupportedEncodingError(std::string_view name,
                                      EncodingSet supported);

// The most octets Compress can produce for `input_size` octets with `encoding`.
size_t MaxCompressedSize(Encoding encoding, size_t input_size);

class Compressor {
 public:
  // The codec's default: zlib 6 (Z_DEFAULT_COMPRESSION), zstd 3. (zstd's
  // negative levels are real levels, hence not -1.)
  static constexpr int kDefaultLevel = std::numeric_limits<int>::min();

  // Contexts are created on the first Compress call, not here.
  explicit Compressor(Encoding encoding, int level = kDefaultLevel);
  ~Compressor();
  Compressor(Compressor&&) noexcept;
  Compressor& operator=(Compressor&&) noexcept;

  Encoding encoding() const { return encoding_; }

  // Compresses `message` (one whole gRPC message) and appends the result to
  // *out. kInternal if the codec fails (allocation failure inside zlib/zstd).
  absl::Status Compress(std::string_view message, std::string* out);

  // The same into `out`; returns the number of octets written.
  // kResourceExhausted if `out` is too small (MaxCompressedSize is enough).
  absl::StatusOr<size_t> Compress(std::string_view message,
                                  absl::Span<char> out);

 private:
  Encoding encoding_;
  int level_;
  std::unique_ptr<codec_internal::CompressorState> state_;
};

class Decompressor {
 public:
  explicit Decompressor(Encoding encoding);
  ~Decompressor();
  Decompressor(Decompressor&&) noexcept;
  Decompressor& operator=(Decompressor&&) noexcept;

  Encoding encoding() const { return encoding_; }

  // Decompresses `message` (one whole compressed message) and appends at most
  // `max_size` octets to *out; errors as above. On error, *out keeps its
  // original contents (what was appended is removed).
  absl::Status Decompress(std::string_view message, size_t max_size,
                          std::string* out);

  // The same into `out` (the limit is out.size()); returns the number of
  // octets written.
  absl::StatusOr<size_t> Decompress(std::string_view message,
                                    absl::Span<char> out);

 private:
  Encoding encoding_;
  std::unique_ptr<codec_internal::DecompressorState> state_;
};

}  // namespace rpc::compression

#endif  // RPC_COMPRESSION_CODEC_H_
