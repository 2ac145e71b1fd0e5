#include "hpack/tool/story.h"

#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace hpack {
namespace tool {
namespace {

using nlohmann::json;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ParseHeaders(const json& headers, std::vector<Field>* out,
                  std::string* error) {
  if (!headers.is_array()) {
    *error = "\"headers\" is not an array";
    return false;
  }
  for (const json& h : headers) {
    if (!h.is_object() || h.size() != 1) {
      *error = "a header is not an object with one key";
      return false;
    }
    const auto it = h.begin();
    if (!it.value().is_string()) {
      *error = "the value of header \"" + it.key() + "\" is not a string";
      return false;
    }
    out->emplace_back(it.key(), it.value().get<std::string>());
  }
  return true;
}

bool ParseCase(const json& c, size_t i, Case* out, std::string* error) {
  if (!c.is_object()) {
    *error = "not an object";
    return false;
  }
  out->seqno = static_cast<int>(i);
  if (const auto it = c.find("seqno"); it != c.end() && !it->is_null()) {
    if (!it->is_number_integer()) {
      *error = "\"seqno\" is not an integer";
      return false;
    }
    out->seqno = it->get<int>();
  }
  if (const auto it = c.find("header_table_size");
      it != c.end() && !it->is_null()) {
    if (!it->is_number_unsigned() ||
        it->get<uint64_t>() > std::numeric_limits<uint32_t>::max()) {
      *error = "\"header_table_size\" is not an unsigned 32-bit integer";
      return false;
    }
    out->header_table_size = it->get<uint32_t>();
  }
  if (const auto it = c.find("wire"); it != c.end() && !it->is_null()) {
    if (!it->is_string() || !HexToBytes(it->get<std::string>(), &out->wire)) {
      *error = "\"wire\" is not a hex string";
      return false;
    }
    out->has_wire = true;
  }
  const auto headers = c.find("headers");
  if (headers == c.end()) {
    *error = "no \"headers\"";
    return false;
  }
  return ParseHeaders(*headers, &out->headers, error);
}

}  // namespace

bool ParseStory(std::string_view json_text, Story* story, std::string* error) {
  *story = Story();
  const json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    *error = "not valid JSON";
    return false;
  }
  if (!doc.is_object()) {
    *error = "not a JSON object";
    return false;
  }
  if (const auto it = doc.find("description");
      it != doc.end() && it->is_string()) {
    story->description = it->get<std::string>();
  }
  if (const auto it = doc.find("context"); it != doc.end() && !it->is_null()) {
    if (!it->is_string()) {
      *error = "\"context\" is not a string";
      return false;
    }
    story->context = it->get<std::string>();
  }
  const auto cases = doc.find("cases");
  if (cases == doc.end() || !cases->is_array()) {
    *error = "no \"cases\" array";
    return false;
  }
  story->cases.resize(cases->size());
  for (size_t i = 0; i < cases->size(); ++i) {
    std::string why;
    if (!ParseCase((*cases)[i], i, &story->cases[i], &why)) {
      *error = "case " + std::to_string(i) + ": " + why;
      return false;
    }
  }
  return true;
}

bool ReadFile(const std::string& path, std::string* contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return false;
  *contents = std::move(buf).str();
  return true;
}

bool ReadStoryFile(const std::string& path, Story* story, std::string* error) {
  std::string text;
  if (!ReadFile(path, &text)) {
    *error = path + ": cannot read";
    return false;
  }
  std::string why;
  if (!ParseStory(text, story, &why)) {
    *error = path + ": " + why;
    return false;
  }
  return true;
}

std::string StoryToJson(const Story& story) {
  using ojson = nlohmann::ordered_json;
  ojson doc = ojson::object();
  doc["description"] = story.description;
  if (!story.context.empty()) doc["context"] = story.context;
  ojson cases = ojson::array();
  for (const Case& c : story.cases) {
    ojson jc = ojson::object();
    jc["seqno"] = c.seqno;
    if (c.header_table_size) jc["header_table_size"] = *c.header_table_size;
    if (c.has_wire) jc["wire"] = BytesToHex(c.wire);
    ojson headers = ojson::array();
    for (const Field& f : c.headers) {
      headers.push_back(ojson{{f.first, f.second}});
    }
    jc["headers"] = std::move(headers);
    cases.push_back(std::move(jc));
  }
  doc["cases"] = std::move(cases);
  // Invalid UTF-8 (obs-text octets) is replaced rather than thrown about.
  return doc.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

bool HexToBytes(std::string_view hex, std::string* bytes) {
  if (hex.size() % 2 != 0) return false;
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = HexDigit(hex[i]);
    const int lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  *bytes = std::move(out);
  return true;
}

std::string BytesToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

}  // namespace tool
}  // namespace hpack
