#include "transport/testing/frame_test_util.h"

#include <sstream>

#include "transport/frame/frame_writer.h"
#include "transport/slice/slice.h"

namespace transport {
namespace testing {

namespace {

SliceBuffer Bytes(std::string_view s) {
  SliceBuffer b;
  b.Append(s);
  return b;
}

std::string Pattern(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 7);
  return s;
}

}  // namespace

std::vector<Frame> SampleFrames() {
  std::vector<Frame> f;
  f.push_back(SettingsFrame{false,
                            {{SettingId::kHeaderTableSize, 8192},
                             {SettingId::kEnablePush, 0},
                             {SettingId::kMaxConcurrentStreams, 100},
                             {SettingId::kInitialWindowSize, 1 << 20},
                             {SettingId::kMaxFrameSize, 16384},
                             {SettingId::kMaxHeaderListSize, 65536},
                             {Setting(0x4242, 7)}}});
  f.push_back(SettingsFrame{true, {}});
  f.push_back(SettingsFrame{false, {}});
  f.push_back(HeadersFrame{1, false, true, std::nullopt, Pattern(40, 'h'),
                           std::nullopt});
  f.push_back(DataFrame{1, false, Bytes(Pattern(300, 'd')), std::nullopt});
  f.push_back(DataFrame{1, false, Bytes(Pattern(17, 'p')), uint8_t{9}});
  f.push_back(DataFrame{1, false, Bytes(""), uint8_t{0}});
  f.push_back(DataFrame{1, false, Bytes(""), uint8_t{4}});
  f.push_back(DataFrame{1, false, Bytes(""), std::nullopt});
  f.push_back(DataFrame{1, true, Bytes("x"), std::nullopt});
  f.push_back(HeadersFrame{3, true, true, PriorityFields{1, true, 200},
                           Pattern(25, 'q'), std::nullopt});
  f.push_back(HeadersFrame{5, false, true, PriorityFields{0, false, 15}, "",
                           uint8_t{3}});
  f.push_back(
      HeadersFrame{7, true, true, std::nullopt, Pattern(10, 'r'), uint8_t{0}});
  f.push_back(HeadersFrame{9, false, false, std::nullopt, Pattern(30, 'a'),
                           std::nullopt});
  f.push_back(ContinuationFrame{9, false, Pattern(20, 'b')});
  f.push_back(ContinuationFrame{9, false, ""});
  f.push_back(ContinuationFrame{9, true, Pattern(5, 'c')});
  f.push_back(PriorityFrame{11, PriorityFields{9, false, 0}});
  f.push_back(PriorityFrame{
      13, PriorityFields{13, true, 1}});  // On itself: stream error.
  f.push_back(RstStreamFrame{3, Http2ErrorCode::kCancel});
  f.push_back(RstStreamFrame{5, static_cast<Http2ErrorCode>(0xdeadbeef)});
  f.push_back(PushPromiseFrame{1, 2, true, Pattern(12, 'x'), std::nullopt});
  f.push_back(PushPromiseFrame{1, 4, false, Pattern(8, 'y'), uint8_t{2}});
  f.push_back(ContinuationFrame{1, true, Pattern(8, 'z')});
  f.push_back(PingFrame{false, 0x0102030405060708ull});
  f.push_back(PingFrame{true, 0xfffefdfcfbfaf9f8ull});
  f.push_back(WindowUpdateFrame{0, 1});
  f.push_back(WindowUpdateFrame{1, 0x7fffffff});
  f.push_back(WindowUpdateFrame{7, 0});  // Zero on a stream: stream error.
  f.push_back(UnknownFrame{0x0a, 0xff, 0, 0});
  f.push_back(UnknownFrame{0xfa, 0x01, 33, 50});
  f.push_back(DataFrame{33, true, Bytes(Pattern(1000, 'D')), uint8_t{255}});
  f.push_back(GoAwayFrame{9, Http2ErrorCode::kNoError, ""});
  f.push_back(
      GoAwayFrame{7, Http2ErrorCode::kEnhanceYourCalm, Pattern(33, 'g')});
  return f;
}

std::string Serialize(const std::vector<Frame>& frames) {
  SliceBuffer out;
  for (const Frame& f : frames) WriteFrame(f, &out);
  return out.ToString();
}

std::string DecodeOutcome::ToString() const {
  std::ostringstream os;
  for (const FrameEvent& e : events) os << e << "\n";
  if (!pending.empty()) os << "pending " << pending << "\n";
  os << "result " << error << " (" << FrameDecodeErrorName(reason) << ")\n";
  for (const std::string& v : violations) os << "VIOLATION " << v << "\n";
  return os.str();
}

DecodeOutcome DecodeInPieces(std::string_view bytes,
                             const std::vector<size_t>& splits,
                             const FrameDecoder::Options& options) {
  const Slice whole = Slice::Copy(bytes);
  FrameCollector collector(/*record_headers=*/true);
  FrameDecoder decoder(&collector, options);
  DecodeOutcome out;
  size_t begin = 0;
  for (size_t i = 0; i <= splits.size(); ++i) {
    const size_t end = i < splits.size() ? splits[i] : bytes.size();
    out.error = decoder.Decode(whole.Sub(begin, end - begin));
    begin = end;
  }
  out.events = collector.events();
  if (const DataFrame* pending = collector.pending_data()) {
    out.pending = FrameToString(*pending);
  }
  out.reason = decoder.error_reason();
  out.violations = collector.violations();
  return out;
}

}  // namespace testing
}  // namespace transport
