#include "transport/frame/frame_decoder.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "transport/frame/frame_wire.h"

namespace transport {

const char* FrameDecodeErrorName(FrameDecodeError error) {
  switch (error) {
    case FrameDecodeError::kOk:
      return "ok";
    case FrameDecodeError::kInvalidPreface:
      return "invalid_preface";
    case FrameDecodeError::kSettingsExpected:
      return "settings_expected";
    case FrameDecodeError::kFrameTooLarge:
      return "frame_too_large";
    case FrameDecodeError::kStreamIdRequired:
      return "stream_id_required";
    case FrameDecodeError::kStreamIdForbidden:
      return "stream_id_forbidden";
    case FrameDecodeError::kFrameTooShort:
      return "frame_too_short";
    case FrameDecodeError::kPaddingTooLong:
      return "padding_too_long";
    case FrameDecodeError::kHeadersSelfDependency:
      return "headers_self_dependency";
    case FrameDecodeError::kBadRstStreamLength:
      return "bad_rst_stream_length";
    case FrameDecodeError::kSettingsAckWithPayload:
      return "settings_ack_with_payload";
    case FrameDecodeError::kBadSettingsLength:
      return "bad_settings_length";
    case FrameDecodeError::kInvalidSettingValue:
      return "invalid_setting_value";
    case FrameDecodeError::kBadPingLength:
      return "bad_ping_length";
    case FrameDecodeError::kBadWindowUpdateLength:
      return "bad_window_update_length";
    case FrameDecodeError::kZeroConnectionWindowIncrement:
      return "zero_connection_window_increment";
    case FrameDecodeError::kExpectedContinuation:
      return "expected_continuation";
    case FrameDecodeError::kUnexpectedContinuation:
      return "unexpected_continuation";
    case FrameDecodeError::kStoppedByListener:
      return "stopped_by_listener";
    case FrameDecodeError::kBadPriorityLength:
      return "bad_priority_length";
    case FrameDecodeError::kPrioritySelfDependency:
      return "priority_self_dependency";
    case FrameDecodeError::kZeroStreamWindowIncrement:
      return "zero_stream_window_increment";
  }
  return "unknown";
}

namespace {

Http2ErrorCode FixedCode(FrameDecodeError error) {
  switch (error) {
    case FrameDecodeError::kFrameTooLarge:
    case FrameDecodeError::kFrameTooShort:
    case FrameDecodeError::kBadRstStreamLength:
    case FrameDecodeError::kSettingsAckWithPayload:
    case FrameDecodeError::kBadSettingsLength:
    case FrameDecodeError::kBadPingLength:
    case FrameDecodeError::kBadWindowUpdateLength:
    case FrameDecodeError::kBadPriorityLength:
      return Http2ErrorCode::kFrameSizeError;
    case FrameDecodeError::kOk:
      return Http2ErrorCode::kNoError;
    case FrameDecodeError::kStoppedByListener:
      return Http2ErrorCode::kInternalError;
    default:
      return Http2ErrorCode::kProtocolError;
  }
}

// The client preface as three native-order words (compared without byte swaps).
inline uint64_t Word(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline bool IsClientPrefaceFast(const uint8_t* p) {
  const uint8_t* want = reinterpret_cast<const uint8_t*>(kClientPreface.data());
  return ((Word(p) ^ Word(want)) | (Word(p + 8) ^ Word(want + 8)) |
          (Word(p + 16) ^ Word(want + 16))) == 0;
}

inline PriorityFields ParsePriority(const uint8_t* p) {
  const uint32_t dep = wire::LoadBE32(p);
  PriorityFields f;
  f.stream_dependency = dep & kStreamIdMask;
  f.exclusive = (dep >> 31) != 0;
  f.weight = p[4];
  return f;
}

}  // namespace

Http2Error MakeFrameDecodeError(FrameDecodeError error, uint32_t stream_id) {
  if (error == FrameDecodeError::kOk) return Http2Error::Ok();
  if (IsFrameStreamError(error)) {
    return Http2Error::Stream(stream_id, FixedCode(error),
                              FrameDecodeErrorName(error));
  }
  return Http2Error::Connection(FixedCode(error), FrameDecodeErrorName(error));
}

FrameDecoder::FrameDecoder(FrameListener* listener, const Options& options)
    : listener_(listener),
      max_frame_size_(options.max_frame_size),
      state_(options.expect_client_preface ? State::kPreface
                                           : State::kFrameHeader),
      settings_expected_(options.expect_settings_first) {}

bool FrameDecoder::Fail(FrameDecodeError reason) {
  return Fail(reason, MakeFrameDecodeError(reason));
}

bool FrameDecoder::Fail(FrameDecodeError reason, Http2Error error) {
  state_ = State::kFailed;
  error_reason_ = reason;
  error_ = std::move(error);
  return false;
}

void FrameDecoder::Stop(Http2Error error) {
  if (stopped()) return;
  if (!error.is_connection_error()) {
    error = Http2Error::Connection(
        error.ok() ? Http2ErrorCode::kInternalError : error.code(),
        error.message());
  }
  Fail(FrameDecodeError::kStoppedByListener, std::move(error));
}

void FrameDecoder::ReportStreamError(FrameDecodeError reason,
                                     uint32_t stream_id) {
  listener_->OnStreamError(MakeFrameDecodeError(reason, stream_id), reason);
}

FrameDecoder::Action FrameDecoder::CheckHeader(const FrameHeader& h) {
  if (h.length > max_frame_size_) {
    Fail(FrameDecodeError::kFrameTooLarge);
    return Action::kFail;
  }
  if (settings_expected_) {
    if (!h.is(FrameType::kSettings) || h.has_flags(kFlagAck)) {
      Fail(FrameDecodeError::kSettingsExpected);
      return Action::kFail;
    }
    settings_expected_ = false;
  }
  if (continuation_expected_) {
    if (!h.is(FrameType::kContinuation) ||
        h.stream_id != continuation_stream_) {
      Fail(FrameDecodeError::kExpectedContinuation);
      return Action::kFail;
    }
  } else if (h.is(FrameType::kContinuation)) {
    Fail(FrameDecodeError::kUnexpectedContinuation);
    return Action::kFail;
  }

  FrameDecodeError error = FrameDecodeError::kOk;
  FrameDecodeError stream_error = FrameDecodeError::kOk;
  Action action = Action::kBuffer;
  const size_t pad_octets = h.has_flags(kFlagPadded) ? 1 : 0;
  switch (static_cast<FrameType>(h.type)) {
    case FrameType::kData:
      if (h.stream_id == 0) {
        error = FrameDecodeError::kStreamIdRequired;
      } else if (h.length < pad_octets) {
        error = FrameDecodeError::kFrameTooShort;
      }
      action = Action::kData;
      break;
    case FrameType::kHeaders: {
      const size_t fixed =
          pad_octets + (h.has_flags(kFlagPriority) ? kPriorityFieldsSize : 0);
      if (h.stream_id == 0) {
        error = FrameDecodeError::kStreamIdRequired;
      } else if (h.length < fixed) {
        error = FrameDecodeError::kFrameTooShort;
      }
      break;
    }
    case FrameType::kPriority:
      if (h.stream_id == 0) {
        error = FrameDecodeError::kStreamIdRequired;
      } else if (h.length != kPriorityFieldsSize) {
        stream_error = FrameDecodeError::kBadPriorityLength;
      }
      break;
    case FrameType::kRstStream:
      if (h.stream_id == 0) {
        error = FrameDecodeError::kStreamIdRequired;
      } else if (h.length != 4) {
        error = FrameDecodeError::kBadRstStreamLength;
      }
      break;
    case FrameType::kSettings:
      if (h.stream_id != 0) {
        error = FrameDecodeError::kStreamIdForbidden;
      } else if (h.has_flags(kFlagAck) && h.length != 0) {
        error = FrameDecodeError::kSettingsAckWithPayload;
      } else if (h.length % SettingsView::kEntrySize != 0) {
        error = FrameDecodeError::kBadSettingsLength;
      }
      break;
    case FrameType::kPushPromise:
      if (h.stream_id == 0) {
        error = FrameDecodeError::kStreamIdRequired;
      } else if (h.length < pad_octets + 4) {
        error = FrameDecodeError::kFrameTooShort;
      }
      break;
    case FrameType::kPing:
      if (h.stream_id != 0) {
        error = FrameDecodeError::kStreamIdForbidden;
      } else if (h.length != 8) {
        error = FrameDecodeError::kBadPingLength;
      }
      break;
    case FrameType::kGoAway:
      if (h.stream_id != 0) {
        error = FrameDecodeError::kStreamIdForbidden;
      } else if (h.length < 8) {
        error = FrameDecodeError::kFrameTooShort;
      }
      break;
    case FrameType::kWindowUpdate:
      if (h.length != 4) error = FrameDecodeError::kBadWindowUpdateLength;
      break;
    case FrameType::kContinuation:
      // The stream matched the open header block's, which is never stream 0.
      break;
    default:
      action = Action::kSkip;
      break;
  }
  if (error != FrameDecodeError::kOk) {
    Fail(error);
    return Action::kFail;
  }

  // The header block sequence (RFC 9113 section 6.10), decided at the header so
  // both paths agree: it opens with HEADERS / PUSH_PROMISE and closes with
  // END_HEADERS.
  if (h.is(FrameType::kHeaders) || h.is(FrameType::kPushPromise) ||
      h.is(FrameType::kContinuation)) {
    continuation_expected_ = !h.has_flags(kFlagEndHeaders);
    continuation_stream_ = h.stream_id;
  }

  listener_->OnFrameHeader(h);
  if (stopped()) return Action::kFail;
  if (action == Action::kSkip) {
    listener_->OnUnknownFrame(h);
  } else if (stream_error != FrameDecodeError::kOk) {
    ReportStreamError(stream_error, h.stream_id);
    action = Action::kSkip;
  }
  return stopped() ? Action::kFail : action;
}

bool FrameDecoder::Unpad(const FrameHeader& h, const uint8_t* payload,
                         size_t fixed, std::string_view* content) {
  // CheckHeader made sure length >= pad_octets + fixed.
  size_t pad_octets = 0;
  size_t pad = 0;
  if (h.has_flags(kFlagPadded)) {
    pad_octets = 1;
    pad = payload[0];
  }
  const size_t available = h.length - pad_octets - fixed;
  if (pad > available) return Fail(FrameDecodeError::kPaddingTooLong);
  *content = std::string_view(
      reinterpret_cast<const char*>(payload) + pad_octets + fixed,
      available - pad);
  return true;
}

bool FrameDecoder::ProcessPayload(const FrameHeader& h,
                                  const uint8_t* payload) {
  switch (static_cast<FrameType>(h.type)) {
    case FrameType::kHeaders: {
      const bool has_priority = h.has_flags(kFlagPriority);
      std::string_view fragment;
      if (!Unpad(h, payload, has_priority ? kPriorityFieldsSize : 0, &fragment))
        return false;
      PriorityFields priority;
      if (has_priority) {
        priority = ParsePriority(payload + (h.has_flags(kFlagPadded) ? 1 : 0));
        if (priority.stream_dependency == h.stream_id) {
          return Fail(FrameDecodeError::kHeadersSelfDependency);
        }
      }
      listener_->OnHeaders(h, has_priority ? &priority : nullptr, fragment);
      break;
    }
    case FrameType::kPriority: {
      const PriorityFields priority = ParsePriority(payload);
      if (priority.stream_dependency == h.stream_id) {
        ReportStreamError(FrameDecodeError::kPrioritySelfDependency,
                          h.stream_id);
      } else {
        listener_->OnPriority(h.stream_id, priority);
      }
      break;
    }
    case FrameType::kRstStream:
      listener_->OnRstStream(
          h.stream_id, static_cast<Http2ErrorCode>(wire::LoadBE32(payload)));
      break;
    case FrameType::kSettings: {
      if (h.has_flags(kFlagAck)) {
        listener_->OnSettingsAck();
        break;
      }
      const SettingsView settings(payload, h.length / SettingsView::kEntrySize);
      for (const Setting s : settings) {
        if (!IsValidSetting(s.id, s.value)) {
          Http2Error e = ValidateSetting(s.id, s.value);
          return Fail(FrameDecodeError::kInvalidSettingValue,
                      Http2Error::Connection(
                          e.code(), "invalid_setting_value: " + e.message()));
        }
      }
      listener_->OnSettings(settings);
      break;
    }
    case FrameType::kPushPromise: {
      std::string_view fragment;
      if (!Unpad(h, payload, 4, &fragment)) return false;
      const uint32_t promised =
          wire::LoadBE32(payload + (h.has_flags(kFlagPadded) ? 1 : 0)) &
          kStreamIdMask;
      listener_->OnPushPromise(h, promised, fragment);
      break;
    }
    case FrameType::kPing:
      listener_->OnPing(wire::LoadBE64(payload), h.has_flags(kFlagAck));
      break;
    case FrameType::kGoAway:
      listener_->OnGoAway(
          wire::LoadBE32(payload) & kStreamIdMask,
          static_cast<Http2ErrorCode>(wire::LoadBE32(payload + 4)),
          std::string_view(reinterpret_cast<const char*>(payload) + 8,
                           h.length - 8));
      break;
    case FrameType::kWindowUpdate: {
      const uint32_t increment = wire::LoadBE32(payload) & kStreamIdMask;
      if (increment != 0) {
        listener_->OnWindowUpdate(h.stream_id, increment);
      } else if (h.stream_id == 0) {
        return Fail(FrameDecodeError::kZeroConnectionWindowIncrement);
      } else {
        ReportStreamError(FrameDecodeError::kZeroStreamWindowIncrement,
                          h.stream_id);
      }
      break;
    }
    case FrameType::kContinuation:
      listener_->OnContinuation(
          h,
          std::string_view(reinterpret_cast<const char*>(payload), h.length));
      break;
    case FrameType::kData:
      break;  // Never buffered.
  }
  return !stopped();
}

bool FrameDecoder::DecodeWholeFrame(const FrameHeader& h, const Slice& input,
                                    const uint8_t* payload) {
  switch (CheckHeader(h)) {
    case Action::kFail:
      return false;
    case Action::kSkip:
      return true;
    case Action::kBuffer:
      return ProcessPayload(h, payload);
    case Action::kData:
      break;
  }
  std::string_view data;
  if (!Unpad(h, payload, 0, &data)) return false;
  listener_->OnDataStart(h);
  if (stopped()) return false;
  if (!data.empty()) {
    const size_t offset =
        reinterpret_cast<const uint8_t*>(data.data()) - input.data();
    listener_->OnData(h.stream_id, input.Sub(offset, data.size()));
    if (stopped()) return false;
  }
  listener_->OnDataEnd(h.stream_id, h.has_flags(kFlagEndStream));
  return !stopped();
}

bool FrameDecoder::StartFrame(const FrameHeader& h) {
  frame_ = h;
  switch (CheckHeader(h)) {
    case Action::kFail:
      return false;
    case Action::kData:
      if (h.has_flags(kFlagPadded)) {
        state_ = State::kDataPadLength;
        return true;
      }
      return BeginData(0);
    case Action::kBuffer:
      // A non-null pointer even for an empty payload.
      if (h.length == 0) return ProcessPayload(h, header_buf_);
      if (scratch_capacity_ < h.length) {
        // Grow geometrically, never beyond the largest frame allowed.
        const uint32_t capacity =
            std::min(std::max(h.length, scratch_capacity_ * 2),
                     std::max(h.length, max_frame_size_));
        scratch_.reset(new uint8_t[capacity]);
        scratch_capacity_ = capacity;
      }
      scratch_fill_ = 0;
      state_ = State::kBufferPayload;
      return true;
    case Action::kSkip:
      if (h.length != 0) {
        remaining_ = h.length;
        state_ = State::kSkipPayload;
      }
      return true;
  }
  return true;
}

bool FrameDecoder::BeginData(uint8_t pad_length) {
  const size_t pad_octets = frame_.has_flags(kFlagPadded) ? 1 : 0;
  if (pad_length > frame_.length - pad_octets)
    return Fail(FrameDecodeError::kPaddingTooLong);
  remaining_ = frame_.length - pad_octets - pad_length;
  pad_remaining_ = pad_length;
  state_ = State::kDataPayload;
  listener_->OnDataStart(frame_);
  if (stopped()) return false;
  if (remaining_ == 0) {
    if (pad_remaining_ == 0) return FinishData();
    remaining_ = pad_remaining_;
    state_ = State::kDataPadding;
  }
  return true;
}

bool FrameDecoder::FinishData() {
  state_ = State::kFrameHeader;
  listener_->OnDataEnd(frame_.stream_id, frame_.has_flags(kFlagEndStream));
  return !stopped();
}

Http2Error FrameDecoder::Decode(const Slice& input) {
  const uint8_t* p = input.data();
  const uint8_t* const end = p + input.size();
  while (p != end) {
    const size_t available = static_cast<size_t>(end - p);
    switch (state_) {
      case State::kFrameHeader: {
        if (header_fill_ == 0 && available >= kFrameHeaderSize) {
          const FrameHeader h = ParseFrameHeaderFast(p);
          p += kFrameHeaderSize;
          if (available - kFrameHeaderSize >= h.length) {
            const uint8_t* payload = p;
            p += h.length;
            if (!DecodeWholeFrame(h, input, payload)) return error_;
          } else if (!StartFrame(h)) {
            return error_;
          }
          break;
        }
        const size_t n =
            std::min<size_t>(kFrameHeaderSize - header_fill_, available);
        std::memcpy(header_buf_ + header_fill_, p, n);
        header_fill_ += n;
        p += n;
        if (header_fill_ == kFrameHeaderSize) {
          header_fill_ = 0;
          if (!StartFrame(ParseFrameHeader(header_buf_))) return error_;
        }
        break;
      }
      case State::kPreface: {
        if (preface_fill_ == 0 && available >= kClientPreface.size()) {
          if (!IsClientPrefaceFast(p)) {
            Fail(FrameDecodeError::kInvalidPreface);
            return error_;
          }
          p += kClientPreface.size();
          state_ = State::kFrameHeader;
          break;
        }
        while (p != end && preface_fill_ < kClientPreface.size()) {
          if (*p != static_cast<uint8_t>(kClientPreface[preface_fill_])) {
            Fail(FrameDecodeError::kInvalidPreface);
            return error_;
          }
          ++p;
          ++preface_fill_;
        }
        if (preface_fill_ == kClientPreface.size())
          state_ = State::kFrameHeader;
        break;
      }
      case State::kDataPadLength:
        if (!BeginData(*p++)) return error_;
        break;
      case State::kDataPayload: {
        const size_t n = std::min<size_t>(remaining_, available);
        listener_->OnData(frame_.stream_id, input.Sub(p - input.data(), n));
        if (stopped()) return error_;
        p += n;
        remaining_ -= n;
        if (remaining_ == 0) {
          if (pad_remaining_ != 0) {
            remaining_ = pad_remaining_;
            state_ = State::kDataPadding;
          } else if (!FinishData()) {
            return error_;
          }
        }
        break;
      }
      case State::kDataPadding: {
        const size_t n = std::min<size_t>(remaining_, available);
        p += n;
        remaining_ -= n;
        if (remaining_ == 0 && !FinishData()) return error_;
        break;
      }
      case State::kBufferPayload: {
        const size_t n =
            std::min<size_t>(frame_.length - scratch_fill_, available);
        std::memcpy(scratch_.get() + scratch_fill_, p, n);
        scratch_fill_ += n;
        p += n;
        if (scratch_fill_ == frame_.length) {
          state_ = State::kFrameHeader;
          if (!ProcessPayload(frame_, scratch_.get())) return error_;
        }
        break;
      }
      case State::kSkipPayload: {
        const size_t n = std::min<size_t>(remaining_, available);
        p += n;
        remaining_ -= n;
        if (remaining_ == 0) state_ = State::kFrameHeader;
        break;
      }
      case State::kFailed:
        return error_;
    }
  }
  return state_ == State::kFailed ? error_ : Http2Error::Ok();
}

Http2Error FrameDecoder::Decode(const SliceBuffer& input) {
  for (const Slice& s : input) {
    Http2Error e = Decode(s);
    if (!e.ok()) return e;
  }
  return state_ == State::kFailed ? error_ : Http2Error::Ok();
}

}  // namespace transport
