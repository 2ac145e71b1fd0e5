#include "transport/frame/frame_writer.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "transport/frame/frame_wire.h"

namespace transport {

namespace {

// Appends header + `payload_size` octets contiguously; returns where the
// payload goes.
inline uint8_t* BeginFrame(FrameType type, uint8_t flags, uint32_t stream_id,
                           size_t payload_size, SliceBuffer* out) {
  uint8_t* p = out->AppendUninitialized(kFrameHeaderSize + payload_size);
  FrameHeader h;
  h.length = static_cast<uint32_t>(payload_size);
  h.type = static_cast<uint8_t>(type);
  h.flags = flags;
  h.stream_id = stream_id;
  SerializeFrameHeader(h, p);
  return p + kFrameHeaderSize;
}

inline void PutPriority(const PriorityFields& priority, uint8_t* p) {
  wire::StoreBE32(p, (priority.stream_dependency & kStreamIdMask) |
                         (priority.exclusive ? 0x80000000u : 0u));
  p[4] = priority.weight;
}

// One HEADERS / PUSH_PROMISE frame: [pad length] [`fixed` octets that
// `put_fixed` writes] fragment [padding]. PADDED is added to `flags` when
// pad_length is set.
template <typename PutFixed>
void WriteHeaderLikeFrame(FrameType type, uint8_t flags, uint32_t stream_id,
                          std::string_view fragment, size_t fixed,
                          PutFixed put_fixed, std::optional<uint8_t> pad_length,
                          SliceBuffer* out) {
  const size_t pad_octets =
      pad_length.has_value() ? 1 + size_t{*pad_length} : 0;
  if (pad_length.has_value()) flags |= kFlagPadded;
  uint8_t* p = BeginFrame(type, flags, stream_id,
                          pad_octets + fixed + fragment.size(), out);
  if (pad_length.has_value()) *p++ = *pad_length;
  put_fixed(p);
  p += fixed;
  if (!fragment.empty()) std::memcpy(p, fragment.data(), fragment.size());
  p += fragment.size();
  if (pad_length.has_value() && *pad_length != 0)
    std::memset(p, 0, *pad_length);
}

// A whole header block: as much as fits behind the HEADERS / PUSH_PROMISE
// frame's own fields, the rest in CONTINUATION frames of at most max_frame_size
// octets.
template <typename PutFixed>
void WriteHeaderBlock(FrameType type, uint8_t flags, uint32_t stream_id,
                      std::string_view block, uint32_t max_frame_size,
                      size_t fixed, PutFixed put_fixed,
                      std::optional<uint8_t> pad_length, SliceBuffer* out) {
  const size_t overhead =
      fixed + (pad_length.has_value() ? 1 + size_t{*pad_length} : 0);
  const size_t first_max =
      max_frame_size > overhead ? max_frame_size - overhead : 0;
  std::string_view rest = block;
  const std::string_view first = rest.substr(0, first_max);
  rest.remove_prefix(first.size());
  if (rest.empty()) flags |= kFlagEndHeaders;
  WriteHeaderLikeFrame(type, flags, stream_id, first, fixed, put_fixed,
                       pad_length, out);
  while (!rest.empty()) {
    const std::string_view chunk = rest.substr(0, max_frame_size);
    rest.remove_prefix(chunk.size());
    WriteContinuation(stream_id, chunk, rest.empty(), out);
  }
}

}  // namespace

void WriteFrameHeader(const FrameHeader& header, SliceBuffer* out) {
  SerializeFrameHeader(header, out->AppendUninitialized(kFrameHeaderSize));
}

void WriteData(uint32_t stream_id, SliceBuffer&& payload, bool end_stream,
               SliceBuffer* out) {
  FrameHeader h;
  h.length = static_cast<uint32_t>(payload.size());
  h.type = static_cast<uint8_t>(FrameType::kData);
  h.flags = end_stream ? kFlagEndStream : 0;
  h.stream_id = stream_id;
  WriteFrameHeader(h, out);
  out->Append(std::move(payload));
}

void WriteData(uint32_t stream_id, Slice payload, bool end_stream,
               SliceBuffer* out) {
  FrameHeader h;
  h.length = static_cast<uint32_t>(payload.size());
  h.type = static_cast<uint8_t>(FrameType::kData);
  h.flags = end_stream ? kFlagEndStream : 0;
  h.stream_id = stream_id;
  WriteFrameHeader(h, out);
  out->Append(std::move(payload));
}

void WriteDataFrames(uint32_t stream_id, SliceBuffer* payload, size_t length,
                     uint32_t max_frame_size, bool end_stream,
                     SliceBuffer* out) {
  if (length == 0) {
    if (end_stream) WriteData(stream_id, Slice(), true, out);
    return;
  }
  while (length > 0) {
    const size_t n = std::min<size_t>(length, max_frame_size);
    length -= n;
    FrameHeader h;
    h.length = static_cast<uint32_t>(n);
    h.type = static_cast<uint8_t>(FrameType::kData);
    h.flags = (end_stream && length == 0) ? kFlagEndStream : 0;
    h.stream_id = stream_id;
    if (n <= kDataCopyThreshold) {
      uint8_t* p = out->AppendUninitialized(kFrameHeaderSize + n);
      SerializeFrameHeader(h, p);
      payload->CopyTo(p + kFrameHeaderSize, n);
      payload->TrimFront(n);
      continue;
    }
    WriteFrameHeader(h, out);
    payload->MoveFrontTo(n, out);
  }
}

void WritePaddedData(uint32_t stream_id, const SliceBuffer& payload,
                     uint8_t pad_length, bool end_stream, SliceBuffer* out) {
  FrameHeader h;
  h.length = static_cast<uint32_t>(1 + payload.size() + pad_length);
  h.type = static_cast<uint8_t>(FrameType::kData);
  h.flags = kFlagPadded | (end_stream ? kFlagEndStream : 0);
  h.stream_id = stream_id;
  uint8_t* p = out->AppendUninitialized(kFrameHeaderSize + 1);
  SerializeFrameHeader(h, p);
  p[kFrameHeaderSize] = pad_length;
  out->Append(payload);
  if (pad_length != 0)
    std::memset(out->AppendUninitialized(pad_length), 0, pad_length);
}

void WriteHeaders(uint32_t stream_id, std::string_view block, bool end_stream,
                  uint32_t max_frame_size, SliceBuffer* out) {
  WriteHeaderBlock(
      FrameType::kHeaders, end_stream ? kFlagEndStream : 0, stream_id, block,
      max_frame_size, 0, [](uint8_t*) {}, std::nullopt, out);
}

void WriteHeaders(uint32_t stream_id, std::string_view block, bool end_stream,
                  uint32_t max_frame_size, const PriorityFields* priority,
                  std::optional<uint8_t> pad_length, SliceBuffer* out) {
  uint8_t flags = end_stream ? kFlagEndStream : 0;
  if (priority != nullptr) flags |= kFlagPriority;
  WriteHeaderBlock(
      FrameType::kHeaders, flags, stream_id, block, max_frame_size,
      priority != nullptr ? kPriorityFieldsSize : 0,
      [priority](uint8_t* p) {
        if (priority != nullptr) PutPriority(*priority, p);
      },
      pad_length, out);
}

void WritePushPromise(uint32_t stream_id, uint32_t promised_stream_id,
                      std::string_view block, uint32_t max_frame_size,
                      std::optional<uint8_t> pad_length, SliceBuffer* out) {
  WriteHeaderBlock(
      FrameType::kPushPromise, 0, stream_id, block, max_frame_size, 4,
      [promised_stream_id](uint8_t* p) {
        wire::StoreBE32(p, promised_stream_id & kStreamIdMask);
      },
      pad_length, out);
}

void WriteContinuation(uint32_t stream_id, std::string_view fragment,
                       bool end_headers, SliceBuffer* out) {
  uint8_t* p =
      BeginFrame(FrameType::kContinuation, end_headers ? kFlagEndHeaders : 0,
                 stream_id, fragment.size(), out);
  if (!fragment.empty()) std::memcpy(p, fragment.data(), fragment.size());
}

void WritePriority(uint32_t stream_id, const PriorityFields& priority,
                   SliceBuffer* out) {
  PutPriority(priority, BeginFrame(FrameType::kPriority, 0, stream_id,
                                   kPriorityFieldsSize, out));
}

void WriteRstStream(uint32_t stream_id, Http2ErrorCode code, SliceBuffer* out) {
  wire::StoreBE32(BeginFrame(FrameType::kRstStream, 0, stream_id, 4, out),
                  static_cast<uint32_t>(code));
}

void WriteSettings(const Setting* settings, size_t count, SliceBuffer* out) {
  uint8_t* p = BeginFrame(FrameType::kSettings, 0, 0,
                          count * SettingsView::kEntrySize, out);
  for (size_t i = 0; i < count; ++i, p += SettingsView::kEntrySize) {
    wire::StoreBE16(p, settings[i].id);
    wire::StoreBE32(p + 2, settings[i].value);
  }
}

void WriteSettingsAck(SliceBuffer* out) {
  BeginFrame(FrameType::kSettings, kFlagAck, 0, 0, out);
}

void WritePing(uint64_t opaque_data, bool ack, SliceBuffer* out) {
  wire::StoreBE64(BeginFrame(FrameType::kPing, ack ? kFlagAck : 0, 0, 8, out),
                  opaque_data);
}

void WriteGoAway(uint32_t last_stream_id, Http2ErrorCode code,
                 std::string_view debug_data, SliceBuffer* out) {
  uint8_t* p = BeginFrame(FrameType::kGoAway, 0, 0, 8 + debug_data.size(), out);
  wire::StoreBE32(p, last_stream_id & kStreamIdMask);
  wire::StoreBE32(p + 4, static_cast<uint32_t>(code));
  if (!debug_data.empty())
    std::memcpy(p + 8, debug_data.data(), debug_data.size());
}

void WriteWindowUpdate(uint32_t stream_id, uint32_t increment,
                       SliceBuffer* out) {
  wire::StoreBE32(BeginFrame(FrameType::kWindowUpdate, 0, stream_id, 4, out),
                  increment & kStreamIdMask);
}

void WriteUnknownFrame(uint8_t type, uint8_t flags, uint32_t stream_id,
                       uint32_t length, SliceBuffer* out) {
  FrameHeader h;
  h.length = length;
  h.type = type;
  h.flags = flags;
  h.stream_id = stream_id;
  uint8_t* p = out->AppendUninitialized(kFrameHeaderSize + length);
  SerializeFrameHeader(h, p);
  if (length != 0) std::memset(p + kFrameHeaderSize, 0, length);
}

namespace {

struct FrameWriter {
  SliceBuffer* out;

  void operator()(const DataFrame& f) {
    if (f.pad_length.has_value()) {
      WritePaddedData(f.stream_id, f.payload, *f.pad_length, f.end_stream, out);
    } else {
      WriteData(f.stream_id, SliceBuffer(f.payload), f.end_stream, out);
    }
  }
  void operator()(const HeadersFrame& f) {
    uint8_t flags = (f.end_stream ? kFlagEndStream : 0) |
                    (f.end_headers ? kFlagEndHeaders : 0);
    if (f.priority.has_value()) flags |= kFlagPriority;
    WriteHeaderLikeFrame(
        FrameType::kHeaders, flags, f.stream_id, f.fragment,
        f.priority.has_value() ? kPriorityFieldsSize : 0,
        [&f](uint8_t* p) {
          if (f.priority.has_value()) PutPriority(*f.priority, p);
        },
        f.pad_length, out);
  }
  void operator()(const PriorityFrame& f) {
    WritePriority(f.stream_id, f.priority, out);
  }
  void operator()(const RstStreamFrame& f) {
    WriteRstStream(f.stream_id, f.error_code, out);
  }
  void operator()(const SettingsFrame& f) {
    if (f.ack) {
      // An ACK carries no entries; a struct with both is written as it says.
      uint8_t* p =
          BeginFrame(FrameType::kSettings, kFlagAck, 0,
                     f.settings.size() * SettingsView::kEntrySize, out);
      for (const Setting& s : f.settings) {
        wire::StoreBE16(p, s.id);
        wire::StoreBE32(p + 2, s.value);
        p += SettingsView::kEntrySize;
      }
    } else {
      WriteSettings(f.settings, out);
    }
  }
  void operator()(const PushPromiseFrame& f) {
    const uint32_t promised = f.promised_stream_id;
    WriteHeaderLikeFrame(
        FrameType::kPushPromise, f.end_headers ? kFlagEndHeaders : 0,
        f.stream_id, f.fragment, 4,
        [promised](uint8_t* p) {
          wire::StoreBE32(p, promised & kStreamIdMask);
        },
        f.pad_length, out);
  }
  void operator()(const PingFrame& f) { WritePing(f.opaque_data, f.ack, out); }
  void operator()(const GoAwayFrame& f) {
    WriteGoAway(f.last_stream_id, f.error_code, f.debug_data, out);
  }
  void operator()(const WindowUpdateFrame& f) {
    WriteWindowUpdate(f.stream_id, f.increment, out);
  }
  void operator()(const ContinuationFrame& f) {
    WriteContinuation(f.stream_id, f.fragment, f.end_headers, out);
  }
  void operator()(const UnknownFrame& f) {
    WriteUnknownFrame(f.type, f.flags, f.stream_id, f.length, out);
  }
};

}  // namespace

void WriteFrame(const Frame& frame, SliceBuffer* out) {
  std::visit(FrameWriter{out}, frame);
}

}  // namespace transport
