#include "hpack/tool/ratio.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>

#include "hpack/decode_error.h"
#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/header_list.h"

namespace hpack {
namespace tool {
namespace {

const std::string* Find(const std::vector<Field>& fields,
                        std::string_view name) {
  for (const Field& f : fields) {
    if (f.first == name) return &f.second;
  }
  return nullptr;
}

bool SameFields(const HeaderList& got, const std::vector<Field>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    const HeaderField f = got[i];
    if (f.name != want[i].first || f.value != want[i].second) return false;
  }
  return true;
}

// Accumulates one direction's messages at one table size.
struct Tally {
  size_t messages = 0;
  uint64_t encoded = 0;
  uint64_t http1 = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = 0;
  double sum = 0;
  double sum_sq = 0;

  void Add(size_t encoded_octets, size_t http1_octets) {
    const double r =
        static_cast<double>(encoded_octets) / static_cast<double>(http1_octets);
    ++messages;
    encoded += encoded_octets;
    http1 += http1_octets;
    min = std::min(min, r);
    max = std::max(max, r);
    sum += r;
    sum_sq += r * r;
  }

  RatioRow Row(uint32_t table_size, bool requests) const {
    RatioRow row;
    row.table_size = table_size;
    row.requests = requests;
    row.messages = messages;
    row.encoded_octets = encoded;
    row.http1_octets = http1;
    row.ratio = static_cast<double>(encoded) / static_cast<double>(http1);
    row.min = min;
    row.max = max;
    const double n = static_cast<double>(messages);
    row.mean = sum / n;
    row.stddev = std::sqrt(std::max(0.0, sum_sq / n - row.mean * row.mean));
    return row;
  }
};

std::string WithCommas(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  const size_t first = digits.size() % 3 == 0 ? 3 : digits.size() % 3;
  out.append(digits, 0, first);
  for (size_t i = first; i < digits.size(); i += 3) {
    out += ',';
    out.append(digits, i, 3);
  }
  return out;
}

}  // namespace

const char* ReasonPhrase(int status) {
  struct Reason {
    int status;
    const char* phrase;
  };
  static constexpr Reason kReasons[] = {
      {100, "Continue"},
      {101, "Switching Protocols"},
      {200, "OK"},
      {201, "Created"},
      {202, "Accepted"},
      {203, "Non-Authoritative Information"},
      {204, "No Content"},
      {205, "Reset Content"},
      {206, "Partial Content"},
      {300, "Multiple Choices"},
      {301, "Moved Permanently"},
      {302, "Found"},
      {303, "See Other"},
      {304, "Not Modified"},
      {305, "Use Proxy"},
      {307, "Temporary Redirect"},
      {308, "Permanent Redirect"},
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {402, "Payment Required"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {406, "Not Acceptable"},
      {407, "Proxy Authentication Required"},
      {408, "Request Timeout"},
      {409, "Conflict"},
      {410, "Gone"},
      {411, "Length Required"},
      {412, "Precondition Failed"},
      {413, "Content Too Large"},
      {414, "URI Too Long"},
      {415, "Unsupported Media Type"},
      {416, "Range Not Satisfiable"},
      {417, "Expectation Failed"},
      {421, "Misdirected Request"},
      {422, "Unprocessable Content"},
      {426, "Upgrade Required"},
      {500, "Internal Server Error"},
      {501, "Not Implemented"},
      {502, "Bad Gateway"},
      {503, "Service Unavailable"},
      {504, "Gateway Timeout"},
      {505, "HTTP Version Not Supported"},
  };
  for (const Reason& r : kReasons) {
    if (r.status == status) return r.phrase;
  }
  return "";
}

std::string Http1Text(const Message& message) {
  std::string out;
  const std::vector<Field>& fields = message.fields;
  if (message.is_request) {
    const std::string* method = Find(fields, ":method");
    const std::string* path = Find(fields, ":path");
    const std::string* authority = Find(fields, ":authority");
    out += method ? *method : "";
    out += ' ';
    out += path ? *path : (authority ? *authority : "*");
    out += " HTTP/1.1\r\n";
    if (authority) out += "Host: " + *authority + "\r\n";
  } else {
    const std::string* status = Find(fields, ":status");
    const std::string code = status ? *status : "";
    int number = 0;
    if (code.size() == 3 && std::all_of(code.begin(), code.end(), [](char c) {
          return c >= '0' && c <= '9';
        })) {
      number = std::stoi(code);
    }
    out += "HTTP/1.1 " + code + " " + ReasonPhrase(number) + "\r\n";
  }
  for (const Field& f : fields) {
    if (!f.first.empty() && f.first[0] == ':') continue;
    out += f.first + ": " + f.second + "\r\n";
  }
  out += "\r\n";
  return out;
}

Conversation ConversationFromStory(const Story& story,
                                   const std::string& name) {
  Conversation conversation;
  conversation.name = name;
  // The wire counts when every case has one and the table stays at 4096.
  bool wire_at_4096 = true;
  for (const Case& c : story.cases) {
    if (!c.has_wire || (c.header_table_size && *c.header_table_size != 4096)) {
      wire_at_4096 = false;
    }
  }
  for (const Case& c : story.cases) {
    Message m;
    if (story.context == "request") {
      m.is_request = true;
    } else if (story.context == "response") {
      m.is_request = false;
    } else {
      m.is_request = Find(c.headers, ":status") == nullptr;
    }
    m.fields = c.headers;
    if (wire_at_4096) m.story_wire_octets = static_cast<long>(c.wire.size());
    conversation.messages.push_back(std::move(m));
  }
  return conversation;
}

bool ComputeRatios(const std::vector<Conversation>& conversations,
                   const std::vector<uint32_t>& table_sizes,
                   std::vector<RatioRow>* rows, std::string* error,
                   const Peer* peer) {
  rows->clear();
  // HTTP/1.1 sizes do not depend on the table size.
  std::vector<std::vector<size_t>> http1(conversations.size());
  for (size_t c = 0; c < conversations.size(); ++c) {
    for (const Message& m : conversations[c].messages) {
      http1[c].push_back(Http1Text(m).size());
    }
  }
  std::vector<HeaderField> fields;
  HeaderList decoded;
  std::string peer_block;
  std::vector<Field> peer_decoded;
  for (const uint32_t table_size : table_sizes) {
    Tally tally[2];  // [0] requests, [1] responses.
    uint64_t peer_octets[2] = {0, 0};
    // The stories' own blocks: only at 4096, only if every message has one.
    uint64_t wire_octets[2] = {0, 0};
    bool all_wire[2] = {table_size == 4096, table_size == 4096};
    for (size_t c = 0; c < conversations.size(); ++c) {
      Encoder::Options eo;
      eo.max_table_size = table_size;
      Encoder encoder(eo);
      encoder.SetPeerMaxTableSize(table_size);
      Decoder::Options dopt;
      dopt.max_header_list_size = std::numeric_limits<size_t>::max();
      Decoder decoder(dopt);
      decoder.SetMaxTableSizeLimit(table_size);
      std::unique_ptr<PeerEncoder> peer_encoder;
      std::unique_ptr<PeerDecoder> peer_decoder;
      Decoder peer_check(dopt);  // Ours, on the peer's blocks.
      peer_check.SetMaxTableSizeLimit(table_size);
      if (peer != nullptr) {
        peer_encoder = peer->make_encoder(table_size);
        peer_decoder = peer->make_decoder(table_size);
      }
      const std::vector<Message>& messages = conversations[c].messages;
      for (size_t i = 0; i < messages.size(); ++i) {
        fields.clear();
        for (const Field& f : messages[i].fields) {
          fields.push_back(HeaderField{f.first, f.second});
        }
        const std::string_view block =
            encoder.EncodeBlock(fields.data(), fields.size());
        const DecodeError e = decoder.Decode(block, &decoded);
        if (IsConnectionError(e) || e == DecodeError::kHeaderListTooLarge ||
            !SameFields(decoded, messages[i].fields)) {
          *error = conversations[c].name + ": message " + std::to_string(i) +
                   " does not decode back to its fields at table size " +
                   std::to_string(table_size) + " (" + DecodeErrorName(e) + ")";
          return false;
        }
        const std::string where = conversations[c].name + ": message " +
                                  std::to_string(i) + " at table size " +
                                  std::to_string(table_size);
        if (peer != nullptr) {
          if (!peer_decoder->Decode(block, &peer_decoded) ||
              peer_decoded != messages[i].fields) {
            *error = where + ": " + peer->name +
                     " does not decode our block back to its fields";
            return false;
          }
          if (!peer_encoder->Encode(messages[i].fields, &peer_block)) {
            *error = where + ": " + peer->name + " fails to encode it";
            return false;
          }
          const DecodeError pe = peer_check.Decode(peer_block, &decoded);
          if (IsConnectionError(pe) || pe == DecodeError::kHeaderListTooLarge ||
              !SameFields(decoded, messages[i].fields)) {
            *error = where + ": " + peer->name +
                     "'s block does not decode back to its fields (" +
                     DecodeErrorName(pe) + ")";
            return false;
          }
          peer_octets[messages[i].is_request ? 0 : 1] += peer_block.size();
        }
        const int d = messages[i].is_request ? 0 : 1;
        if (messages[i].story_wire_octets < 0) {
          all_wire[d] = false;
        } else {
          wire_octets[d] +=
              static_cast<uint64_t>(messages[i].story_wire_octets);
        }
        tally[d].Add(block.size(), http1[c][i]);
      }
    }
    for (int d = 0; d < 2; ++d) {
      if (tally[d].messages > 0) {
        rows->push_back(tally[d].Row(table_size, d == 0));
        if (peer != nullptr) {
          rows->back().has_peer = true;
          rows->back().peer_name = peer->name;
          rows->back().peer_octets = peer_octets[d];
        }
        if (all_wire[d]) {
          rows->back().has_story_wire = true;
          rows->back().story_wire_octets = wire_octets[d];
        }
      }
    }
  }
  return true;
}

std::string FormatRatioTable(const std::vector<RatioRow>& rows) {
  std::string out;
  char line[160];
  for (const bool requests : {true, false}) {
    const RatioRow* first = nullptr;
    bool any_wire = false;
    for (const RatioRow& r : rows) {
      if (r.requests != requests) continue;
      if (first == nullptr) first = &r;
      any_wire = any_wire || r.has_story_wire;
    }
    if (first == nullptr) continue;
    if (!out.empty()) out += "\n";
    out += std::string(requests ? "requests" : "responses") + ": " +
           WithCommas(first->messages) + " messages, " +
           WithCommas(first->http1_octets) + " octets as HTTP/1.1\n";
    std::snprintf(line, sizeof(line), "%10s  %14s  %6s  %6s  %6s  %6s  %7s",
                  "table size", "HPACK octets", "ratio", "min", "max", "mean",
                  "std dev");
    out += line;
    if (first->has_peer) {
      std::snprintf(line, sizeof(line), "  %14s  %10s",
                    (first->peer_name + " octets").c_str(),
                    ("vs " + first->peer_name).c_str());
      out += line;
    }
    if (any_wire) {
      std::snprintf(line, sizeof(line), "  %12s", "story wire");
      out += line;
    }
    out += '\n';
    for (const RatioRow& r : rows) {
      if (r.requests != requests) continue;
      std::snprintf(line, sizeof(line),
                    "%10u  %14s  %6.3f  %6.3f  %6.3f  %6.3f  %7.3f",
                    r.table_size, WithCommas(r.encoded_octets).c_str(), r.ratio,
                    r.min, r.max, r.mean, r.stddev);
      out += line;
      if (r.has_peer) {
        // Ours / the peer's: below 1 where ours is smaller.
        std::snprintf(line, sizeof(line), "  %14s  %10.3f",
                      WithCommas(r.peer_octets).c_str(),
                      r.peer_octets == 0
                          ? 0.0
                          : static_cast<double>(r.encoded_octets) /
                                static_cast<double>(r.peer_octets));
        out += line;
      }
      if (any_wire) {
        std::snprintf(
            line, sizeof(line), "  %12s",
            r.has_story_wire ? WithCommas(r.story_wire_octets).c_str() : "-");
        out += line;
      }
      out += '\n';
    }
  }
  return out;
}

}  // namespace tool
}  // namespace hpack
