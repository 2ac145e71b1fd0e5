#include "transport/testing/connection_test_util.h"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "transport/frame/frame_writer.h"

namespace transport {
namespace testing {
namespace {

FrameDecoder::Options ReaderOptions(Role peer_role) {
  FrameDecoder::Options o;
  // A server peer reads a client's output, which starts with the preface.
  o.expect_client_preface = peer_role == Role::kServer;
  o.max_frame_size = kMaxAllowedFrameSize;
  return o;
}

Fields ToFields(const hpack::HeaderList& list) {
  Fields f;
  for (const hpack::HeaderField h : list) {
    f.emplace_back(std::string(h.name), std::string(h.value));
  }
  return f;
}

}  // namespace

std::vector<hpack::HeaderField> View(const Fields& fields) {
  std::vector<hpack::HeaderField> v;
  v.reserve(fields.size());
  for (const auto& f : fields) v.push_back({f.first, f.second, false});
  return v;
}

std::string FieldsToString(const Fields& fields) {
  std::string s;
  for (const auto& f : fields) {
    if (!s.empty()) s += ' ';
    s += f.first + "=" + f.second;
  }
  return s;
}

std::string FieldsToString(const hpack::HeaderList& fields) {
  return FieldsToString(ToFields(fields));
}

Fields GetRequest(std::string path) {
  return {{":method", "GET"},
          {":scheme", "http"},
          {":authority", "example.com"},
          {":path", std::move(path)}};
}

Fields PostRequest(std::string path) {
  return {{":method", "POST"},
          {":scheme", "http"},
          {":authority", "example.com"},
          {":path", std::move(path)}};
}

Fields Response(int status) { return {{":status", std::to_string(status)}}; }

std::string PeerFrame::ToString() const {
  std::string s = FrameTypeName(static_cast<uint8_t>(type));
  switch (type) {
    case FrameType::kData:
      s += " " + std::to_string(stream_id) + (end_stream ? " end" : "");
      if (!data.empty()) s += " " + data;
      break;
    case FrameType::kHeaders:
      s += " " + std::to_string(stream_id) + (end_stream ? " end" : "");
      if (!headers.empty()) s += " " + FieldsToString(headers);
      break;
    case FrameType::kRstStream:
      s += " " + std::to_string(stream_id) + " " + Http2ErrorCodeName(code);
      break;
    case FrameType::kSettings:
      if (ack) {
        s += " ack";
      } else {
        for (const Setting& st : settings) {
          s += std::string(" ") + SettingIdName(st.id) + "=" +
               std::to_string(st.value);
        }
      }
      break;
    case FrameType::kPing:
      s += std::string(ack ? " ack " : " ") + std::to_string(opaque);
      break;
    case FrameType::kGoAway:
      s +=
          " " + std::to_string(last_stream_id) + " " + Http2ErrorCodeName(code);
      break;
    case FrameType::kWindowUpdate:
      s += " " + std::to_string(stream_id) + " " + std::to_string(increment);
      break;
    default:
      s += " " + std::to_string(stream_id);
      break;
  }
  return s;
}

std::vector<std::string> ToStrings(const std::vector<PeerFrame>& frames) {
  std::vector<std::string> v;
  for (const PeerFrame& f : frames) v.push_back(f.ToString());
  return v;
}

// ---- ScriptedPeer ----

ScriptedPeer::ScriptedPeer(Role role)
    : role_(role),
      decoder_([] {
        hpack::Decoder::Options o;
        o.max_header_list_size = 1 << 30;
        return o;
      }()),
      frame_decoder_(&collector_, ReaderOptions(role)) {}

ScriptedPeer& ScriptedPeer::Preface(const std::vector<Setting>& settings) {
  if (role_ == Role::kClient) out_.Append(kClientPreface);
  return Settings(settings);
}

ScriptedPeer& ScriptedPeer::Settings(const std::vector<Setting>& settings) {
  WriteSettings(settings, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::SettingsAck() {
  WriteSettingsAck(&out_);
  return *this;
}

std::string ScriptedPeer::Encode(const Fields& fields) {
  return std::string(encoder_.EncodeBlock(View(fields)));
}

ScriptedPeer& ScriptedPeer::Headers(uint32_t stream_id, const Fields& fields,
                                    bool end_stream, uint32_t max_frame_size) {
  const std::string block = Encode(fields);
  WriteHeaders(stream_id, block, end_stream, max_frame_size, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::HeadersFragment(uint32_t stream_id,
                                            std::string_view fragment,
                                            bool end_stream, bool end_headers) {
  HeadersFrame f;
  f.stream_id = stream_id;
  f.end_stream = end_stream;
  f.end_headers = end_headers;
  f.fragment = std::string(fragment);
  WriteFrame(f, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::Continuation(uint32_t stream_id,
                                         std::string_view fragment,
                                         bool end_headers) {
  WriteContinuation(stream_id, fragment, end_headers, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::Data(uint32_t stream_id, std::string_view payload,
                                 bool end_stream) {
  WriteData(stream_id, Slice::Copy(payload), end_stream, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::PaddedData(uint32_t stream_id,
                                       std::string_view payload,
                                       uint8_t pad_length, bool end_stream) {
  SliceBuffer b;
  b.Append(payload);
  WritePaddedData(stream_id, b, pad_length, end_stream, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::RstStream(uint32_t stream_id, Http2ErrorCode code) {
  WriteRstStream(stream_id, code, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::Ping(uint64_t opaque, bool ack) {
  WritePing(opaque, ack, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::GoAway(uint32_t last_stream_id, Http2ErrorCode code,
                                   std::string_view debug) {
  WriteGoAway(last_stream_id, code, debug, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::WindowUpdate(uint32_t stream_id,
                                         uint32_t increment) {
  WriteWindowUpdate(stream_id, increment, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::Priority(uint32_t stream_id, uint32_t depends_on) {
  PriorityFields p;
  p.stream_dependency = depends_on;
  WritePriority(stream_id, p, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::PushPromise(uint32_t stream_id, uint32_t promised,
                                        const Fields& fields) {
  const std::string block = Encode(fields);
  WritePushPromise(stream_id, promised, block, 16384, std::nullopt, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::Unknown(uint8_t type, uint32_t stream_id,
                                    uint32_t length) {
  WriteUnknownFrame(type, 0, stream_id, length, &out_);
  return *this;
}

ScriptedPeer& ScriptedPeer::Raw(std::string_view bytes) {
  out_.Append(bytes);
  return *this;
}

Slice ScriptedPeer::TakeSlice() {
  Slice s = out_.CopyToNewBlock();
  out_.Clear();
  return s;
}

std::string ScriptedPeer::TakeBytes() {
  std::string s = out_.ToString();
  out_.Clear();
  return s;
}

std::vector<PeerFrame> ScriptedPeer::Read(Connection* conn) {
  SliceBuffer bytes;
  conn->TakeOutput(&bytes);
  return Decode(bytes);
}

std::vector<PeerFrame> ScriptedPeer::Decode(const SliceBuffer& bytes) {
  std::vector<PeerFrame> result;
  if (!read_error_.ok()) return result;
  collector_.Clear();
  Http2Error e = frame_decoder_.Decode(bytes);
  if (!e.ok()) read_error_ = std::move(e);
  for (const Frame& frame : collector_.frames()) {
    std::visit(
        [&](const auto& f) {
          using T = std::decay_t<decltype(f)>;
          PeerFrame p;
          if constexpr (std::is_same_v<T, DataFrame>) {
            p.type = FrameType::kData;
            p.stream_id = f.stream_id;
            p.end_stream = f.end_stream;
            p.data = f.payload.ToString();
          } else if constexpr (std::is_same_v<T, HeadersFrame>) {
            p.type = FrameType::kHeaders;
            p.stream_id = f.stream_id;
            p.end_stream = f.end_stream;
            block_ = f.fragment;
            if (!f.end_headers) {
              in_block_ = true;
              block_frame_ = p;
              return;
            }
          } else if constexpr (std::is_same_v<T, ContinuationFrame>) {
            block_ += f.fragment;
            ++block_frame_.continuations;
            if (!f.end_headers) return;
            in_block_ = false;
            p = block_frame_;
          } else if constexpr (std::is_same_v<T, RstStreamFrame>) {
            p.type = FrameType::kRstStream;
            p.stream_id = f.stream_id;
            p.code = f.error_code;
          } else if constexpr (std::is_same_v<T, SettingsFrame>) {
            p.type = FrameType::kSettings;
            p.ack = f.ack;
            p.settings = f.settings;
          } else if constexpr (std::is_same_v<T, PingFrame>) {
            p.type = FrameType::kPing;
            p.ack = f.ack;
            p.opaque = f.opaque_data;
          } else if constexpr (std::is_same_v<T, GoAwayFrame>) {
            p.type = FrameType::kGoAway;
            p.last_stream_id = f.last_stream_id;
            p.code = f.error_code;
            p.debug = f.debug_data;
          } else if constexpr (std::is_same_v<T, WindowUpdateFrame>) {
            p.type = FrameType::kWindowUpdate;
            p.stream_id = f.stream_id;
            p.increment = f.increment;
          } else {
            p.type = FrameType::kPriority;  // Never written by a Connection.
          }
          if (p.type == FrameType::kHeaders) {
            hpack::HeaderList list;
            const hpack::DecodeError de = decoder_.Decode(block_, &list);
            if (de != hpack::DecodeError::kOk) {
              read_error_ = Http2Error::Connection(
                  Http2ErrorCode::kCompressionError, DecodeErrorName(de));
            }
            p.headers = ToFields(list);
          }
          result.push_back(std::move(p));
        },
        frame);
  }
  collector_.Clear();
  return result;
}

// ---- RecordingListener ----

void RecordingListener::Add(std::string line, uint32_t stream_id, bool noise) {
  if (!noise || record_noise) lines_.push_back(line);
  if (on_event) on_event(line, stream_id);
}

Lines RecordingListener::Matching(std::string_view prefix) const {
  Lines out;
  for (const std::string& l : lines_) {
    if (l.compare(0, prefix.size(), prefix) == 0) out.push_back(l);
  }
  return out;
}

void RecordingListener::ConsumeAll() {
  for (auto& [id, n] : unconsumed_) {
    if (n > 0 && connection != nullptr) connection->ConsumeData(id, n);
    n = 0;
  }
  held_ = 0;
}

void RecordingListener::OnHeaders(uint32_t id, const hpack::HeaderList& h,
                                  bool end_stream) {
  Add("headers " + std::to_string(id) + (end_stream ? " end " : " ") +
          FieldsToString(h),
      id);
}

void RecordingListener::OnTrailers(uint32_t id, const hpack::HeaderList& h) {
  Add("trailers " + std::to_string(id) + " " + FieldsToString(h), id);
}

void RecordingListener::OnHeaderListTooLarge(uint32_t id,
                                             const hpack::HeaderList& partial,
                                             size_t list_size) {
  Add("too_large " + std::to_string(id) + " " + std::to_string(list_size) +
          " kept " + std::to_string(partial.size()),
      id);
}

void RecordingListener::OnData(uint32_t id, Slice data) {
  bodies_[id] += data.ToString();
  if (auto_consume && connection != nullptr) {
    connection->ConsumeData(id, data.size());
  } else {
    unconsumed_[id] += data.size();
    held_ += data.size();
  }
  if (record_data) {
    Add("data " + std::to_string(id) + " " + data.ToString(), id);
  } else if (on_event) {
    on_event("data " + std::to_string(id), id);
  }
}

void RecordingListener::OnEndStream(uint32_t id) {
  Add("end " + std::to_string(id), id);
}

void RecordingListener::OnStreamFailed(uint32_t id, const StreamError& error) {
  stream_errors_.emplace_back(id, error);
}

void RecordingListener::OnStreamReset(uint32_t id, Http2ErrorCode code,
                                      bool remote) {
  Add("reset " + std::to_string(id) + " " + Http2ErrorCodeName(code) +
          (remote ? " remote" : " local"),
      id);
}

void RecordingListener::OnStreamClosed(uint32_t id) {
  held_ -= std::min(held_, unconsumed_[id]);
  unconsumed_.erase(id);
  Add("closed " + std::to_string(id), id);
}

void RecordingListener::OnStreamStarted(uint32_t id) {
  Add("started " + std::to_string(id), id);
}

void RecordingListener::OnStreamWritable(uint32_t id) {
  Add("writable " + std::to_string(id), id, /*noise=*/true);
}

void RecordingListener::OnRemoteSettings(const Http2Settings&) {
  Add("settings", 0, /*noise=*/true);
}

void RecordingListener::OnSettingsAcked() {
  Add("settings_acked", 0, /*noise=*/true);
}

void RecordingListener::OnPingAck(uint64_t opaque) {
  Add("ping_ack " + std::to_string(opaque), 0);
}

void RecordingListener::OnGoAway(uint32_t last, Http2ErrorCode code,
                                 std::string_view) {
  Add("goaway " + std::to_string(last) + " " + Http2ErrorCodeName(code), 0);
}

void RecordingListener::OnConnectionError(const ConnectionError& error) {
  connection_error_ = error;
  Add(std::string("connection_error ") + Http2ErrorCodeName(error.code()), 0);
}

void RecordingListener::OnDrained() { Add("drained", 0); }

// ---- Pairs ----

ConnectionOptions ServerOptions() {
  ConnectionOptions o;
  o.role = Role::kServer;
  return o;
}

ConnectionOptions ClientOptions() {
  ConnectionOptions o;
  o.role = Role::kClient;
  return o;
}

ConnectionOptions SmallLimitsOptions(Role role) {
  ConnectionOptions o;
  o.role = role;
  o.local_settings.initial_window_size = 1000;
  o.connection_window = 3000;
  o.receive_buffer_limit = 2000;
  o.local_settings.max_concurrent_streams = 3;
  o.local_settings.max_header_list_size = 2000;
  o.max_header_block_bytes = 4000;
  o.max_continuation_frames = 4;
  o.output_high_water = 2000;
  o.max_queued_replies = 20;
  o.stream_resets = {20, 10};
  o.pings = {10, 10};
  return o;
}

bool Shuttle(Connection* a, Connection* b, int64_t now_ns, int max_rounds) {
  for (int i = 0; i < max_rounds; ++i) {
    if (!a->WantsWrite() && !b->WantsWrite()) return true;
    SliceBuffer ab;
    a->TakeOutput(&ab);
    SliceBuffer ba;
    b->TakeOutput(&ba);
    if (!ab.empty() && !b->dead()) b->Receive(ab, now_ns);
    if (!ba.empty() && !a->dead()) a->Receive(ba, now_ns);
  }
  return !a->WantsWrite() && !b->WantsWrite();
}

}  // namespace testing
}  // namespace transport
