#include "transport/frame/frame.h"

#include <cstdio>
#include <sstream>

namespace transport {

const char* FrameTypeName(uint8_t type) {
  switch (static_cast<FrameType>(type)) {
    case FrameType::kData:
      return "DATA";
    case FrameType::kHeaders:
      return "HEADERS";
    case FrameType::kPriority:
      return "PRIORITY";
    case FrameType::kRstStream:
      return "RST_STREAM";
    case FrameType::kSettings:
      return "SETTINGS";
    case FrameType::kPushPromise:
      return "PUSH_PROMISE";
    case FrameType::kPing:
      return "PING";
    case FrameType::kGoAway:
      return "GOAWAY";
    case FrameType::kWindowUpdate:
      return "WINDOW_UPDATE";
    case FrameType::kContinuation:
      return "CONTINUATION";
  }
  return "UNKNOWN";
}

std::ostream& operator<<(std::ostream& os, const FrameHeader& h) {
  return os << FrameTypeName(h.type) << "(" << static_cast<int>(h.type)
            << ") length=" << h.length << " flags=0x" << std::hex
            << static_cast<int>(h.flags) << std::dec
            << " stream=" << h.stream_id;
}

bool operator==(const DataFrame& a, const DataFrame& b) {
  return a.stream_id == b.stream_id && a.end_stream == b.end_stream &&
         a.pad_length == b.pad_length && a.payload == b.payload;
}
bool operator==(const HeadersFrame& a, const HeadersFrame& b) {
  return a.stream_id == b.stream_id && a.end_stream == b.end_stream &&
         a.end_headers == b.end_headers && a.priority == b.priority &&
         a.pad_length == b.pad_length && a.fragment == b.fragment;
}
bool operator==(const PriorityFrame& a, const PriorityFrame& b) {
  return a.stream_id == b.stream_id && a.priority == b.priority;
}
bool operator==(const RstStreamFrame& a, const RstStreamFrame& b) {
  return a.stream_id == b.stream_id && a.error_code == b.error_code;
}
bool operator==(const SettingsFrame& a, const SettingsFrame& b) {
  return a.ack == b.ack && a.settings == b.settings;
}
bool operator==(const PushPromiseFrame& a, const PushPromiseFrame& b) {
  return a.stream_id == b.stream_id &&
         a.promised_stream_id == b.promised_stream_id &&
         a.end_headers == b.end_headers && a.pad_length == b.pad_length &&
         a.fragment == b.fragment;
}
bool operator==(const PingFrame& a, const PingFrame& b) {
  return a.ack == b.ack && a.opaque_data == b.opaque_data;
}
bool operator==(const GoAwayFrame& a, const GoAwayFrame& b) {
  return a.last_stream_id == b.last_stream_id && a.error_code == b.error_code &&
         a.debug_data == b.debug_data;
}
bool operator==(const WindowUpdateFrame& a, const WindowUpdateFrame& b) {
  return a.stream_id == b.stream_id && a.increment == b.increment;
}
bool operator==(const ContinuationFrame& a, const ContinuationFrame& b) {
  return a.stream_id == b.stream_id && a.end_headers == b.end_headers &&
         a.fragment == b.fragment;
}
bool operator==(const UnknownFrame& a, const UnknownFrame& b) {
  return a.type == b.type && a.flags == b.flags && a.stream_id == b.stream_id &&
         a.length == b.length;
}

namespace {

// Printable ASCII as is, the rest as \xNN; at most 64 octets then "...(N
// octets)".
std::string Escape(std::string_view bytes) {
  constexpr size_t kMax = 64;
  std::string out = "\"";
  for (size_t i = 0; i < bytes.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    }
  }
  out += "\"";
  if (bytes.size() > kMax)
    out += "...(" + std::to_string(bytes.size()) + " octets)";
  return out;
}

void PrintPad(std::ostream& os, const std::optional<uint8_t>& pad) {
  if (pad.has_value()) os << " pad=" << static_cast<int>(*pad);
}

void PrintPriority(std::ostream& os, const PriorityFields& p) {
  os << " dep=" << p.stream_dependency << (p.exclusive ? " exclusive" : "")
     << " weight=" << static_cast<int>(p.weight);
}

struct Printer {
  std::ostream& os;

  void operator()(const DataFrame& f) {
    os << "DATA stream=" << f.stream_id << (f.end_stream ? " end_stream" : "");
    PrintPad(os, f.pad_length);
    os << " payload=" << Escape(f.payload.ToString());
  }
  void operator()(const HeadersFrame& f) {
    os << "HEADERS stream=" << f.stream_id
       << (f.end_stream ? " end_stream" : "")
       << (f.end_headers ? " end_headers" : "");
    if (f.priority.has_value()) PrintPriority(os, *f.priority);
    PrintPad(os, f.pad_length);
    os << " fragment=" << Escape(f.fragment);
  }
  void operator()(const PriorityFrame& f) {
    os << "PRIORITY stream=" << f.stream_id;
    PrintPriority(os, f.priority);
  }
  void operator()(const RstStreamFrame& f) {
    os << "RST_STREAM stream=" << f.stream_id << " code=" << f.error_code;
  }
  void operator()(const SettingsFrame& f) {
    os << "SETTINGS" << (f.ack ? " ack" : "");
    for (const Setting& s : f.settings) os << " " << s;
  }
  void operator()(const PushPromiseFrame& f) {
    os << "PUSH_PROMISE stream=" << f.stream_id
       << " promised=" << f.promised_stream_id
       << (f.end_headers ? " end_headers" : "");
    PrintPad(os, f.pad_length);
    os << " fragment=" << Escape(f.fragment);
  }
  void operator()(const PingFrame& f) {
    os << "PING" << (f.ack ? " ack" : "") << " opaque=0x" << std::hex
       << f.opaque_data << std::dec;
  }
  void operator()(const GoAwayFrame& f) {
    os << "GOAWAY last_stream=" << f.last_stream_id << " code=" << f.error_code
       << " debug=" << Escape(f.debug_data);
  }
  void operator()(const WindowUpdateFrame& f) {
    os << "WINDOW_UPDATE stream=" << f.stream_id
       << " increment=" << f.increment;
  }
  void operator()(const ContinuationFrame& f) {
    os << "CONTINUATION stream=" << f.stream_id
       << (f.end_headers ? " end_headers" : "")
       << " fragment=" << Escape(f.fragment);
  }
  void operator()(const UnknownFrame& f) {
    os << "UNKNOWN type=" << static_cast<int>(f.type) << " flags=0x" << std::hex
       << static_cast<int>(f.flags) << std::dec << " stream=" << f.stream_id
       << " length=" << f.length;
  }
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Frame& frame) {
  std::visit(Printer{os}, frame);
  return os;
}

std::string FrameToString(const Frame& frame) {
  std::ostringstream os;
  os << frame;
  return os.str();
}

#define TRANSPORT_FRAME_PRINTER(Type)                             \
  std::ostream& operator<<(std::ostream& os, const Type& frame) { \
    Printer{os}(frame);                                           \
    return os;                                                    \
  }
TRANSPORT_FRAME_PRINTER(DataFrame)
TRANSPORT_FRAME_PRINTER(HeadersFrame)
TRANSPORT_FRAME_PRINTER(PriorityFrame)
TRANSPORT_FRAME_PRINTER(RstStreamFrame)
TRANSPORT_FRAME_PRINTER(SettingsFrame)
TRANSPORT_FRAME_PRINTER(PushPromiseFrame)
TRANSPORT_FRAME_PRINTER(PingFrame)
TRANSPORT_FRAME_PRINTER(GoAwayFrame)
TRANSPORT_FRAME_PRINTER(WindowUpdateFrame)
TRANSPORT_FRAME_PRINTER(ContinuationFrame)
TRANSPORT_FRAME_PRINTER(UnknownFrame)
#undef TRANSPORT_FRAME_PRINTER

}  // namespace transport
