#include "rpc/wire/message_framer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace rpc {

using transport::Slice;
using transport::SliceBuffer;

namespace {

uint32_t ReadLength(const uint8_t* prefix) {
  return (uint32_t{prefix[1]} << 24) | (uint32_t{prefix[2]} << 16) |
         (uint32_t{prefix[3]} << 8) | uint32_t{prefix[4]};
}

}  // namespace

absl::Status WriteMessage(SliceBuffer payload, bool compressed,
                          SliceBuffer* out) {
  if (payload.size() > kMaxMessageLength) {
    return absl::ResourceExhaustedError(
        absl::StrCat("message of ", payload.size(),
                     " octets exceeds the 4 GiB gRPC frame limit"));
  }
  const size_t n = payload.size();
  if (n <= kCopyPayloadMax) {
    uint8_t* const p = out->AppendUninitializedExact(kMessagePrefixSize + n);
    EncodeMessagePrefix(compressed, static_cast<uint32_t>(n), p);
    payload.CopyTo(p + kMessagePrefixSize, n);
    return absl::OkStatus();
  }
  EncodeMessagePrefix(compressed, static_cast<uint32_t>(n),
                      out->AppendUninitialized(kMessagePrefixSize));
  out->Append(std::move(payload));
  return absl::OkStatus();
}

absl::Status WriteMessage(std::string_view payload, bool compressed,
                          SliceBuffer* out) {
  const size_t n = payload.size();
  if (n > kMaxMessageLength) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "message of ", n, " octets exceeds the 4 GiB gRPC frame limit"));
  }
  if (n <= kCopyPayloadMax) {
    uint8_t* const p = out->AppendUninitializedExact(kMessagePrefixSize + n);
    EncodeMessagePrefix(compressed, static_cast<uint32_t>(n), p);
    if (n > 0) std::memcpy(p + kMessagePrefixSize, payload.data(), n);
    return absl::OkStatus();
  }
  EncodeMessagePrefix(compressed, static_cast<uint32_t>(n),
                      out->AppendUninitialized(kMessagePrefixSize));
  out->Append(payload);
  return absl::OkStatus();
}

void MessageDeframer::OnPrefix(const uint8_t* prefix) {
  if ((prefix[0] & ~kMessageFlagCompressed) != 0) {
    status_ = absl::InternalError(absl::StrCat(
        "message prefix has unknown flags 0x", absl::Hex(prefix[0])));
    return;
  }
  const uint32_t length = ReadLength(prefix);
  if (length > max_message_size_) {
    status_ = absl::ResourceExhaustedError(
        absl::StrCat("received message larger than max (", length, " vs. ",
                     max_message_size_, ")"));
    return;
  }
  payload_left_ = length;
  if (length == 0) ++complete_;
}

void MessageDeframer::Scan(const uint8_t* p, size_t n) {
  while (n > 0) {
    if (payload_left_ > 0) {
      const size_t k = std::min(n, payload_left_);
      payload_left_ -= k;
      p += k;
      n -= k;
      if (payload_left_ == 0) ++complete_;
      continue;
    }
    const uint8_t* prefix;
    if (prefix_have_ == 0 && n >= kMessagePrefixSize) {
      // The whole prefix is in this piece (the common case).
      prefix = p;
      p += kMessagePrefixSize;
      n -= kMessagePrefixSize;
    } else {
      const size_t k = std::min(n, kMessagePrefixSize - prefix_have_);
      std::memcpy(prefix_ + prefix_have_, p, k);
      prefix_have_ += k;
      p += k;
      n -= k;
      if (prefix_have_ < kMessagePrefixSize) return;
      prefix_have_ = 0;
      prefix = prefix_;
    }
    OnPrefix(prefix);
    if (!status_.ok()) return;
  }
}

void MessageDeframer::DropBuffered() {
  buffer_.Clear();
  complete_ = 0;
}

absl::Status MessageDeframer::Push(Slice data) {
  if (!status_.ok() || data.empty()) return status_;
  Scan(data.data(), data.size());
  if (!status_.ok()) {
    DropBuffered();
    return status_;
  }
  buffer_.Append(std::move(data));
  return status_;
}

absl::Status MessageDeframer::Push(SliceBuffer data) {
  if (!status_.ok()) return status_;
  for (const Slice& s : data) {
    Scan(s.data(), s.size());
    if (!status_.ok()) {
      DropBuffered();
      return status_;
    }
  }
  buffer_.Append(std::move(data));
  return status_;
}

bool MessageDeframer::Next(ReceivedMessage* out) {
  if (complete_ == 0 || !status_.ok()) return false;
  uint8_t copy[kMessagePrefixSize];
  const uint8_t* prefix = buffer_.ContiguousPrefix(kMessagePrefixSize);
  if (prefix == nullptr) {
    buffer_.CopyTo(copy, kMessagePrefixSize);
    prefix = copy;
  }
  out->compressed = (prefix[0] & kMessageFlagCompressed) != 0;
  const uint32_t length = ReadLength(prefix);
  buffer_.TrimFront(kMessagePrefixSize);
  out->payload.Clear();
  buffer_.MoveFrontTo(length, &out->payload);
  --complete_;
  return true;
}

absl::Status MessageDeframer::Finish() {
  if (status_.ok() && (payload_left_ > 0 || prefix_have_ > 0)) {
    status_ = absl::InternalError(absl::StrCat(
        "truncated message: stream ended inside a message (",
        prefix_have_ > 0 ? "in its prefix" : "in its payload", ")"));
    DropBuffered();
  }
  return status_;
}

}  // namespace rpc
