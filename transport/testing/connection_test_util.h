// Test harness for Connection: a scripted peer that writes frames (with its
// own HPACK encoder, so header blocks stay in step) and reads back what the
// Connection wrote as decoded frames, a listener that records every event as a
// line of text, and a pair of Connections wired back to back.
//
//   ScriptedPeer peer(Role::kClient);           // the peer's role
//   RecordingListener events;
//   Connection conn(ServerOptions(), &events, 0);
//   peer.Preface().SettingsAck().Headers(1, GetRequest("/"), true);
//   conn.Receive(peer.TakeSlice(), 0);
//   std::vector<PeerFrame> out = peer.Read(&conn);
//   EXPECT_EQ(events.lines(), (Lines{"headers 1 end :method=GET ..."}));

#ifndef TRANSPORT_TESTING_CONNECTION_TEST_UTIL_H_
#define TRANSPORT_TESTING_CONNECTION_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/header_list.h"
#include "transport/connection/connection.h"
#include "transport/frame/frame.h"
#include "transport/frame/frame_collector.h"
#include "transport/frame/frame_decoder.h"
#include "transport/frame/http2_error.h"
#include "transport/frame/settings.h"
#include "transport/slice/slice.h"

namespace transport {
namespace testing {

using Fields = std::vector<std::pair<std::string, std::string>>;
using Lines = std::vector<std::string>;

// hpack::HeaderField views of `fields` (valid while `fields` lives).
std::vector<hpack::HeaderField> View(const Fields& fields);
// "k=v k=v ..."
std::string FieldsToString(const Fields& fields);
std::string FieldsToString(const hpack::HeaderList& fields);

Fields GetRequest(std::string path = "/");
Fields PostRequest(std::string path = "/echo");
Fields Response(int status = 200);

// One frame the Connection wrote, as the peer decoded it. HEADERS carry the
// whole block (CONTINUATIONs merged, `continuations` counts them), decoded.
struct PeerFrame {
  FrameType type = FrameType::kData;
  uint32_t stream_id = 0;
  bool end_stream = false;
  bool ack = false;
  Fields headers;
  int continuations = 0;
  std::string data;
  Http2ErrorCode code = Http2ErrorCode::kNoError;
  uint32_t last_stream_id = 0;
  uint32_t increment = 0;
  uint64_t opaque = 0;
  std::vector<Setting> settings;
  std::string debug;

  // E.g. "HEADERS 1 end :status=200", "DATA 1 hello", "RST_STREAM 3
  // PROTOCOL_ERROR", "GOAWAY 5 NO_ERROR", "WINDOW_UPDATE 0 1000",
  // "SETTINGS ack", "PING ack 7".
  std::string ToString() const;
};
std::vector<std::string> ToStrings(const std::vector<PeerFrame>& frames);

class ScriptedPeer {
 public:
  // `role`: the peer's own role (opposite of the Connection under test).
  explicit ScriptedPeer(Role role);

  // ---- Writing (appends to the bytes TakeSlice returns) ----
  // Client: the magic octets, then SETTINGS; server: SETTINGS.
  ScriptedPeer& Preface(const std::vector<Setting>& settings = {});
  ScriptedPeer& Settings(const std::vector<Setting>& settings);
  ScriptedPeer& SettingsAck();
  ScriptedPeer& Headers(uint32_t stream_id, const Fields& fields,
                        bool end_stream, uint32_t max_frame_size = 16384);
  // An already encoded block fragment as one HEADERS frame.
  ScriptedPeer& HeadersFragment(uint32_t stream_id, std::string_view fragment,
                                bool end_stream, bool end_headers);
  ScriptedPeer& Continuation(uint32_t stream_id, std::string_view fragment,
                             bool end_headers);
  ScriptedPeer& Data(uint32_t stream_id, std::string_view payload,
                     bool end_stream);
  ScriptedPeer& PaddedData(uint32_t stream_id, std::string_view payload,
                           uint8_t pad_length, bool end_stream);
  ScriptedPeer& RstStream(uint32_t stream_id, Http2ErrorCode code);
  ScriptedPeer& Ping(uint64_t opaque, bool ack = false);
  ScriptedPeer& GoAway(uint32_t last_stream_id, Http2ErrorCode code,
                       std::string_view debug = "");
  ScriptedPeer& WindowUpdate(uint32_t stream_id, uint32_t increment);
  ScriptedPeer& Priority(uint32_t stream_id, uint32_t depends_on);
  ScriptedPeer& PushPromise(uint32_t stream_id, uint32_t promised,
                            const Fields& fields);
  ScriptedPeer& Unknown(uint8_t type, uint32_t stream_id, uint32_t length);
  ScriptedPeer& Raw(std::string_view bytes);

  // Encodes a block with the peer's encoder (its HPACK context advances).
  std::string Encode(const Fields& fields);
  hpack::Encoder& encoder() { return encoder_; }
  // The peer's decoder of our header blocks (its dynamic table mirrors our
  // encoder's).
  const hpack::Decoder& decoder() const { return decoder_; }

  // The bytes written so far, as one Slice, and forgets them.
  Slice TakeSlice();
  std::string TakeBytes();
  size_t pending_bytes() const { return out_.size(); }

  // ---- Reading ----
  // Takes the Connection's output and decodes it.
  std::vector<PeerFrame> Read(Connection* conn);
  // Decodes bytes the Connection wrote.
  std::vector<PeerFrame> Decode(const SliceBuffer& bytes);
  // The peer's frame or HPACK decoding failed (ok normally).
  const Http2Error& read_error() const { return read_error_; }

 private:
  Role role_;
  hpack::Encoder encoder_;
  hpack::Decoder decoder_;
  FrameCollector collector_;
  FrameDecoder frame_decoder_;
  SliceBuffer out_;
  Http2Error read_error_;
  // A HEADERS frame waiting for its CONTINUATIONs.
  bool in_block_ = false;
  PeerFrame block_frame_;
  std::string block_;
};

// Records every ConnectionListener event as a line, e.g. "headers 1 end
// :method=GET ...", "data 1 hello", "end 1", "trailers 1 grpc-status=0",
// "reset 3 PROTOCOL_ERROR local", "closed 1", "started 1", "writable 1",
// "settings", "settings_acked", "ping_ack 7", "goaway 5 NO_ERROR",
// "connection_error ENHANCE_YOUR_CALM", "drained". Data lines are
// off by default (bodies go to body(id)). The reasons (OnStreamFailed,
// OnConnectionError) are kept aside, not as lines: stream_errors(),
// connection_error().
class RecordingListener : public ConnectionListener {
 public:
  // Consume every DATA piece as it arrives (the eager reader).
  bool auto_consume = true;
  // Record "data <id> <bytes>" lines.
  bool record_data = false;
  // Record "writable", "settings", "settings_acked" lines.
  bool record_noise = false;
  // Set to let the listener act (respond) on events; called after recording.
  std::function<void(const std::string& line, uint32_t stream_id)> on_event;
  Connection* connection = nullptr;  // For auto_consume.

  const Lines& lines() const { return lines_; }
  // Every OnStreamFailed so far (Clear() keeps them), in order.
  const std::vector<std::pair<uint32_t, StreamError>>& stream_errors() const {
    return stream_errors_;
  }
  // What OnConnectionError reported (ok() if it was not called).
  const ConnectionError& connection_error() const { return connection_error_; }
  // Lines starting with `prefix`.
  Lines Matching(std::string_view prefix) const;
  void Clear() { lines_.clear(); }
  const std::string& body(uint32_t id) { return bodies_[id]; }
  size_t held_bytes() const { return held_; }
  // Consumes everything held so far (the slow reader catching up).
  void ConsumeAll();

  void OnHeaders(uint32_t stream_id, const hpack::HeaderList& headers,
                 bool end_stream) override;
  void OnTrailers(uint32_t stream_id,
                  const hpack::HeaderList& trailers) override;
  // "too_large <id> <list size> kept <fields kept>".
  void OnHeaderListTooLarge(uint32_t stream_id,
                            const hpack::HeaderList& partial,
                            size_t list_size) override;
  void OnData(uint32_t stream_id, Slice data) override;
  void OnEndStream(uint32_t stream_id) override;
  void OnStreamReset(uint32_t stream_id, Http2ErrorCode code,
                     bool remote) override;
  void OnStreamFailed(uint32_t stream_id, const StreamError& error) override;
  void OnStreamClosed(uint32_t stream_id) override;
  void OnStreamStarted(uint32_t stream_id) override;
  void OnStreamWritable(uint32_t stream_id) override;
  void OnRemoteSettings(const Http2Settings& settings) override;
  void OnSettingsAcked() override;
  void OnPingAck(uint64_t opaque) override;
  void OnGoAway(uint32_t last_stream_id, Http2ErrorCode code,
                std::string_view debug_data) override;
  void OnConnectionError(const ConnectionError& error) override;
  void OnDrained() override;

 private:
  void Add(std::string line, uint32_t stream_id, bool noise = false);

  Lines lines_;
  std::vector<std::pair<uint32_t, StreamError>> stream_errors_;
  ConnectionError connection_error_;
  std::map<uint32_t, std::string> bodies_;
  std::map<uint32_t, size_t> unconsumed_;
  size_t held_ = 0;
};

ConnectionOptions ServerOptions();
ConnectionOptions ClientOptions();
// Small windows (1000 octets, connection 3000, receive buffer limit 2000),
// 3 concurrent streams, header lists of 2000 octets and every flood limit
// low: fuzzers reach the limits with short inputs (connection_fuzzer,
// rpc/fuzz).
ConnectionOptions SmallLimitsOptions(Role role);

// Moves bytes both ways between two Connections until neither has output (at
// most `max_rounds` rounds; returns false if they were still talking). Time
// stands at now_ns.
bool Shuttle(Connection* a, Connection* b, int64_t now_ns = 0,
             int max_rounds = 10000);

}  // namespace testing
}  // namespace transport

#endif  // TRANSPORT_TESTING_CONNECTION_TEST_UTIL_H_
