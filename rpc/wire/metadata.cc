#include "rpc/wire/metadata.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "rpc/wire/base64.h"

namespace rpc {

namespace {

constexpr std::array<bool, 256> MakeKeyTable() {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  t['_'] = t['-'] = t['.'] = true;
  return t;
}
constexpr std::array<bool, 256> kKeyChar = MakeKeyTable();

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace

std::optional<std::string_view> Metadata::Get(std::string_view key) const {
  for (const value_type& p : pairs_) {
    if (p.first == key) return std::string_view(p.second);
  }
  return std::nullopt;
}

std::vector<std::string_view> Metadata::GetAll(std::string_view key) const {
  std::vector<std::string_view> out;
  for (const value_type& p : pairs_) {
    if (p.first == key) out.emplace_back(p.second);
  }
  return out;
}

size_t Metadata::Count(std::string_view key) const {
  return std::count_if(pairs_.begin(), pairs_.end(),
                       [key](const value_type& p) { return p.first == key; });
}

size_t Metadata::Remove(std::string_view key) {
  const size_t before = pairs_.size();
  pairs_.erase(
      std::remove_if(pairs_.begin(), pairs_.end(),
                     [key](const value_type& p) { return p.first == key; }),
      pairs_.end());
  return before - pairs_.size();
}

bool IsValidMetadataKey(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!kKeyChar[static_cast<uint8_t>(c)]) return false;
  }
  return true;
}

bool IsBinaryKey(std::string_view key) {
  return key.size() >= 4 && key.substr(key.size() - 4) == "-bin";
}

bool IsValidAsciiValue(std::string_view value) {
  for (char c : value) {
    // One unsigned compare: 0x20-0x7E.
    if (static_cast<uint8_t>(static_cast<uint8_t>(c) - 0x20) > 0x5e) {
      return false;
    }
  }
  return true;
}

bool IsReservedHeader(std::string_view key) {
  if (key.empty()) return false;
  if (key[0] == ':' || StartsWith(key, "grpc-")) return true;
  return std::find(kReservedHeaders.begin(), kReservedHeaders.end(), key) !=
         kReservedHeaders.end();
}

absl::Status ValidateUserMetadata(std::string_view key,
                                  std::string_view value) {
  if (!IsValidMetadataKey(key)) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata key \"", absl::CEscape(ToAbsl(key)),
                     "\" is not 1 or more of [0-9a-z_.-]"));
  }
  if (IsReservedHeader(key)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metadata key \"", ToAbsl(key), "\" is reserved for the library"));
  }
  if (!IsBinaryKey(key) && !IsValidAsciiValue(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("value of metadata key \"", ToAbsl(key),
                     "\" has octets outside 0x20-0x7E (use a -bin key)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateUserMetadata(const Metadata& metadata) {
  for (const auto& [key, value] : metadata) {
    absl::Status s = ValidateUserMetadata(key, value);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string EncodeMetadataValue(std::string_view key, std::string_view value) {
  if (!IsBinaryKey(key)) return std::string(value);
  return Base64Encode(value);
}

absl::Status DecodeBinaryHeader(std::string_view wire_value,
                                std::vector<std::string>* out) {
  const size_t before = out->size();
  size_t pos = 0;
  while (true) {
    size_t comma = wire_value.find(',', pos);
    const bool last = comma == std::string_view::npos;
    if (last) comma = wire_value.size();
    std::string_view piece = wire_value.substr(pos, comma - pos);
    while (!piece.empty() && (piece.front() == ' ' || piece.front() == '\t')) {
      piece.remove_prefix(1);
    }
    while (!piece.empty() && (piece.back() == ' ' || piece.back() == '\t')) {
      piece.remove_suffix(1);
    }
    out->emplace_back();
    if (!Base64DecodeAppend(piece, &out->back())) {
      out->resize(before);
      return absl::InvalidArgumentError("binary metadata value is not base64");
    }
    if (last) return absl::OkStatus();
    pos = comma + 1;
  }
}

absl::StatusOr<std::string> DecodeBinaryValue(std::string_view wire_value) {
  std::string out;
  if (!Base64DecodeAppend(wire_value, &out)) {
    return absl::InvalidArgumentError("binary metadata value is not base64");
  }
  return out;
}

}  // namespace rpc
