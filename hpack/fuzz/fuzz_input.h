// The decoder fuzzer's input format, shared by the fuzzer (which reads it) and
// `hpack_tool seeds` (which writes the seed corpus from hpack-test-case
// stories).
//
// clang-format off
//   octet 0   max header list size: (octet + 1) * 256, so 256 .. 65536
//   octet 1   SETTINGS_HEADER_TABLE_SIZE acknowledged before the first block:
//             octet * 64, so 0 .. 16320 (64 gives the default, 4096)
//   then records, each starting with a 16-bit big-endian word w:
//     w <  0x8000   a header block of w octets follows (cut short at the end
//                   of the input)
//     w >= 0x8000   an acknowledged SETTINGS_HEADER_TABLE_SIZE change to
//                   (w & 0x7fff)
// clang-format on
//
// Every byte string is a valid input: missing header octets count as 0, and a
// record cut short is taken as far as it goes, so mutations stay meaningful.

#ifndef HPACK_FUZZ_FUZZ_INPUT_H_
#define HPACK_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hpack {
namespace fuzz {

struct FuzzStep {
  enum Kind { kBlock, kSettings } kind = kBlock;
  std::string_view block;         // kBlock
  uint32_t table_size_limit = 0;  // kSettings
};

class FuzzInputReader {
 public:
  FuzzInputReader(const uint8_t* data, size_t size)
      : data_(data), size_(size), pos_(size < 2 ? size : 2) {}

  size_t max_header_list_size() const {
    return (size_t{size_ > 0 ? data_[0] : uint8_t{0}} + 1) * 256;
  }
  uint32_t initial_table_size_limit() const {
    return uint32_t{size_ > 1 ? data_[1] : uint8_t{0}} * 64;
  }

  // The next record, or false at the end of input.
  bool Next(FuzzStep* step) {
    if (pos_ >= size_) return false;
    const uint32_t hi = data_[pos_];
    const uint32_t lo = pos_ + 1 < size_ ? data_[pos_ + 1] : 0;
    pos_ = pos_ + 2 < size_ ? pos_ + 2 : size_;
    const uint32_t w = hi << 8 | lo;
    if (w & 0x8000) {
      step->kind = FuzzStep::kSettings;
      step->table_size_limit = w & 0x7fff;
      return true;
    }
    const size_t n = w < size_ - pos_ ? w : size_ - pos_;
    step->kind = FuzzStep::kBlock;
    step->block =
        std::string_view(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return true;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_;
};

// Builds inputs in the format above.
class FuzzInputWriter {
 public:
  // `max_header_list_size` is rounded down to a multiple of 256 in [256, 65536]
  // and `table_size_limit` to a multiple of 64 in [0, 16320].
  FuzzInputWriter(size_t max_header_list_size, uint32_t table_size_limit) {
    size_t l = max_header_list_size / 256;
    l = l < 1 ? 1 : (l > 256 ? 256 : l);
    uint32_t t = table_size_limit / 64;
    t = t > 255 ? 255 : t;
    out_.push_back(static_cast<char>(l - 1));
    out_.push_back(static_cast<char>(t));
  }

  // Returns false (and adds nothing) when `block` is 0x8000 octets or longer.
  bool AddBlock(std::string_view block) {
    if (block.size() >= 0x8000) return false;
    AddWord(static_cast<uint32_t>(block.size()));
    out_.append(block.data(), block.size());
    return true;
  }
  // Returns false (and adds nothing) when `limit` is 0x8000 or more.
  bool AddSettings(uint32_t limit) {
    if (limit >= 0x8000) return false;
    AddWord(0x8000 | limit);
    return true;
  }

  const std::string& bytes() const { return out_; }

 private:
  void AddWord(uint32_t w) {
    out_.push_back(static_cast<char>(w >> 8));
    out_.push_back(static_cast<char>(w & 0xff));
  }

  std::string out_;
};

}  // namespace fuzz
}  // namespace hpack

#endif  // HPACK_FUZZ_FUZZ_INPUT_H_
