// Connection: one HTTP/2 connection (RFC 9113), client or server role, sans-IO.
//
// Bytes go in (Receive), bytes come out (output()), events go up to a
// ConnectionListener. There are no sockets, clocks or threads inside: time is
// an argument (a monotonic `int64_t now_ns`, nanoseconds, any epoch, the same
// clock for every call), and the I/O layer asks NextDeadline() when it must
// call OnTimer(). Everything happens on the caller's thread; a Connection is
// not thread-safe.
//
//   transport::ConnectionOptions options;            // role, SETTINGS, limits
//   options.role = transport::Role::kServer;
//   transport::Connection conn(options, &listener, now_ns);
//   // Each loop iteration:
//   if (!conn.Receive(bytes_just_read, now_ns)) ... dead: flush, then close ...
//   writev(conn.output() pieces ...); conn.ConsumeOutput(octets_written);
//   if (conn.done() && !conn.WantsWrite()) ... close the socket ...
//   timer at conn.NextDeadline() -> conn.OnTimer(now_ns);
//
// What it owns: the frame decoder, the HPACK encoder and decoder, the stream
// table and each stream's state (RFC 9113 5.1), both sides' SETTINGS, flow
// control (flow_control.h) for the connection and every stream, the field
// rules of RFC 9113 8.2/8.3 (header_rules.h), and the limits against abusive
// peers (ConnectionOptions, flood_budget.h). What it does not own: the
// application's meaning of streams (the listener), the socket, TLS, timers.
//
// Output and backpressure. Everything to send is appended to one SliceBuffer,
// output(). Control frames (SETTINGS, their ACKs, PING ACKs, WINDOW_UPDATE,
// RST_STREAM, GOAWAY) and HEADERS are appended when they arise; DATA is queued
// per stream (SubmitData) and moved into the output only while output() holds
// less than options.output_high_water octets and both flow-control windows
// allow it, round-robin over the streams one frame at a time. So a peer that
// never reads makes the output stop growing at about the high-water mark; the
// replies it provokes meanwhile (PING and SETTINGS ACKs, RST_STREAM) are
// counted and bounded by options.max_queued_replies. A PING ACK therefore
// overtakes every queued DATA octet not yet in the output.
//
// Errors (RFC 9113 5.4). Every failure is classified where it is found, and
// named (connection_error.h): a stream error resets one stream (RST_STREAM
// out, OnStreamFailed with its StreamErrorReason, OnStreamReset with
// remote = false) and the connection goes on; a connection error writes
// GOAWAY(last peer stream we accepted, code, the ConnectionErrorReason's name
// as debug data: "ping_flood", "hpack_error: index_zero"), ends every stream,
// calls OnConnectionError, and the connection is dead: Receive ignores
// further input and returns false, submits fail with kUnavailable, and the
// output (ending with the GOAWAY) only waits to be flushed.
//
// Re-entrancy. Listener callbacks may call any method of the Connection
// (submit a response from OnHeaders, ConsumeData from OnData, ResetStream from
// anywhere), but must not destroy it. Once a stream has ended (reset, or both
// sides closed) calls on it fail with kNotFound or do nothing, even before its
// OnStreamClosed arrives; its user data stays readable through OnStreamClosed.

#ifndef TRANSPORT_CONNECTION_CONNECTION_H_
#define TRANSPORT_CONNECTION_CONNECTION_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hpack/header_list.h"
#include "transport/connection/connection_error.h"
#include "transport/frame/http2_error.h"
#include "transport/frame/settings.h"
#include "transport/slice/slice.h"

namespace transport {

enum class Role : uint8_t { kClient, kServer };

// NextDeadline() when no timer is needed.
inline constexpr int64_t kNoDeadline = std::numeric_limits<int64_t>::max();
// The largest stream identifier (2^31 - 1).
inline constexpr uint32_t kMaxStreamId = 0x7fffffff;

// A token bucket against floods of frames that are each valid: `burst` frames
// at once, then `per_second` more per second of the caller's clock. Exceeding
// it is a connection error ENHANCE_YOUR_CALM.
struct FloodLimit {
  uint32_t burst;
  uint32_t per_second;
};

struct ConnectionOptions {
  Role role = Role::kServer;

  // Our SETTINGS, sent in the preface. Defaults suited to gRPC: push off,
  // 100 concurrent streams, 1 MiB stream windows, 16 KiB header lists.
  // local_settings.enable_push is always sent as 0.
  Http2Settings local_settings = DefaultLocalSettings();
  // The receive window of the whole connection (announced with a
  // WINDOW_UPDATE right after our SETTINGS).
  uint32_t connection_window = 4 << 20;
  // The receive policy (flow_control.h, README.md "Flow control"): credit
  // for the connection window goes back to the peer as DATA arrives while
  // the octets received and not yet consumed by the application, over all
  // streams, stay within this limit; each octet beyond it holds the
  // connection window until consumed. So streams whose application does not
  // read hold back only themselves (through their stream windows) until
  // this much waits, and received-but-unconsumed DATA never exceeds
  // receive_buffer_limit + connection_window. 0: credit only for consumed
  // octets (the window alone bounds the buffered DATA).
  size_t receive_buffer_limit = 16 << 20;

  // ---- Limits (each gives the error named; see README.md "Connection") ----
  // No SETTINGS ACK this long after our SETTINGS: GOAWAY SETTINGS_TIMEOUT.
  int64_t settings_timeout_ns = int64_t{10} * 1000 * 1000 * 1000;
  // GracefulShutdown: longest wait for the PING ACK before the final GOAWAY.
  int64_t shutdown_ping_timeout_ns = int64_t{5} * 1000 * 1000 * 1000;
  // Header lists (RFC 9113 6.5.2 sizes) larger than this are over our limit:
  // the block is decoded to its end (the HPACK context stays in step), its
  // fields past the limit are dropped, and the stream gets
  // OnHeaderListTooLarge instead of OnHeaders / OnTrailers; the connection
  // goes on. 0: local_settings.max_header_list_size, the limit we advertise.
  // A smaller value here is gRPC's soft limit below its hard one (the
  // advertised setting): peers that honour the setting may still send lists
  // between the two, and hear about it per stream.
  size_t soft_max_header_list_size = 0;
  // A header block (HEADERS/PUSH_PROMISE + CONTINUATION) larger than this:
  // GOAWAY ENHANCE_YOUR_CALM as soon as the frame that crosses it arrives
  // (nothing beyond it is buffered). The hard cap on what is decoded and
  // dropped, and so the most a peer can make us hold for a block: keep it
  // well above the header list limits (2 MiB, so a 1 MiB metadata value is a
  // stream-level matter).
  size_t max_header_block_bytes = 2 << 20;
  // CONTINUATION flood: a block may take max_continuation_frames
  // CONTINUATIONs, and more only while its frames average at least
  // min_continuation_average_bytes (a block of N octets may then take
  // N / min_continuation_average_bytes frames: 1 MiB in 4 KiB frames is
  // fine, a stream of tiny or empty frames is not). Past that: GOAWAY
  // ENHANCE_YOUR_CALM.
  uint32_t max_continuation_frames = 128;
  size_t min_continuation_average_bytes = 1024;
  // A header block begun (HEADERS without END_HEADERS) and not finished
  // within this: GOAWAY ENHANCE_YOUR_CALM (nothing else may be sent on the
  // connection meanwhile, RFC 9113 6.10, and the block's buffer is held).
  // 0: no timeout.
  int64_t header_block_timeout_ns = int64_t{10} * 1000 * 1000 * 1000;
  // An HPACK bomb: a block that decodes to a header list more than
  // kHpackBombFactor times both its own octets and our header list limit
  // is a connection error (GOAWAY ENHANCE_YOUR_CALM "hpack_bomb"), not a
  // stream one. Only references to the dynamic table amplify that much (a
  // literal field decodes to at most about 11 times its octets, a static
  // table reference to about 60); a small block of references stays under
  // 64 times the limit, and a large literal block under 64 times its size.
  static constexpr size_t kHpackBombFactor = 64;
  // DATA is moved into the output only while output().size() is below this.
  size_t output_high_water = 256 << 10;
  // Replies the peer provoked (SETTINGS ACK, PING ACK, RST_STREAM) written
  // while the output never drained: more is GOAWAY ENHANCE_YOUR_CALM.
  uint32_t max_queued_replies = 1000;
  // Client: requests waiting for the peer's MAX_CONCURRENT_STREAMS; more
  // fail SubmitRequest with kResourceExhausted.
  uint32_t max_pending_streams = 1000;
  // Client: a stream we reset (ResetStream, or a stream error) while the
  // peer's side was open keeps counting against the peer's
  // MAX_CONCURRENT_STREAMS until the peer shows it is done with it (a frame
  // with END_STREAM or RST_STREAM on it), so that a new stream is not
  // refused by a peer that has not yet processed the reset. When requests
  // wait only for such streams, a PING (opaque 0x72737461xxxxxxxx, "rsta",
  // reserved) asks the peer to acknowledge every reset before it: at most
  // one at a time, at most one per reset_ping_interval_ns, and only if the
  // peer sent HEADERS or DATA since the previous one (a peer's ping policy
  // forgives pings while it sends; otherwise the resets stop counting).
  // Resets whose PING is not ACKed within reset_ping_timeout_ns stop
  // counting; at most max_unanswered_resets are counted.
  uint32_t max_unanswered_resets = 1000;
  int64_t reset_ping_interval_ns = int64_t{20} * 1000 * 1000;
  int64_t reset_ping_timeout_ns = int64_t{1} * 1000 * 1000 * 1000;
  // The first stream id we open (0: 1 for a client, 2 for a server). Tests
  // start near the end of the id space; the parity must fit the role.
  uint32_t first_local_stream_id = 0;

  // Flood budgets (FloodLimit above).
  // RST_STREAM received (server role), plus stream errors the peer caused
  // (CVE-2023-44487).
  FloodLimit stream_resets = {1000, 200};
  FloodLimit settings_frames = {100, 10};    // Non-ACK SETTINGS.
  FloodLimit pings = {1000, 100};            // Non-ACK PING.
  FloodLimit empty_data_frames = {100, 10};  // DATA, length 0, no END_STREAM.
  FloodLimit window_updates = {10000, 10000};
  FloodLimit other_frames = {1000, 100};  // PRIORITY, unknown types.

  // The header list limit in force: soft_max_header_list_size, or the
  // advertised local_settings.max_header_list_size when that is 0.
  size_t header_list_limit() const {
    return soft_max_header_list_size != 0
               ? soft_max_header_list_size
               : size_t{local_settings.max_header_list_size};
  }

  static Http2Settings DefaultLocalSettings() {
    Http2Settings s;
    s.enable_push = false;
    s.max_concurrent_streams = 100;
    s.initial_window_size = 1 << 20;
    s.max_header_list_size = 16 << 10;
    return s;
  }
};

// Events of one connection. Callback order:
//
// Per stream, server role (peer-initiated streams):
//   OnHeaders(request, end_stream)          exactly once, first: a new stream
//                                           (or OnHeaderListTooLarge)
//   OnData(piece)*                          request body, in order
//   OnEndStream | OnTrailers                the request ends (at most once;
//                                           neither if OnHeaders had
//                                           end_stream)
//   OnStreamClosed                          last, once both sides are done or
//                                           the stream was reset
// Per stream, client role (streams from SubmitRequest):
//   OnStreamStarted                         its HEADERS went out (after waiting
//                                           for MAX_CONCURRENT_STREAMS, maybe)
//   OnHeaders(1xx, false)*                  informational responses
//   OnHeaders(response, end_stream)         the final response (or
//                                           OnHeaderListTooLarge)
//   OnData(piece)* , OnEndStream | OnTrailers, OnStreamClosed   as above
//                                           (OnHeaderListTooLarge in place
//                                           of OnTrailers, either role)
// At any point before OnStreamClosed: OnStreamReset (after OnStreamFailed for
// a stream error we found), OnStreamWritable.
// OnStreamClosed and OnStreamWritable are delivered at the end of the
// outermost Connection call (after its DATA pump; so never in the middle of
// the application's own submit), OnStreamClosed in order of closing.
// ResetStream by the application gives OnStreamClosed only.
//
// Connection-wide, interleaved with the above in wire order: OnRemoteSettings
// (each SETTINGS from the peer, after it is applied and ACKed), OnSettingsAcked
// (the peer ACKed ours), OnPing, OnPingAck, OnGoAway. Then, at most one of:
//   OnConnectionError   we failed the connection (after every live stream got
//                       OnStreamReset(code, false) + OnStreamClosed); last
//                       callback.
//   OnDrained           a GOAWAY was sent or received and no stream is left:
//                       flush the output and close; last callback.
class ConnectionListener {
 public:
  virtual ~ConnectionListener() = default;

  // Request headers (server; a new stream) or response headers (client; 1xx
  // informational responses come with end_stream false, then the final one).
  // `headers` is valid only during the call. Pseudo-headers come first and
  // passed the rules of RFC 9113 8.3.
  virtual void OnHeaders(uint32_t stream_id, const hpack::HeaderList& headers,
                         bool end_stream) = 0;
  // Trailers: the peer's side of the stream ends with them.
  virtual void OnTrailers(uint32_t stream_id,
                          const hpack::HeaderList& trailers) = 0;
  // Instead of OnHeaders or OnTrailers: the block decoded to a header list
  // over our limit (ConnectionOptions::header_list_limit()). `partial` holds
  // its fields before the first one that did not fit, unchecked (pseudo-
  // headers may be missing); `list_size` is the size of the whole list as
  // sent (RFC 9113 6.5.2 accounting, dropped fields included). The HPACK
  // context and the connection are intact. Server, request headers: the
  // stream is new and exists now (counted as any other). The listener may
  // answer: end our side (server: a complete response, e.g. gRPC's
  // Trailers-Only RESOURCE_EXHAUSTED; RFC 9113 8.1 then allows
  // ResetStream(kNoError) for a request still open) or ResetStream (client:
  // fail the call). The block's END_STREAM is applied before this call: a
  // stream both sides have ended is already closed (OnStreamClosed follows;
  // a ResetStream in answer sends nothing). A stream left alone (the
  // default) is reset with PROTOCOL_ERROR, a RST_STREAM and
  // OnStreamReset(kProtocolError, false) as for any malformed message (RFC
  // 9113 8.1.1), unless our side had already ended and the block ends the
  // peer's: the stream then completes as it is. Trailers without
  // END_STREAM never come here: they are PROTOCOL_ERROR (8.1).
  virtual void OnHeaderListTooLarge(uint32_t /*stream_id*/,
                                    const hpack::HeaderList& /*partial*/,
                                    size_t /*list_size*/) {}
  // A piece of the body: a Slice of the received bytes (no copy); may be kept.
  // Its octets count against the receive windows until ConsumeData.
  virtual void OnData(uint32_t stream_id, Slice data) = 0;
  // The peer ended its side with DATA END_STREAM.
  virtual void OnEndStream(uint32_t stream_id) = 0;
  // The stream ended abnormally: the peer's RST_STREAM (remote = true), a
  // GOAWAY that excluded it (kRefusedStream, remote = true: safe to retry), a
  // stream error we found (remote = false, the code we sent; OnStreamFailed
  // came just before), the connection failing (remote = false; error() says
  // why) or the transport closing (kCancel, remote = true). OnStreamClosed
  // follows.
  virtual void OnStreamReset(uint32_t stream_id, Http2ErrorCode code,
                             bool remote) = 0;
  // A stream error we found on the peer's frames, and why (the header rule,
  // HPACK field error, ... behind it); its RST_STREAM is already written.
  // OnStreamReset(error.code, /*remote=*/false) follows, unless the listener
  // ends the stream itself from here: ResetStream (no second RST_STREAM;
  // OnStreamClosed only) or a GoAway that fails the connection (its
  // OnStreamReset instead).
  virtual void OnStreamFailed(uint32_t /*stream_id*/,
                              const StreamError& /*error*/) {}
  // The stream is gone: its id is closed, its user data may be released.
  virtual void OnStreamClosed(uint32_t /*stream_id*/) {}
  // Client: the stream's HEADERS were written (it left the pending queue).
  virtual void OnStreamStarted(uint32_t /*stream_id*/) {}
  // Everything the stream had queued (DATA, trailers, END_STREAM) has moved
  // to the output: submit more. Promised for every submit that returns with
  // output still queued on the stream, wherever it was made: inside a
  // callback (where nothing moves until the outermost call ends), on a
  // client stream still pending, or when the data had to wait for a window
  // or the output high-water mark. Not for an outermost submit whose data
  // moved at once (stream_queued_bytes() is 0 when it returns). Delivered at
  // the end of the outermost Connection call, like OnStreamClosed (so never
  // inside the submit's own work), once per emptying; not for a stream that
  // closed meanwhile.
  virtual void OnStreamWritable(uint32_t /*stream_id*/) {}
  virtual void OnRemoteSettings(const Http2Settings& /*settings*/) {}
  virtual void OnSettingsAcked() {}
  virtual void OnPingAck(uint64_t /*opaque*/) {}
  // The peer sent a PING (not an ACK), within the pings flood budget. The
  // ACK is written right after this returns, unless the listener killed the
  // connection here (GoAway with an error code: a ping policy's "too many
  // pings").
  virtual void OnPing(uint64_t /*opaque*/) {}
  // The peer sent GOAWAY. Streams we initiated above last_stream_id get
  // OnStreamReset(kRefusedStream, true) right after; no new ones can start.
  virtual void OnGoAway(uint32_t /*last_stream_id*/, Http2ErrorCode /*code*/,
                        std::string_view /*debug_data*/) {}
  // We failed the connection: `error` names why (its DebugData() went out in
  // our GOAWAY).
  virtual void OnConnectionError(const ConnectionError& /*error*/) {}
  virtual void OnDrained() {}
};

class Connection {
 public:
  // Writes our preface (client: the magic octets, then SETTINGS; both: a
  // WINDOW_UPDATE for the connection window) to the output and starts the
  // settings timer at now_ns. `listener` must outlive the connection.
  Connection(const ConnectionOptions& options, ConnectionListener* listener,
             int64_t now_ns);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // ---- Input ----
  // Processes the next octets from the peer (any split). Returns false once
  // the connection is dead (now, or earlier: input is then ignored).
  bool Receive(const Slice& bytes, int64_t now_ns);
  bool Receive(const SliceBuffer& bytes, int64_t now_ns);
  // The transport closed (EOF, reset, TLS failure): every live stream gets
  // OnStreamReset(kCancel, true) and OnStreamClosed; the connection is dead
  // (no GOAWAY is written, no OnConnectionError).
  void OnTransportClosed();

  // ---- Output ----
  bool WantsWrite() const;
  // Everything to send, in order. Write from the front, then ConsumeOutput.
  const SliceBuffer& output() const;
  // The first `n` octets of output() were written: drops them, and moves more
  // queued DATA in if it waits.
  void ConsumeOutput(size_t n);
  // Moves all of output() to the end of *out (then refills, as ConsumeOutput).
  // For callers that write everything they take; tests.
  void TakeOutput(SliceBuffer* out);
  // Frees what an idle connection does not need: the output block when
  // nothing waits to be written, and the storage of the last received header
  // block. The state is unchanged; the next frame allocates again. For
  // drivers, when no stream is active (so busy connections keep theirs).
  void ReleaseIdleMemory();

  // ---- Timers ----
  // When OnTimer must be called next (kNoDeadline: no timer).
  int64_t NextDeadline() const;
  // Fires what is due at now_ns: settings ACK timeout (connection error
  // SETTINGS_TIMEOUT), the graceful shutdown's PING wait.
  void OnTimer(int64_t now_ns);

  // ---- Streams ----
  // Client: opens a request stream and returns its id (ids are assigned now,
  // in submission order). When the peer's MAX_CONCURRENT_STREAMS (taken as
  // at most 100 until the peer's first SETTINGS arrive; streams we reset
  // count until the peer has seen the reset, see max_unanswered_resets) is
  // reached the stream waits in a queue (its HEADERS not yet sent; SubmitData
  // and SubmitTrailers may queue behind them) and starts as others close:
  // OnStreamStarted tells when. `headers`: pseudo-headers first (:method,
  // :scheme, :path, :authority), lowercase names.
  // Errors: kFailedPrecondition (server role), kInvalidArgument (breaks RFC
  // 9113 8.2/8.3), kResourceExhausted (larger than the peer's
  // MAX_HEADER_LIST_SIZE; max_pending_streams reached), kUnavailable (dead,
  // GOAWAY sent or received, stream ids exhausted: open a new connection).
  absl::StatusOr<uint32_t> SubmitRequest(
      absl::Span<const hpack::HeaderField> headers, bool end_stream,
      void* user_data = nullptr);
  // Server: response headers of a peer stream: any number of 1xx (end_stream
  // false), then the final one; written to the output at once. Errors:
  // kNotFound (no such open stream), kFailedPrecondition (client role, final
  // headers already sent, our side ended), kInvalidArgument,
  // kResourceExhausted (peer's MAX_HEADER_LIST_SIZE), kUnavailable (dead).
  absl::Status SubmitHeaders(uint32_t stream_id,
                             absl::Span<const hpack::HeaderField> headers,
                             bool end_stream);
  // Queues body octets (no copy; an empty buffer with end_stream just ends
  // the stream). Sent as the windows allow, split by the peer's
  // MAX_FRAME_SIZE. Errors: kNotFound, kFailedPrecondition (server before
  // final response headers; our side already ended), kUnavailable.
  absl::Status SubmitData(uint32_t stream_id, SliceBuffer data,
                          bool end_stream);
  // Queues trailers behind the stream's data and ends our side. No
  // pseudo-headers. Errors as SubmitHeaders.
  absl::Status SubmitTrailers(uint32_t stream_id,
                              absl::Span<const hpack::HeaderField> trailers);
  // Ends a stream now: RST_STREAM(code) (none for a client stream still
  // pending), its queued data dropped, OnStreamClosed. No-op for unknown ids.
  // Whatever the peer still sends on it is ignored (RFC 9113 5.1, 6.4; its
  // DATA credited to the connection window), however many streams were
  // reset, and a client's stream keeps counting against the peer's
  // MAX_CONCURRENT_STREAMS until the peer answers (max_unanswered_resets).
  void ResetStream(uint32_t stream_id, Http2ErrorCode code);
  // The application is done with `bytes` octets of the stream's DATA: they
  // leave the receive windows, and WINDOW_UPDATEs go out once half a window
  // is free (the receive policy: a slow reader stops the peer on its stream;
  // the connection window came back on receipt unless more than
  // options.receive_buffer_limit octets wait). Unknown or closed streams:
  // no-op (a closing stream's unconsumed octets go back to the connection
  // window by themselves).
  void ConsumeData(uint32_t stream_id, size_t bytes);

  void SetStreamUserData(uint32_t stream_id, void* user_data);
  // nullptr for unknown streams; readable until OnStreamClosed returns.
  void* GetStreamUserData(uint32_t stream_id) const;

  // ---- Connection ----
  // PING (non-ACK) with `opaque`; OnPingAck(opaque) when answered.
  void SendPing(uint64_t opaque);
  // Server: GOAWAY(2^31-1, NO_ERROR) and a PING; on its ACK (or after
  // options.shutdown_ping_timeout_ns) a second GOAWAY with the last stream we
  // accepted. Streams above it are ignored, those below drain; then OnDrained.
  // Client: GOAWAY(0, NO_ERROR); no new requests; OnDrained once its streams
  // are done. Repeated calls: no-op.
  void GracefulShutdown(int64_t now_ns);
  // GOAWAY(last accepted peer stream, code, debug) at once. NO_ERROR: no new
  // streams, existing ones drain (OnDrained). Any other code: the connection
  // is dead as after a connection error, without OnConnectionError.
  void GoAway(Http2ErrorCode code, std::string_view debug_data);

  // ---- State, for the I/O layer and tests ----
  Role role() const;
  // A connection error happened, GoAway(error) was called, or the transport
  // closed. Input is ignored; output may still hold the GOAWAY.
  bool dead() const;
  // Dead, or drained after a GOAWAY: nothing more will happen; once the
  // output is flushed, close.
  bool done() const;
  // The peer sent GOAWAY: no new streams here (a client opens another
  // connection); those at or below its last stream id go on.
  bool goaway_received() const;
  // Why the connection died: ok() unless a connection error happened, GoAway
  // was called with an error code (kApplicationGoAway) or the transport
  // closed (kTransportClosed).
  const ConnectionError& error() const;
  const Http2Settings& local_settings() const;
  // The peer's settings as applied so far (protocol defaults until its
  // SETTINGS arrive).
  const Http2Settings& remote_settings() const;
  // Open or half-closed streams (pending client streams not included).
  size_t num_active_streams() const;
  // Memory held for received header blocks between blocks: the buffer that
  // assembles HEADERS + CONTINUATION and the reused header list (given back
  // after a large block).
  size_t header_block_memory() const;
  // Client streams waiting for the peer's MAX_CONCURRENT_STREAMS.
  size_t num_pending_streams() const;
  // DATA octets submitted and not yet in the output, over all streams.
  size_t queued_send_bytes() const;
  // The same for one stream (0 for unknown or closed streams). Inside a
  // listener callback data submitted there still counts: it moves to the
  // output at the end of the outermost call. When this is above 0 outside a
  // Connection call or after a submit, OnStreamWritable(stream_id) follows
  // once it reaches 0 (unless the stream closes first).
  size_t stream_queued_bytes(uint32_t stream_id) const;
  // DATA octets received and not yet consumed, over all streams.
  size_t unconsumed_receive_bytes() const;
  // Send windows: the connection's, and a stream's (0 for unknown streams).
  int64_t connection_send_window() const;
  int64_t stream_send_window(uint32_t stream_id) const;
  // The highest peer-initiated stream id accepted (the GOAWAY last stream id).
  uint32_t last_accepted_stream_id() const;
  // How many times HEADERS (a header block, trailers included) or DATA went
  // into the output; only grows. A server's ping policy resets its strikes
  // when this moves (gRPC: pings are fine while we send data or headers).
  uint64_t headers_or_data_sent() const;
  // How many times the stream table was searched by id (every submit, every
  // frame on a stream, every step of the DATA pump); only grows. For tests
  // that count the work a call does (connection_scale_test: the cost of a
  // submit does not grow with the number of streams queued).
  uint64_t stream_lookups() const;
  // Entries in our HPACK encoder's dynamic table, and how many times it
  // changed (an insert or an eviction; only grows). For tests of what a
  // header block does to the table (the peer's decoder mirrors it).
  size_t encoder_table_entries() const;
  uint64_t encoder_table_version() const;
  // Every stream id of ours is used: no new stream can be opened (a client
  // opens a new connection).
  bool local_stream_ids_exhausted() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace transport

#endif  // TRANSPORT_CONNECTION_CONNECTION_H_
