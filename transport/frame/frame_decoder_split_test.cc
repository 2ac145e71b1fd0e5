// The decoder's fast paths (64-bit header parse, whole frame handled in place,
// preface compared as words) are caches of its general path (octet-at-a-time
// header, payload accumulated or streamed across inputs). These tests hold them
// equal: a byte stream of every frame type, decoded in one piece (fast paths
// everywhere), must give exactly the events, DATA bytes, errors and state of
// the same stream split at every single offset, at every pair of nearby
// offsets, one octet at a time, and at random points.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "transport/frame/frame_decoder.h"
#include "transport/frame/frame_writer.h"
#include "transport/testing/frame_test_util.h"

namespace transport {
namespace {

using testing::DecodeInPieces;
using testing::DecodeOutcome;

void ExpectEqualOnEverySplit(const std::string& bytes,
                             const FrameDecoder::Options& options,
                             const DecodeOutcome& reference) {
  ASSERT_TRUE(reference.violations.empty()) << reference.ToString();
  for (size_t k = 0; k <= bytes.size(); ++k) {
    const DecodeOutcome split = DecodeInPieces(bytes, {k}, options);
    ASSERT_EQ(split, reference) << "split at " << k << "\n"
                                << split.ToString() << "---- expected\n"
                                << reference.ToString();
  }
  // Two splits close together: the header and small payloads cut in three.
  for (size_t k = 0; k + 1 < bytes.size(); ++k) {
    for (size_t gap : {1, 2, 5, 9}) {
      if (k + gap > bytes.size()) continue;
      const DecodeOutcome split = DecodeInPieces(bytes, {k, k + gap}, options);
      ASSERT_EQ(split, reference)
          << "splits at " << k << ", " << k + gap << "\n"
          << split.ToString();
    }
  }
  std::vector<size_t> every;
  for (size_t k = 1; k < bytes.size(); ++k) every.push_back(k);
  ASSERT_EQ(DecodeInPieces(bytes, every, options), reference)
      << "one octet at a time";
}

void ExpectEqualOnRandomSplits(const std::string& bytes,
                               const FrameDecoder::Options& options,
                               const DecodeOutcome& reference, int trials,
                               uint32_t seed) {
  std::mt19937 rng(seed);
  for (int t = 0; t < trials; ++t) {
    std::vector<size_t> splits(1 + rng() % 40);
    for (size_t& s : splits) s = rng() % (bytes.size() + 1);
    std::sort(splits.begin(), splits.end());
    const DecodeOutcome split = DecodeInPieces(bytes, splits, options);
    ASSERT_EQ(split, reference) << "trial " << t << "\n" << split.ToString();
  }
}

TEST(FrameDecoderSplitTest, EveryFrameTypeAtEverySplitPoint) {
  const std::string bytes = testing::Serialize(testing::SampleFrames());
  const DecodeOutcome reference = DecodeInPieces(bytes, {});
  ASSERT_TRUE(reference.error.ok()) << reference.ToString();
  EXPECT_TRUE(reference.pending.empty());
  // Two stream errors in the sample, the rest frames.
  size_t stream_errors = 0;
  for (const FrameEvent& e : reference.events) {
    stream_errors += std::holds_alternative<StreamErrorEvent>(e);
  }
  EXPECT_EQ(stream_errors, 2u);
  ExpectEqualOnEverySplit(bytes, FrameDecoder::Options(), reference);
}

TEST(FrameDecoderSplitTest, PrefaceAndSettingsFirstAtEverySplitPoint) {
  FrameDecoder::Options options;
  options.expect_client_preface = true;
  options.expect_settings_first = true;
  const std::string bytes =
      std::string(kClientPreface) + testing::Serialize(testing::SampleFrames());
  const DecodeOutcome reference = DecodeInPieces(bytes, {}, options);
  ASSERT_TRUE(reference.error.ok()) << reference.ToString();
  ExpectEqualOnEverySplit(bytes, options, reference);
}

TEST(FrameDecoderSplitTest, RandomSplits) {
  std::vector<Frame> frames = testing::SampleFrames();
  // Larger DATA and header blocks too, so random cuts land inside payloads.
  SliceBuffer big;
  big.Append(std::string(20000, 'B'));
  FrameDecoder::Options options;
  options.max_frame_size = 1 << 16;
  frames.push_back(DataFrame{41, false, big, uint8_t{77}});
  frames.push_back(
      HeadersFrame{43, true, true, std::nullopt, std::string(30000, 'H'), {}});
  frames.push_back(
      GoAwayFrame{41, Http2ErrorCode::kNoError, std::string(9000, 'G')});
  const std::string bytes = testing::Serialize(frames);
  const DecodeOutcome reference = DecodeInPieces(bytes, {}, options);
  ASSERT_TRUE(reference.error.ok()) << reference.ToString();
  ExpectEqualOnRandomSplits(bytes, options, reference, 2000, 42);
}

// A valid prefix, then one frame that breaks a rule (or a truncated stream):
// the same events, then the same error, wherever the input is cut.
TEST(FrameDecoderSplitTest, ErrorsAtEverySplitPoint) {
  const std::string prefix = testing::Serialize(
      {SettingsFrame{false, {{SettingId::kMaxConcurrentStreams, 10}}},
       HeadersFrame{1, false, true, std::nullopt, "abc", std::nullopt},
       DataFrame{1, false,
                 [] {
                   SliceBuffer b;
                   b.Append("payload");
                   return b;
                 }(),
                 uint8_t{3}}});
  auto raw = [](uint8_t type, uint8_t flags, uint32_t stream,
                const std::string& payload) {
    SliceBuffer out;
    FrameHeader h;
    h.length = static_cast<uint32_t>(payload.size());
    h.type = type;
    h.flags = flags;
    h.stream_id = stream;
    WriteFrameHeader(h, &out);
    out.Append(payload);
    return out.ToString();
  };
  struct Case {
    std::string bad;
    FrameDecodeError reason;
  };
  const Case cases[] = {
      {raw(0, 0, 1, std::string(16385, 'x')), FrameDecodeError::kFrameTooLarge},
      {raw(0, kFlagPadded, 1,
           std::string("\x09"
                       "abc",
                       4)),
       FrameDecodeError::kPaddingTooLong},
      {raw(0, kFlagPadded, 1, ""), FrameDecodeError::kFrameTooShort},
      {raw(0, 0, 0, "x"), FrameDecodeError::kStreamIdRequired},
      {raw(4, 0, 0, std::string("\x00\x02\x00\x00\x00\x05", 6)),
       FrameDecodeError::kInvalidSettingValue},
      {raw(4, 0, 0, "12345"), FrameDecodeError::kBadSettingsLength},
      {raw(6, 0, 0, "1234567"), FrameDecodeError::kBadPingLength},
      {raw(8, 0, 0, std::string(4, '\0')),
       FrameDecodeError::kZeroConnectionWindowIncrement},
      {raw(1, kFlagPriority | kFlagEndHeaders, 5,
           std::string("\x00\x00\x00\x05\x0f", 5)),
       FrameDecodeError::kHeadersSelfDependency},
      {raw(1, 0, 3, "open") + raw(6, 0, 0, std::string(8, 'p')),
       FrameDecodeError::kExpectedContinuation},
      {raw(9, kFlagEndHeaders, 1, "c"),
       FrameDecodeError::kUnexpectedContinuation},
      {raw(7, 0, 0, "short"), FrameDecodeError::kFrameTooShort},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(FrameDecodeErrorName(c.reason));
    const std::string bytes = prefix + c.bad + prefix;
    const DecodeOutcome reference = DecodeInPieces(bytes, {});
    ASSERT_EQ(reference.reason, c.reason) << reference.ToString();
    ASSERT_TRUE(reference.error.is_connection_error());
    ExpectEqualOnRandomSplits(bytes, FrameDecoder::Options(), reference, 300,
                              7);
    for (size_t k = 0; k <= bytes.size();
         k += (k < prefix.size() + 40 ? 1 : 97)) {
      ASSERT_EQ(DecodeInPieces(bytes, {k}), reference) << k;
    }
  }
  // Truncated: a stream that stops mid-DATA leaves the same pending frame.
  const std::string truncated =
      prefix + raw(0, 0, 1, std::string(100, 'T')).substr(0, 60);
  const DecodeOutcome reference = DecodeInPieces(truncated, {});
  ASSERT_TRUE(reference.error.ok());
  ASSERT_FALSE(reference.pending.empty());
  ExpectEqualOnEverySplit(truncated, FrameDecoder::Options(), reference);
}

// Preface mismatches: reported at the same point by the word compare and the
// octet compare, wherever the input is cut.
TEST(FrameDecoderSplitTest, PrefaceMismatchAtEverySplitPoint) {
  FrameDecoder::Options options;
  options.expect_client_preface = true;
  for (size_t i = 0; i < kClientPreface.size(); i += 3) {
    std::string bytes =
        std::string(kClientPreface) + testing::Serialize({PingFrame{}});
    bytes[i] = 'X';
    const DecodeOutcome reference = DecodeInPieces(bytes, {}, options);
    ASSERT_EQ(reference.reason, FrameDecodeError::kInvalidPreface);
    for (size_t k = 0; k <= bytes.size(); ++k) {
      ASSERT_EQ(DecodeInPieces(bytes, {k}, options), reference)
          << i << " " << k;
    }
  }
}

}  // namespace
}  // namespace transport
