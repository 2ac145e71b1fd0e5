#include "hpack/tool/har.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace hpack {
namespace tool {
namespace {

using nlohmann::json;

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

struct Url {
  std::string scheme;
  std::string authority;  // host[:port], without userinfo.
  std::string path;  // Path and query, without the fragment; "/" when empty.
};

bool ParseUrl(std::string_view url, Url* out) {
  const size_t colon = url.find("://");
  if (colon == std::string_view::npos) return false;
  out->scheme = Lower(std::string(url.substr(0, colon)));
  std::string_view rest = url.substr(colon + 3);
  const size_t slash = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, slash);
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  out->authority = Lower(std::string(authority));
  std::string_view path =
      slash == std::string_view::npos ? "" : rest.substr(slash);
  if (const size_t hash = path.find('#'); hash != std::string_view::npos) {
    path = path.substr(0, hash);
  }
  out->path = std::string(path);
  if (out->path.empty() || out->path[0] != '/') out->path.insert(0, "/");
  return true;
}

// The HAR headers as lowercased (name, value) pairs, or false if malformed.
bool ReadHeaders(const json& message, std::vector<Field>* out,
                 std::string* error) {
  const auto it = message.find("headers");
  if (it == message.end()) return true;
  if (!it->is_array()) {
    *error = "\"headers\" is not an array";
    return false;
  }
  for (const json& h : *it) {
    const auto name = h.find("name");
    const auto value = h.find("value");
    if (!h.is_object() || name == h.end() || value == h.end() ||
        !name->is_string() || !value->is_string()) {
      *error = "a header is not {\"name\": string, \"value\": string}";
      return false;
    }
    out->emplace_back(Lower(name->get<std::string>()),
                      value->get<std::string>());
  }
  return true;
}

// Drops what HTTP/2 does not carry (see har.h); returns the Host header's
// value, if any.
std::string DropConnectionSpecific(std::vector<Field>* fields) {
  std::set<std::string> drop = {"connection",       "keep-alive",
                                "proxy-connection", "transfer-encoding",
                                "upgrade",          "host"};
  std::string host;
  for (const Field& f : *fields) {
    if (f.first == "connection") {
      std::string_view v = f.second;
      while (!v.empty()) {
        const size_t comma = v.find(',');
        const std::string token = Lower(Trim(v.substr(0, comma)));
        if (!token.empty()) drop.insert(token);
        v = comma == std::string_view::npos ? "" : v.substr(comma + 1);
      }
    }
    if (f.first == "host" && host.empty()) host = f.second;
  }
  std::vector<Field> kept;
  for (Field& f : *fields) {
    if (!f.first.empty() && f.first[0] == ':') continue;
    if (drop.count(f.first) != 0) continue;
    if (f.first == "te" && Lower(Trim(f.second)) != "trailers") continue;
    kept.push_back(std::move(f));
  }
  *fields = std::move(kept);
  return host;
}

}  // namespace

bool LooksLikeHar(std::string_view json_text) {
  const json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return false;
  const auto log = doc.find("log");
  return log != doc.end() && log->is_object() && log->contains("entries");
}

bool ParseHar(std::string_view json_text, std::vector<Conversation>* out,
              HarStats* stats, std::string* error) {
  *stats = HarStats();
  const json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    *error = "not a JSON object";
    return false;
  }
  const auto log = doc.find("log");
  if (log == doc.end() || !log->is_object()) {
    *error = "no \"log\" object";
    return false;
  }
  const auto entries = log->find("entries");
  if (entries == log->end() || !entries->is_array()) {
    *error = "no \"log.entries\" array";
    return false;
  }

  std::vector<Conversation> conversations;
  std::map<std::string, size_t> by_key;  // "<authority> requests" -> index.
  auto conversation = [&](const std::string& key) -> Conversation& {
    const auto [it, inserted] = by_key.emplace(key, conversations.size());
    if (inserted) conversations.push_back(Conversation{key, {}});
    return conversations[it->second];
  };

  for (size_t i = 0; i < entries->size(); ++i) {
    const json& entry = (*entries)[i];
    ++stats->entries;
    const std::string where = "entry " + std::to_string(i) + ": ";
    const auto request = entry.find("request");
    if (!entry.is_object() || request == entry.end() || !request->is_object()) {
      *error = where + "no \"request\" object";
      return false;
    }
    const auto url = request->find("url");
    const auto method = request->find("method");
    if (url == request->end() || !url->is_string() ||
        method == request->end() || !method->is_string()) {
      *error = where + "request without a string \"url\" and \"method\"";
      return false;
    }
    Url parsed;
    if (!ParseUrl(url->get<std::string>(), &parsed) ||
        (parsed.scheme != "http" && parsed.scheme != "https")) {
      ++stats->skipped_entries;
      continue;
    }

    Message req;
    req.is_request = true;
    std::vector<Field> headers;
    std::string why;
    if (!ReadHeaders(*request, &headers, &why)) {
      *error = where + "request: " + why;
      return false;
    }
    const std::string host = DropConnectionSpecific(&headers);
    const std::string authority =
        host.empty() ? parsed.authority : Lower(Trim(host));
    req.fields = {{":method", method->get<std::string>()},
                  {":scheme", parsed.scheme},
                  {":authority", authority},
                  {":path", parsed.path}};
    for (Field& f : headers) req.fields.push_back(std::move(f));
    conversation(authority + " requests").messages.push_back(std::move(req));

    const auto response = entry.find("response");
    if (response == entry.end() || !response->is_object()) {
      ++stats->skipped_responses;
      continue;
    }
    const auto status = response->find("status");
    if (status == response->end() || !status->is_number_integer()) {
      *error = where + "response without an integer \"status\"";
      return false;
    }
    const int code = status->get<int>();
    if (code == 0) {
      ++stats->skipped_responses;
      continue;
    }
    if (code < 100 || code > 999) {
      *error = where + "response status " + std::to_string(code) +
               " is not 3 digits";
      return false;
    }
    Message resp;
    resp.is_request = false;
    headers.clear();
    if (!ReadHeaders(*response, &headers, &why)) {
      *error = where + "response: " + why;
      return false;
    }
    DropConnectionSpecific(&headers);
    resp.fields = {{":status", std::to_string(code)}};
    for (Field& f : headers) resp.fields.push_back(std::move(f));
    conversation(authority + " responses").messages.push_back(std::move(resp));
  }
  for (Conversation& c : conversations) out->push_back(std::move(c));
  return true;
}

}  // namespace tool
}  // namespace hpack
