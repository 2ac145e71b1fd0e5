#include "transport/frame/frame_writer.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "transport/frame/frame_collector.h"
#include "transport/frame/frame_decoder.h"
#include "transport/testing/frame_test_util.h"

namespace transport {
namespace {

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// Decodes `out` with a collector; expects no error and no order violation.
std::vector<Frame> Decode(const SliceBuffer& out,
                          uint32_t max_frame_size = 16384) {
  FrameCollector collector;
  FrameDecoder::Options options;
  options.max_frame_size = max_frame_size;
  FrameDecoder decoder(&collector, options);
  const Http2Error e = decoder.Decode(out);
  EXPECT_TRUE(e.ok()) << e;
  EXPECT_TRUE(collector.violations().empty()) << collector.violations()[0];
  EXPECT_TRUE(decoder.at_frame_boundary());
  return collector.frames();
}

// Every frame of the sample, written alone, decodes to itself (the two that are
// stream errors by design decode to a stream error).
TEST(FrameWriterTest, EveryFrameTypeRoundTrips) {
  for (const Frame& frame : testing::SampleFrames()) {
    SCOPED_TRACE(FrameToString(frame));
    SliceBuffer out;
    WriteFrame(frame, &out);
    FrameCollector collector;
    FrameDecoder decoder(&collector);
    if (const auto* c = std::get_if<ContinuationFrame>(&frame)) {
      // A CONTINUATION needs its HEADERS first.
      SliceBuffer start;
      WriteFrame(HeadersFrame{c->stream_id, false, false, std::nullopt, "", {}},
                 &start);
      ASSERT_TRUE(decoder.Decode(start).ok());
      collector.Clear();
    }
    const Http2Error e = decoder.Decode(out);
    ASSERT_TRUE(e.ok()) << e;
    EXPECT_TRUE(collector.violations().empty());
    ASSERT_EQ(collector.events().size(), 1u);
    const FrameEvent& event = collector.events()[0];
    if (const auto* p = std::get_if<PriorityFrame>(&frame);
        p != nullptr && p->priority.stream_dependency == p->stream_id) {
      ASSERT_TRUE(std::holds_alternative<StreamErrorEvent>(event));
      continue;
    }
    if (const auto* w = std::get_if<WindowUpdateFrame>(&frame);
        w != nullptr && w->increment == 0) {
      ASSERT_TRUE(std::holds_alternative<StreamErrorEvent>(event));
      continue;
    }
    ASSERT_TRUE(std::holds_alternative<Frame>(event));
    EXPECT_EQ(std::get<Frame>(event), frame);
  }
}

TEST(FrameWriterTest, ExactOctets) {
  SliceBuffer out;
  WritePing(0x0102030405060708ull, true, &out);
  EXPECT_EQ(Hex(out.ToString()),
            "000008060100000000"
            "0102030405060708");
  out.Clear();
  WriteSettings({{SettingId::kMaxConcurrentStreams, 100},
                 {SettingId::kInitialWindowSize, 0x7fffffff}},
                &out);
  EXPECT_EQ(Hex(out.ToString()),
            "00000c040000000000"
            "000300000064"
            "00047fffffff");
  out.Clear();
  WriteSettingsAck(&out);
  EXPECT_EQ(Hex(out.ToString()), "000000040100000000");
  out.Clear();
  WriteWindowUpdate(3, 0x10000, &out);
  EXPECT_EQ(Hex(out.ToString()),
            "000004080000000003"
            "00010000");
  out.Clear();
  WriteRstStream(0x7fffffff, Http2ErrorCode::kRefusedStream, &out);
  EXPECT_EQ(Hex(out.ToString()),
            "00000403007fffffff"
            "00000007");
  out.Clear();
  WriteGoAway(5, Http2ErrorCode::kProtocolError, "ab", &out);
  EXPECT_EQ(Hex(out.ToString()),
            "00000a070000000000"
            "00000005"
            "00000001"
            "6162");
  out.Clear();
  WritePriority(5, PriorityFields{3, true, 255}, &out);
  EXPECT_EQ(Hex(out.ToString()),
            "000005020000000005"
            "80000003"
            "ff");
  out.Clear();
  WriteHeaders(1, "\x82\x86", true, 16384, &out);
  EXPECT_EQ(Hex(out.ToString()),
            "000002010500000001"
            "8286");
  out.Clear();
  WriteData(1, Slice::Copy("abc"), false, &out);
  EXPECT_EQ(Hex(out.ToString()),
            "000003000000000001"
            "616263");
}

TEST(FrameWriterTest, ControlFramesShareOneBlock) {
  SliceBuffer out;
  WriteSettingsAck(&out);
  WritePing(1, true, &out);
  WriteWindowUpdate(0, 1000, &out);
  WriteHeaders(1, "\x82\x86\x84", false, 16384, &out);
  EXPECT_EQ(out.num_slices(), 1u);
}

TEST(FrameWriterTest, DataPayloadIsNotCopied) {
  const Slice message = Slice::Copy(std::string(1000, 'm'));
  SliceBuffer payload;
  payload.Append(message);
  SliceBuffer out;
  WriteData(7, std::move(payload), true, &out);
  ASSERT_EQ(out.num_slices(), 2u);
  EXPECT_EQ(out.slice(0).size(), kFrameHeaderSize);
  EXPECT_EQ(out.slice(1).data(), message.data());
  const std::vector<Frame> frames = Decode(out);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(std::get<DataFrame>(frames[0]).payload.ToString(), message.view());
}

TEST(FrameWriterTest, SmallDataFramesAreCopiedBehindTheirHeader) {
  SliceBuffer out;
  WriteHeaders(1, "\x88", false, 16384, &out);
  for (const size_t n : {size_t{15}, kDataCopyThreshold}) {
    SliceBuffer payload;
    payload.Append(Slice::Copy(std::string(n, 's')));
    payload.Append(Slice::Copy("tail"));
    WriteDataFrames(1, &payload, n, 16384, false, &out);
    EXPECT_EQ(payload.ToString(), "tail");
  }
  // HEADERS and both DATA frames in one contiguous piece.
  EXPECT_EQ(out.num_slices(), 1u);
  const std::vector<Frame> frames = Decode(out);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(std::get<DataFrame>(frames[1]).payload.ToString(),
            std::string(15, 's'));
  EXPECT_EQ(std::get<DataFrame>(frames[2]).payload.ToString(),
            std::string(kDataCopyThreshold, 's'));
  // One octet more: the payload is referenced, not copied.
  const Slice big = Slice::Copy(std::string(kDataCopyThreshold + 1, 'b'));
  SliceBuffer payload;
  payload.Append(big);
  out.Clear();
  WriteDataFrames(1, &payload, big.size(), 16384, true, &out);
  ASSERT_EQ(out.num_slices(), 2u);
  EXPECT_EQ(out.slice(1).data(), big.data());
}

TEST(FrameWriterTest, DataFramesSplitAtMaxFrameSize) {
  const std::string body(40000, 'b');
  SliceBuffer payload;
  payload.Append(Slice::Copy(body));
  payload.Append(Slice::Copy("tail"));
  SliceBuffer out;
  WriteDataFrames(3, &payload, 40000, 16384, true, &out);
  EXPECT_EQ(payload.ToString(), "tail");  // Only `length` octets were taken.
  const std::vector<Frame> frames = Decode(out);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(std::get<DataFrame>(frames[0]).payload.size(), 16384u);
  EXPECT_FALSE(std::get<DataFrame>(frames[0]).end_stream);
  EXPECT_EQ(std::get<DataFrame>(frames[1]).payload.size(), 16384u);
  EXPECT_EQ(std::get<DataFrame>(frames[2]).payload.size(), 40000u - 2 * 16384);
  EXPECT_TRUE(std::get<DataFrame>(frames[2]).end_stream);

  out.Clear();
  WriteDataFrames(3, &payload, 0, 16384, true, &out);
  ASSERT_EQ(Decode(out).size(), 1u);  // One empty END_STREAM frame.
  out.Clear();
  WriteDataFrames(3, &payload, 0, 16384, false, &out);
  EXPECT_TRUE(out.empty());
}

TEST(FrameWriterTest, PaddedDataRoundTrips) {
  SliceBuffer payload;
  payload.Append("padded");
  SliceBuffer out;
  WritePaddedData(9, payload, 200, false, &out);
  const std::vector<Frame> frames = Decode(out);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0], Frame(DataFrame{9, false, payload, uint8_t{200}}));
}

// Reassembles the HEADERS + CONTINUATION sequence; checks each payload's size.
std::string Reassemble(const std::vector<Frame>& frames,
                       uint32_t max_frame_size, size_t first_overhead) {
  std::string block;
  for (size_t i = 0; i < frames.size(); ++i) {
    const bool last = i + 1 == frames.size();
    if (i == 0) {
      const auto& h = std::get<HeadersFrame>(frames[0]);
      EXPECT_EQ(h.end_headers, last);
      EXPECT_LE(h.fragment.size() + first_overhead, max_frame_size);
      block += h.fragment;
    } else {
      const auto& c = std::get<ContinuationFrame>(frames[i]);
      EXPECT_EQ(c.end_headers, last);
      EXPECT_LE(c.fragment.size(), max_frame_size);
      if (!last) {
        EXPECT_EQ(c.fragment.size(), max_frame_size);
      }
      block += c.fragment;
    }
  }
  return block;
}

TEST(FrameWriterTest, LargeHeaderBlockSplitsIntoContinuation) {
  for (const size_t size : {0, 1, 16383, 16384, 16385, 40000, 3 * 16384}) {
    SCOPED_TRACE(size);
    std::string block(size, '\0');
    for (size_t i = 0; i < size; ++i) block[i] = static_cast<char>(i * 31);
    SliceBuffer out;
    WriteHeaders(5, block, true, 16384, &out);
    const std::vector<Frame> frames = Decode(out);
    const size_t expected_frames = size == 0 ? 1 : (size + 16383) / 16384;
    ASSERT_EQ(frames.size(), expected_frames);
    EXPECT_TRUE(std::get<HeadersFrame>(frames[0]).end_stream);
    EXPECT_EQ(Reassemble(frames, 16384, 0), block);
  }
}

TEST(FrameWriterTest, PriorityAndPaddingCountAgainstTheFirstFrame) {
  const std::string block(20000, 'k');
  const PriorityFields priority{3, false, 7};
  SliceBuffer out;
  WriteHeaders(5, block, false, 16384, &priority, uint8_t{10}, &out);
  const std::vector<Frame> frames = Decode(out);
  ASSERT_EQ(frames.size(), 2u);
  const auto& h = std::get<HeadersFrame>(frames[0]);
  EXPECT_EQ(h.priority, priority);
  EXPECT_EQ(h.pad_length, uint8_t{10});
  EXPECT_EQ(h.fragment.size(), 16384u - 5 - 1 - 10);
  EXPECT_EQ(Reassemble(frames, 16384, 16), block);
}

TEST(FrameWriterTest, PushPromiseSplitsToo) {
  const std::string block(20000, 'p');
  SliceBuffer out;
  WritePushPromise(1, 2, block, 16384, std::nullopt, &out);
  const std::vector<Frame> frames = Decode(out);
  ASSERT_EQ(frames.size(), 2u);
  const auto& pp = std::get<PushPromiseFrame>(frames[0]);
  EXPECT_EQ(pp.promised_stream_id, 2u);
  EXPECT_FALSE(pp.end_headers);
  EXPECT_EQ(pp.fragment.size(), 16384u - 4);
  EXPECT_EQ(pp.fragment + std::get<ContinuationFrame>(frames[1]).fragment,
            block);
  EXPECT_TRUE(std::get<ContinuationFrame>(frames[1]).end_headers);
}

TEST(FrameWriterTest, LargerPeerMaxFrameSize) {
  const std::string block(100000, 'L');
  SliceBuffer out;
  WriteHeaders(1, block, false, 1 << 20, &out);
  const std::vector<Frame> frames = Decode(out, 1 << 20);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(std::get<HeadersFrame>(frames[0]).fragment, block);
}

}  // namespace
}  // namespace transport
