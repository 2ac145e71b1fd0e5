// gRPC length-prefixed messages (gRPC PROTOCOL-HTTP2.md, "Requests":
// Length-Prefixed-Message -> Compressed-Flag Message-Length Message).
//
// Each message on a stream's DATA is a 5-octet prefix, a flag octet (0, or 1
// when the message is compressed with the grpc-encoding the headers named)
// and the payload length as a 4-octet big-endian integer, followed by the
// payload. DATA frame boundaries have nothing to do with message boundaries:
// a prefix may be split across frames and one frame may carry many messages.
//
// Sending: WriteMessage appends prefix + payload to the output chain, moving
// the payload's slices (no copy); a payload of up to kCopyPayloadMax octets
// is copied behind its prefix into one exactly sized block instead (one small
// allocation and one slice, where the prefix alone took a kDefaultBlockSize
// block and the message two slices). To serialize straight into the output
// chain, write the prefix with EncodeMessagePrefix into
// out->AppendUninitialized(5) and serialize after it (zero_copy_stream.h).
//
// Receiving: MessageDeframer, fed the DATA payloads of one stream as they
// arrive, hands out complete messages as SliceBuffers whose slices point into
// the received blocks (no copy of payload octets). It is sans-IO and
// single-threaded, like the Slices it holds.
//
//   rpc::MessageDeframer deframer(max_receive_message_size);
//   // on DATA:
//   if (absl::Status s = deframer.Push(std::move(data)); !s.ok()) fail(s);
//   rpc::ReceivedMessage msg;
//   while (deframer.Next(&msg)) deliver(std::move(msg.payload),
//   msg.compressed);
//   // on END_STREAM:
//   if (absl::Status s = deframer.Finish(); !s.ok()) fail(s);
//
// Errors (absl::Status codes; they are gRPC codes, for the call's status):
//   RESOURCE_EXHAUSTED  a prefix announces more than max_message_size octets;
//                       detected from the prefix as soon as it arrives, before
//                       the payload is buffered.
//   INTERNAL            a flag octet other than 0 or 1 ("unknown flags"), or
//                       end of stream inside a message ("truncated message").
// Every error is final: the deframer keeps returning it and delivers nothing
// more. Whether the compressed flag is allowed (it requires a grpc-encoding
// header) is for the caller to check, from ReceivedMessage::compressed.
//
// Cost: with one message per DATA piece, Push and Next allocate nothing
// (Slices move between inline slice vectors); each octet is looked at once
// when its prefix is scanned, payload octets never.

#ifndef RPC_WIRE_MESSAGE_FRAMER_H_
#define RPC_WIRE_MESSAGE_FRAMER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "transport/slice/slice.h"

namespace rpc {

inline constexpr size_t kMessagePrefixSize = 5;
inline constexpr uint8_t kMessageFlagCompressed = 0x01;
// gRPC's default max receive message size (4 MiB).
inline constexpr size_t kDefaultMaxReceiveMessageSize = 4 * 1024 * 1024;
// The largest payload a prefix can announce.
inline constexpr size_t kMaxMessageLength = 0xffffffffu;
// WriteMessage copies payloads of up to this many octets, this size included
// (see above).
inline constexpr size_t kCopyPayloadMax = 512;

// Writes the 5-octet prefix of a message of `length` octets to out[0..4].
inline void EncodeMessagePrefix(bool compressed, uint32_t length,
                                uint8_t* out) {
  out[0] = compressed ? kMessageFlagCompressed : 0;
  out[1] = static_cast<uint8_t>(length >> 24);
  out[2] = static_cast<uint8_t>(length >> 16);
  out[3] = static_cast<uint8_t>(length >> 8);
  out[4] = static_cast<uint8_t>(length);
}

// Appends the prefix and then `payload`'s slices (moved, not copied) to *out.
// RESOURCE_EXHAUSTED (and nothing appended) when the payload exceeds
// kMaxMessageLength; callers enforce their max send message size first.
absl::Status WriteMessage(transport::SliceBuffer payload, bool compressed,
                          transport::SliceBuffer* out);
// The same for a payload in contiguous memory (a compressed message), always
// copied: up to kCopyPayloadMax octets behind its prefix into one exactly
// sized block, a larger one into the output's blocks after the prefix.
absl::Status WriteMessage(std::string_view payload, bool compressed,
                          transport::SliceBuffer* out);

struct ReceivedMessage {
  transport::SliceBuffer payload;
  bool compressed = false;
};

class MessageDeframer {
 public:
  explicit MessageDeframer(
      size_t max_message_size = kDefaultMaxReceiveMessageSize)
      : max_message_size_(max_message_size) {}

  MessageDeframer(const MessageDeframer&) = delete;
  MessageDeframer& operator=(const MessageDeframer&) = delete;

  // Takes the next octets of the stream (empty input is fine). Returns the
  // deframer's status: OK, or the (final) error the input revealed, see the
  // file comment. Input after an error is dropped.
  absl::Status Push(transport::Slice data);
  absl::Status Push(transport::SliceBuffer data);

  // Moves the next complete message into *out (replacing its contents) and
  // returns true; false when no complete message is buffered, or after an
  // error.
  bool Next(ReceivedMessage* out);
  // True when Next would return true.
  bool HasMessage() const { return complete_ > 0 && status_.ok(); }

  // The stream ended (END_STREAM). OK when no partial message remains
  // (complete ones may still be taken with Next); else INTERNAL "truncated
  // message", which becomes the deframer's final status.
  absl::Status Finish();

  // OK, or the first error.
  const absl::Status& status() const { return status_; }
  // Octets received and not yet handed out (complete and partial messages).
  size_t buffered_bytes() const { return buffer_.size(); }
  // Complete messages waiting for Next.
  size_t complete_messages() const { return complete_; }
  size_t max_message_size() const { return max_message_size_; }

 private:
  // Scans `n` new octets for prefixes (validating each one as it completes)
  // and counts the messages they complete.
  void Scan(const uint8_t* p, size_t n);
  // Validates a complete prefix; on success the scanner moves to its payload.
  void OnPrefix(const uint8_t* prefix);
  // After an error: releases everything buffered.
  void DropBuffered();

  const size_t max_message_size_;
  absl::Status status_;
  // Octets not yet handed out, starting at a message boundary.
  transport::SliceBuffer buffer_;
  // Complete messages at the front of buffer_.
  size_t complete_ = 0;
  // Scanner: payload octets of the current message still to arrive; when 0,
  // the next octets are a prefix, of which prefix_have_ are in prefix_.
  size_t payload_left_ = 0;
  size_t prefix_have_ = 0;
  uint8_t prefix_[kMessagePrefixSize] = {};
};

}  // namespace rpc

#endif  // RPC_WIRE_MESSAGE_FRAMER_H_
