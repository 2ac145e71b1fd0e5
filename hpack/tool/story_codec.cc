#include "hpack/tool/story_codec.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

#include "hpack/decode_error.h"
#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/header_list.h"

namespace hpack {
namespace tool {
namespace {

std::string Quote(std::string_view name, std::string_view value) {
  std::string out = "\"";
  out.append(name);
  out += ": ";
  out.append(value);
  out += "\"";
  return out;
}

std::string CaseLabel(size_t i, const Case& c) {
  return "case " + std::to_string(i) + " (seqno " + std::to_string(c.seqno) +
         ")";
}

// Empty if `got` equals `want`, else what differs first.
std::string Compare(const HeaderList& got, const std::vector<Field>& want) {
  const size_t n = std::min(got.size(), want.size());
  for (size_t i = 0; i < n; ++i) {
    const HeaderField f = got[i];
    if (f.name != want[i].first || f.value != want[i].second) {
      return "header " + std::to_string(i) + ": expected " +
             Quote(want[i].first, want[i].second) + ", got " +
             Quote(f.name, f.value);
    }
  }
  if (got.size() != want.size()) {
    std::string out = "expected " + std::to_string(want.size()) +
                      " headers, got " + std::to_string(got.size());
    if (got.size() > n) {
      out += " (first extra: " + Quote(got[n].name, got[n].value) + ")";
    } else {
      out += " (first missing: " + Quote(want[n].first, want[n].second) + ")";
    }
    return out;
  }
  return "";
}

}  // namespace

VerifyResult VerifyStory(const Story& story) {
  VerifyResult result;
  Decoder::Options options;
  options.max_header_list_size = std::numeric_limits<size_t>::max();
  Decoder decoder(options);
  HeaderList list;
  for (size_t i = 0; i < story.cases.size(); ++i) {
    const Case& c = story.cases[i];
    if (!c.has_wire) {
      result.mismatch = CaseLabel(i, c) + ": no wire";
      return result;
    }
    if (c.header_table_size) decoder.SetMaxTableSizeLimit(*c.header_table_size);
    const DecodeError e = decoder.Decode(c.wire, &list);
    if (IsConnectionError(e)) {
      result.mismatch =
          CaseLabel(i, c) + ": decode error " + DecodeErrorName(e);
      return result;
    }
    if (e == DecodeError::kInvalidFieldName ||
        e == DecodeError::kInvalidFieldValue) {
      ++result.invalid_field_cases;
    } else if (e != DecodeError::kOk) {
      result.mismatch =
          CaseLabel(i, c) + ": decode error " + DecodeErrorName(e);
      return result;
    }
    const std::string diff = Compare(list, c.headers);
    if (!diff.empty()) {
      result.mismatch = CaseLabel(i, c) + ": " + diff;
      return result;
    }
    ++result.cases;
  }
  result.ok = true;
  return result;
}

Story EncodeStory(const Story& story, uint32_t table_size) {
  Encoder::Options options;
  options.max_table_size = table_size;
  Encoder encoder(options);
  encoder.SetPeerMaxTableSize(table_size);

  Story out;
  out.description =
      "Encoded by h2rpc's HPACK encoder (hpack_tool encode) with "
      "a dynamic table of " +
      std::to_string(table_size) +
      " octets: repeated fields indexed, sensitive ones "
      "(authorization, short cookies) "
      "never indexed, Huffman only when strictly shorter.";
  out.context = story.context;
  std::vector<HeaderField> fields;
  for (size_t i = 0; i < story.cases.size(); ++i) {
    const Case& c = story.cases[i];
    fields.clear();
    for (const Field& f : c.headers) {
      fields.push_back(HeaderField{f.first, f.second});
    }
    Case e;
    e.seqno = static_cast<int>(i);
    if (i == 0) e.header_table_size = table_size;
    e.wire = std::string(encoder.EncodeBlock(fields.data(), fields.size()));
    e.has_wire = true;
    e.headers = c.headers;
    out.cases.push_back(std::move(e));
  }
  return out;
}

}  // namespace tool
}  // namespace hpack
