#include "transport/frame/frame_collector.h"

#include <sstream>
#include <utility>

namespace transport {

std::ostream& operator<<(std::ostream& os, const FrameEvent& event) {
  if (const auto* h = std::get_if<FrameHeader>(&event))
    return os << "header " << *h;
  if (const auto* f = std::get_if<Frame>(&event)) return os << *f;
  const auto& e = std::get<StreamErrorEvent>(event);
  return os << "stream error " << e.error << " ("
            << FrameDecodeErrorName(e.reason) << ")";
}

std::vector<Frame> FrameCollector::frames() const {
  std::vector<Frame> out;
  for (const FrameEvent& e : events_) {
    if (const auto* f = std::get_if<Frame>(&e)) out.push_back(*f);
  }
  return out;
}

std::string FrameCollector::ToString() const {
  std::ostringstream os;
  for (const FrameEvent& e : events_) os << e << "\n";
  if (in_data_) os << "pending " << Frame(pending_data_) << "\n";
  return os.str();
}

void FrameCollector::Clear() {
  events_.clear();
  violations_.clear();
  current_.reset();
  in_data_ = false;
  pending_data_ = DataFrame();
  data_pieces_ = 0;
}

void FrameCollector::Violation(std::string what) {
  violations_.push_back(std::move(what));
}

void FrameCollector::ExpectFrameType(uint8_t type, uint32_t stream_id) {
  if (!current_.has_value()) {
    Violation(std::string(FrameTypeName(type)) +
              " callback without OnFrameHeader");
  } else if (current_->type != type || current_->stream_id != stream_id) {
    std::ostringstream os;
    os << FrameTypeName(type) << " callback (stream " << stream_id
       << ") after header " << *current_;
    Violation(os.str());
  }
  current_.reset();
}

void FrameCollector::ExpectFrame(FrameType type, uint32_t stream_id) {
  ExpectFrameType(static_cast<uint8_t>(type), stream_id);
}

void FrameCollector::OnFrameHeader(const FrameHeader& header) {
  if (current_.has_value()) {
    std::ostringstream os;
    os << "OnFrameHeader " << header << " while " << *current_
       << " is incomplete";
    Violation(os.str());
  }
  current_ = header;
  if (record_headers_) events_.emplace_back(header);
}

void FrameCollector::OnDataStart(const FrameHeader& header) {
  if (!current_.has_value() || *current_ != header ||
      !header.is(FrameType::kData)) {
    Violation("OnDataStart without its OnFrameHeader");
  }
  if (in_data_) Violation("OnDataStart inside a DATA frame");
  in_data_ = true;
  data_header_ = header;
  pending_data_ = DataFrame();
  pending_data_.stream_id = header.stream_id;
  pending_data_.end_stream = header.has_flags(kFlagEndStream);
}

void FrameCollector::OnData(uint32_t stream_id, Slice piece) {
  ++data_pieces_;
  if (!in_data_ || stream_id != data_header_.stream_id) {
    Violation("OnData outside its DATA frame");
  }
  if (piece.empty()) Violation("empty OnData piece");
  pending_data_.payload.Append(std::move(piece));
}

void FrameCollector::OnDataEnd(uint32_t stream_id, bool end_stream) {
  if (!in_data_ || stream_id != data_header_.stream_id) {
    Violation("OnDataEnd outside its DATA frame");
  }
  if (end_stream != data_header_.has_flags(kFlagEndStream)) {
    Violation("OnDataEnd end_stream differs from the header's flag");
  }
  in_data_ = false;
  ExpectFrame(FrameType::kData, stream_id);
  if (data_header_.has_flags(kFlagPadded)) {
    const size_t pad = data_header_.length - 1 - pending_data_.payload.size();
    if (pad > 255) Violation("DATA payload longer than the frame");
    pending_data_.pad_length = static_cast<uint8_t>(pad);
  } else if (pending_data_.payload.size() != data_header_.length) {
    Violation("DATA payload length differs from the frame length");
  }
  Add(std::move(pending_data_));
  pending_data_ = DataFrame();
}

void FrameCollector::OnHeaders(const FrameHeader& header,
                               const PriorityFields* priority,
                               std::string_view fragment) {
  ExpectFrame(FrameType::kHeaders, header.stream_id);
  if ((priority != nullptr) != header.has_flags(kFlagPriority)) {
    Violation("HEADERS priority presence differs from the PRIORITY flag");
  }
  HeadersFrame f;
  f.stream_id = header.stream_id;
  f.end_stream = header.has_flags(kFlagEndStream);
  f.end_headers = header.has_flags(kFlagEndHeaders);
  if (priority != nullptr) f.priority = *priority;
  f.fragment = std::string(fragment);
  if (header.has_flags(kFlagPadded)) {
    f.pad_length = static_cast<uint8_t>(
        header.length - 1 - (priority != nullptr ? kPriorityFieldsSize : 0) -
        fragment.size());
  }
  Add(std::move(f));
}

void FrameCollector::OnPriority(uint32_t stream_id,
                                const PriorityFields& priority) {
  ExpectFrame(FrameType::kPriority, stream_id);
  Add(PriorityFrame{stream_id, priority});
}

void FrameCollector::OnRstStream(uint32_t stream_id, Http2ErrorCode code) {
  ExpectFrame(FrameType::kRstStream, stream_id);
  Add(RstStreamFrame{stream_id, code});
}

void FrameCollector::OnSettings(SettingsView settings) {
  ExpectFrame(FrameType::kSettings, 0);
  Add(SettingsFrame{false, settings.ToVector()});
}

void FrameCollector::OnSettingsAck() {
  ExpectFrame(FrameType::kSettings, 0);
  Add(SettingsFrame{true, {}});
}

void FrameCollector::OnPushPromise(const FrameHeader& header,
                                   uint32_t promised_stream_id,
                                   std::string_view fragment) {
  ExpectFrame(FrameType::kPushPromise, header.stream_id);
  PushPromiseFrame f;
  f.stream_id = header.stream_id;
  f.promised_stream_id = promised_stream_id;
  f.end_headers = header.has_flags(kFlagEndHeaders);
  f.fragment = std::string(fragment);
  if (header.has_flags(kFlagPadded)) {
    f.pad_length =
        static_cast<uint8_t>(header.length - 1 - 4 - fragment.size());
  }
  Add(std::move(f));
}

void FrameCollector::OnPing(uint64_t opaque_data, bool ack) {
  ExpectFrame(FrameType::kPing, 0);
  Add(PingFrame{ack, opaque_data});
}

void FrameCollector::OnGoAway(uint32_t last_stream_id, Http2ErrorCode code,
                              std::string_view debug_data) {
  ExpectFrame(FrameType::kGoAway, 0);
  Add(GoAwayFrame{last_stream_id, code, std::string(debug_data)});
}

void FrameCollector::OnWindowUpdate(uint32_t stream_id, uint32_t increment) {
  ExpectFrame(FrameType::kWindowUpdate, stream_id);
  if (increment == 0 || increment > kMaxWindowSize)
    Violation("WINDOW_UPDATE increment out of range");
  Add(WindowUpdateFrame{stream_id, increment});
}

void FrameCollector::OnContinuation(const FrameHeader& header,
                                    std::string_view fragment) {
  ExpectFrame(FrameType::kContinuation, header.stream_id);
  Add(ContinuationFrame{header.stream_id, header.has_flags(kFlagEndHeaders),
                        std::string(fragment)});
}

void FrameCollector::OnUnknownFrame(const FrameHeader& header) {
  if (header.type <= kLastKnownFrameType)
    Violation("OnUnknownFrame for a known type");
  ExpectFrameType(header.type, header.stream_id);
  Add(UnknownFrame{header.type, header.flags, header.stream_id, header.length});
}

void FrameCollector::OnStreamError(const Http2Error& error,
                                   FrameDecodeError reason) {
  if (!error.is_stream_error() || !IsFrameStreamError(reason)) {
    Violation("OnStreamError with a non-stream error");
  }
  if (!current_.has_value() || current_->stream_id != error.stream_id()) {
    Violation("OnStreamError not for the current frame's stream");
  }
  current_.reset();
  events_.emplace_back(StreamErrorEvent{error, reason});
}

}  // namespace transport
