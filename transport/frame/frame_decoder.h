// FrameDecoder: an incremental RFC 9113 frame decoder. Bytes go in as Slices of
// any size, split anywhere; frames come out as FrameListener callbacks.
//
// clang-format off
//   class MyConnection : public transport::FrameListener { ... };
//   transport::FrameDecoder::Options options;
//   options.expect_client_preface = true;  // server side
//   transport::FrameDecoder decoder(&connection, options);
//   transport::Http2Error e = decoder.Decode(slice_just_read);
//   if (!e.ok()) ... GOAWAY(e.code(), e.message()), close ...
// clang-format on
//
// What it checks: the client preface (server side), the frame size limit (our
// SETTINGS_MAX_FRAME_SIZE), and the per-frame rules of RFC 9113 section 6
// (lengths of fixed-size frames, stream identifier zero or non-zero, padding,
// SETTINGS entries and values, WINDOW_UPDATE increment, the CONTINUATION
// sequence after a HEADERS or PUSH_PROMISE without END_HEADERS). What it does
// not check: anything that needs the connection's state (stream states and
// identifier order of section 5.1, flow-control windows, whether PUSH_PROMISE
// is allowed, header block contents, floods of otherwise valid frames). Those
// belong to the Connection, which gets every frame that passes here.
//
// Unknown frame types are ignored (RFC 9113 section 5.5: OnUnknownFrame,
// payload skipped) except in the middle of a header block, where any frame but
// CONTINUATION is an error. Flags a type does not define are ignored, as are
// unknown settings (they reach OnSettings; Http2Settings::Apply ignores them).
//
// Copies. DATA payloads are never copied: OnData receives Slices of the input
// (padding stripped), which share the input's block. Other frames (their
// payloads are small and bounded) are handed over as views: of the input when
// the whole frame lies in one input Slice, else of a scratch buffer the decoder
// accumulates the payload in. The scratch grows to the largest such frame seen,
// at most max_frame_size octets: that is the decoder's whole memory besides the
// listener's.
//
// Fast paths, each an answer-for-answer cache of the general path
// (frame_decoder_split_test holds them equal by decoding frame sequences split
// at every offset and at random):
//  * the 9-octet header is parsed with one 64-bit load when it lies in one
//    input (ParseFrameHeaderFast) instead of being assembled octet by octet;
//  * a frame whose header and payload lie in one input is handled in place
//    (no state machine steps, no scratch copy);
//  * the client preface is compared as three 64-bit words when it lies in one
//    input (the general path compares octet by octet and fails at the first
//    wrong one).
//
// Errors (FrameDecodeError below names each rule): a connection error is
// returned by Decode and is sticky: every later Decode returns it without
// reading its input and no more callbacks are made. A stream error (a bad
// PRIORITY frame, a zero WINDOW_UPDATE increment on a stream) goes to
// OnStreamError; the frame is dropped and decoding goes on.

#ifndef TRANSPORT_FRAME_FRAME_DECODER_H_
#define TRANSPORT_FRAME_FRAME_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "transport/frame/frame.h"
#include "transport/frame/http2_error.h"
#include "transport/frame/settings.h"
#include "transport/slice/slice.h"

namespace transport {

// Every rule the decoder enforces, with its RFC 9113 consequence.
enum class FrameDecodeError : uint8_t {
  kOk = 0,

  // ---- Connection errors (Decode returns them; sticky) ----
  // PROTOCOL_ERROR: not the 24-octet client preface (3.4).
  kInvalidPreface,
  // PROTOCOL_ERROR: the first frame is not a SETTINGS without ACK (3.4).
  kSettingsExpected,
  // FRAME_SIZE_ERROR: length above our SETTINGS_MAX_FRAME_SIZE (4.2).
  kFrameTooLarge,
  // PROTOCOL_ERROR: stream 0 on DATA, HEADERS, PRIORITY, RST_STREAM or
  // PUSH_PROMISE (6.1-6.6).
  kStreamIdRequired,
  // PROTOCOL_ERROR: a stream on SETTINGS, PING or GOAWAY (6.5, 6.7, 6.8).
  kStreamIdForbidden,
  // FRAME_SIZE_ERROR: too short for the pad length octet, the priority fields,
  // the promised stream id, or GOAWAY's 8 octets (4.2).
  kFrameTooShort,
  // PROTOCOL_ERROR: padding at least as long as what remains (6.1, 6.2, 6.6).
  kPaddingTooLong,
  // PROTOCOL_ERROR: HEADERS depending on its own stream (5.3.1). A stream error
  // in the RFC; a connection error here because the header block must still
  // reach HPACK (5.4.1 allows treating a stream error so).
  kHeadersSelfDependency,
  // FRAME_SIZE_ERROR: RST_STREAM length other than 4 (6.4).
  kBadRstStreamLength,
  // FRAME_SIZE_ERROR: SETTINGS with ACK and a payload (6.5).
  kSettingsAckWithPayload,
  // FRAME_SIZE_ERROR: SETTINGS length not a multiple of 6 (6.5).
  kBadSettingsLength,
  // ValidateSetting's code (6.5.2): ENABLE_PUSH > 1 (PROTOCOL_ERROR),
  // INITIAL_WINDOW_SIZE > 2^31-1 (FLOW_CONTROL_ERROR), MAX_FRAME_SIZE outside
  // [2^14, 2^24-1] (PROTOCOL_ERROR).
  kInvalidSettingValue,
  // FRAME_SIZE_ERROR: PING length other than 8 (6.7).
  kBadPingLength,
  // FRAME_SIZE_ERROR: WINDOW_UPDATE length other than 4 (6.9).
  kBadWindowUpdateLength,
  // PROTOCOL_ERROR: WINDOW_UPDATE increment 0 on stream 0 (6.9).
  kZeroConnectionWindowIncrement,
  // PROTOCOL_ERROR: a header block is open and this frame is not a
  // CONTINUATION on its stream (6.10).
  kExpectedContinuation,
  // PROTOCOL_ERROR: CONTINUATION with no open header block (6.10).
  kUnexpectedContinuation,
  // The code the listener passed to FrameDecoder::Stop.
  kStoppedByListener,

  // ---- Stream errors (OnStreamError; dropped, decoding goes on) ----
  // FRAME_SIZE_ERROR: PRIORITY length other than 5 (6.3).
  kBadPriorityLength,
  // PROTOCOL_ERROR: PRIORITY depending on its own stream (5.3.1).
  kPrioritySelfDependency,
  // PROTOCOL_ERROR: WINDOW_UPDATE increment 0 on a stream (6.9).
  kZeroStreamWindowIncrement,
};

// "ok", "invalid_preface", ...: a stable snake_case name for every value.
const char* FrameDecodeErrorName(FrameDecodeError error);

constexpr bool IsFrameStreamError(FrameDecodeError error) {
  return error >= FrameDecodeError::kBadPriorityLength;
}

// The Http2Error the decoder reports for `error` (not for kInvalidSettingValue
// and kStoppedByListener, whose code is not fixed): scope and code as listed
// above, the message is FrameDecodeErrorName(error). `stream_id` is used for
// stream errors.
Http2Error MakeFrameDecodeError(FrameDecodeError error, uint32_t stream_id = 0);

// Receives the frames. Callback order, per frame, in wire order:
//
// clang-format off
//   OnFrameHeader(header)  once the 9-octet header has passed the frame-level
//                          checks (size, stream id zero/non-zero, fixed
//                          lengths, CONTINUATION sequence), before any octet
//                          of the payload is looked at;
//   then, by type, when the frame is complete unless noted:
//   DATA           OnDataStart(header) as soon as the pad length octet (if
//                  any) has been read and checked, then OnData(stream, piece)
//                  zero or more times as payload arrives (never an empty
//                  piece; concatenated they are the payload without padding),
//                  then OnDataEnd(stream, end_stream) once the last octet of
//                  the frame (padding included) has been read;
//   HEADERS        OnHeaders(header, priority, fragment)
//   PRIORITY       OnPriority(stream, priority)       or OnStreamError
//   RST_STREAM     OnRstStream(stream, code)
//   SETTINGS       OnSettings(settings)               or OnSettingsAck()
//   PUSH_PROMISE   OnPushPromise(header, promised_stream, fragment)
//   PING           OnPing(opaque_data, ack)
//   GOAWAY         OnGoAway(last_stream, code, debug_data)
//   WINDOW_UPDATE  OnWindowUpdate(stream, increment)  or OnStreamError
//   CONTINUATION   OnContinuation(header, fragment)
//   unknown type   OnUnknownFrame(header), right after OnFrameHeader; payload
//                  skipped.
// clang-format on
//
// A frame that breaks a header-level rule gets no callback at all; one whose
// payload breaks a rule (padding, a setting value, a zero connection window
// increment, HEADERS self-dependency) gets OnFrameHeader and then nothing:
// Decode returns the error. A PRIORITY frame of the wrong length gets
// OnFrameHeader then OnStreamError at once.
//
// Between a HEADERS or PUSH_PROMISE without END_HEADERS and the CONTINUATION
// with END_HEADERS, the only callbacks are OnFrameHeader and OnContinuation for
// that stream. Reassembling the header block (and bounding its total size:
// CONTINUATION floods) is the Connection's job.
//
// Views (fragments, settings, debug data) are valid only during the callback.
// Slices may be kept. Callbacks may call FrameDecoder::Stop and
// set_max_frame_size, nothing else of the decoder. The decoder never calls back
// after Stop or a connection error.
class FrameListener {
 public:
  virtual ~FrameListener() = default;

  virtual void OnFrameHeader(const FrameHeader& /*header*/) {}

  // `header.length` counts towards flow control (it includes padding, RFC
  // 9113 6.9.1).
  virtual void OnDataStart(const FrameHeader& header) = 0;
  virtual void OnData(uint32_t stream_id, Slice piece) = 0;
  virtual void OnDataEnd(uint32_t stream_id, bool end_stream) = 0;

  // `priority` is non-null when the PRIORITY flag is set. END_STREAM and
  // END_HEADERS are in header.flags.
  virtual void OnHeaders(const FrameHeader& header,
                         const PriorityFields* priority,
                         std::string_view fragment) = 0;
  virtual void OnPriority(uint32_t /*stream_id*/,
                          const PriorityFields& /*priority*/) {}
  virtual void OnRstStream(uint32_t stream_id, Http2ErrorCode code) = 0;
  // Every entry, in order, unknown identifiers included; each known value is
  // valid.
  virtual void OnSettings(SettingsView settings) = 0;
  virtual void OnSettingsAck() = 0;
  virtual void OnPushPromise(const FrameHeader& header,
                             uint32_t promised_stream_id,
                             std::string_view fragment) = 0;
  virtual void OnPing(uint64_t opaque_data, bool ack) = 0;
  virtual void OnGoAway(uint32_t last_stream_id, Http2ErrorCode code,
                        std::string_view debug_data) = 0;
  // increment is in [1, 2^31-1].
  virtual void OnWindowUpdate(uint32_t stream_id, uint32_t increment) = 0;
  virtual void OnContinuation(const FrameHeader& header,
                              std::string_view fragment) = 0;
  virtual void OnUnknownFrame(const FrameHeader& /*header*/) {}

  // A stream error (error.is_stream_error()): the Connection resets
  // error.stream_id() with error.code(). `reason` names the rule.
  virtual void OnStreamError(const Http2Error& error,
                             FrameDecodeError reason) = 0;
};

class FrameDecoder {
 public:
  struct Options {
    // Our SETTINGS_MAX_FRAME_SIZE: longer frames are a FRAME_SIZE_ERROR. In
    // [2^14, 2^24-1].
    uint32_t max_frame_size = kDefaultMaxFrameSize;
    // Server side: the input starts with the client preface (kClientPreface).
    bool expect_client_preface = false;
    // The first frame must be SETTINGS without ACK (RFC 9113 section 3.4: both
    // sides' preface ends with one). A Connection sets it; codec tests usually
    // do not.
    bool expect_settings_first = false;
  };

  // `listener` must outlive the decoder.
  explicit FrameDecoder(FrameListener* listener)
      : FrameDecoder(listener, Options()) {}
  FrameDecoder(FrameListener* listener, const Options& options);

  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;

  // Decodes the next `input` octets of the connection's byte stream, making
  // callbacks for every frame event they complete. Returns ok, or the
  // connection error that failed the decoder (sticky: returned again without
  // reading any input). DATA pieces share `input`'s block; a static input
  // (Slice::FromStatic) gives static pieces, valid only as long as its memory.
  Http2Error Decode(const Slice& input);
  // Every slice of `input` in order; stops at the first error.
  Http2Error Decode(const SliceBuffer& input);
  // Copies `bytes` into a new block first (one allocation): for tests and
  // tools.
  Http2Error DecodeCopy(std::string_view bytes) {
    return Decode(Slice::Copy(bytes));
  }

  // Fails the decoder with `error`, e.g. from a callback that found the
  // connection broken: no callback follows and Decode returns `error`. A stream
  // or ok error passed here becomes a connection error with the same code
  // (INTERNAL_ERROR for ok). No effect once failed.
  void Stop(Http2Error error);

  // Our SETTINGS_MAX_FRAME_SIZE changed (raise it when sending SETTINGS, lower
  // it once the peer acknowledged them). Applies from the next frame header on.
  void set_max_frame_size(uint32_t size) { max_frame_size_ = size; }
  uint32_t max_frame_size() const { return max_frame_size_; }

  bool failed() const { return state_ == State::kFailed; }
  // ok(), or the connection error.
  const Http2Error& error() const { return error_; }
  FrameDecodeError error_reason() const { return error_reason_; }

  // True between frames: no partial frame header or payload is pending (nor,
  // with expect_client_preface, any of the preface). A peer closing the
  // connection when this is false closed it mid-frame.
  bool at_frame_boundary() const {
    return state_ == State::kFrameHeader && header_fill_ == 0;
  }
  // True while a header block is open (HEADERS or PUSH_PROMISE without
  // END_HEADERS seen, its final CONTINUATION not yet).
  bool in_header_block() const { return continuation_expected_; }
  // Octets of scratch currently allocated (bounded by max_frame_size).
  size_t scratch_capacity() const { return scratch_capacity_; }

 private:
  enum class State : uint8_t {
    kPreface,        // Matching kClientPreface octet by octet.
    kFrameHeader,    // Between frames, or collecting a split 9-octet header.
    kDataPadLength,  // DATA with PADDED: waiting for the pad length octet.
    kDataPayload,    // DATA: remaining_ payload octets to hand out.
    kDataPadding,    // DATA: remaining_ padding octets to skip.
    kBufferPayload,  // Control frame: accumulating its payload into scratch.
    kSkipPayload,    // Unknown type or stream error: remaining_ octets to skip.
    kFailed,
  };
  // What CheckHeader decided for the frame.
  enum class Action : uint8_t { kFail, kData, kBuffer, kSkip };

  // Frame-level checks shared by both paths; makes OnFrameHeader (and for
  // skipped frames OnUnknownFrame / OnStreamError).
  Action CheckHeader(const FrameHeader& h);
  // Fast path: header and payload at `payload` in `input`.
  bool DecodeWholeFrame(const FrameHeader& h, const Slice& input,
                        const uint8_t* payload);
  // General path: the header has been read, the payload follows in later
  // octets.
  bool StartFrame(const FrameHeader& h);
  // DATA with its pad length known: checks it and makes OnDataStart.
  bool BeginData(uint8_t pad_length);
  bool FinishData();
  // Every buffered frame type, its whole payload at `payload` (both paths).
  bool ProcessPayload(const FrameHeader& h, const uint8_t* payload);
  // Checks padding: content starts after the pad length octet (if PADDED) and
  // `fixed` more octets, and ends before the padding. False (and failed) if it
  // does not fit.
  bool Unpad(const FrameHeader& h, const uint8_t* payload, size_t fixed,
             std::string_view* content);
  void ReportStreamError(FrameDecodeError reason, uint32_t stream_id);
  // Fails the decoder; returns false for `return Fail(...)`.
  bool Fail(FrameDecodeError reason);
  bool Fail(FrameDecodeError reason, Http2Error error);
  bool stopped() const { return state_ == State::kFailed; }

  FrameListener* const listener_;
  uint32_t max_frame_size_;
  State state_;
  bool settings_expected_;
  bool continuation_expected_ = false;
  uint32_t continuation_stream_ = 0;

  // The frame being decoded by the general path.
  FrameHeader frame_;
  uint32_t remaining_ = 0;      // kDataPayload, kDataPadding, kSkipPayload.
  uint32_t pad_remaining_ = 0;  // kDataPayload: padding after the data.
  uint8_t header_fill_ = 0;     // kFrameHeader: octets in header_buf_.
  uint8_t preface_fill_ = 0;    // kPreface: octets matched.
  uint8_t header_buf_[kFrameHeaderSize];

  // kBufferPayload: frame_.length octets, scratch_fill_ of them received.
  std::unique_ptr<uint8_t[]> scratch_;
  uint32_t scratch_capacity_ = 0;
  uint32_t scratch_fill_ = 0;

  Http2Error error_;
  FrameDecodeError error_reason_ = FrameDecodeError::kOk;
};

}  // namespace transport

#endif  // TRANSPORT_FRAME_FRAME_DECODER_H_
