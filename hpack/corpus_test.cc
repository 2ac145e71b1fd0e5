// hpack-test-case (github.com/http2jp/hpack-test-case, MIT): every story of
// every implementation's folder must decode to exactly its headers, and every
// raw-data story must round trip through our encoder and decoder at several
// table sizes.
//
// The corpus is vendored at third_party/hpack_test_case and reaches the test as
// runfiles (a data dependency); $HPACK_CORPUS_DIR points the test at another
// copy. Not finding it is a failure, not a skip.

#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/test_util.h"
#include "nlohmann/json.hpp"

namespace hpack {
namespace {

using testing::Fields;
using testing::HexToBytes;
using testing::ToFields;
using testing::ToHeaderFields;

bool IsDirectory(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return false;
  closedir(dir);
  return true;
}

std::string FindCorpus() {
  if (const char* env = std::getenv("HPACK_CORPUS_DIR");
      env != nullptr && *env != '\0') {
    return env;
  }
  // Under `bazel test` the working directory is the workspace's runfiles tree.
  const std::string vendored = "third_party/hpack_test_case";
  return IsDirectory(vendored) ? vendored : "";
}

std::vector<std::string> StoryFiles(const std::string& folder) {
  std::vector<std::string> files;
  DIR* dir = opendir(folder.c_str());
  if (dir == nullptr) return files;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) {
      files.push_back(folder + "/" + name);
    }
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  return files;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

Fields HeadersOf(const nlohmann::json& c) {
  Fields fields;
  for (const auto& header : c.at("headers")) {
    for (const auto& [name, value] : header.items()) {
      fields.emplace_back(name, value.get<std::string>());
    }
  }
  return fields;
}

// RFC 9113 8.2.1 for values, written out independently of field_validation.h: a
// few corpus values end in spaces, which is malformed in HTTP/2 (a stream
// error, not an HPACK one).
bool ValueBreaksRfc9113(const std::string& v) {
  if (v.find_first_of(std::string("\0\r\n", 3)) != std::string::npos)
    return true;
  return !v.empty() && (v.front() == ' ' || v.front() == '\t' ||
                        v.back() == ' ' || v.back() == '\t');
}

bool AnyValueBreaksRfc9113(const Fields& fields) {
  for (const auto& field : fields) {
    if (ValueBreaksRfc9113(field.second)) return true;
  }
  return false;
}

class CorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FindCorpus();
    ASSERT_FALSE(root_.empty())
        << "hpack-test-case corpus not found: run under bazel test (it is a "
           "data dependency) or set HPACK_CORPUS_DIR";
    ASSERT_TRUE(IsDirectory(root_ + "/raw-data")) << root_;
  }
  std::string root_;
};

TEST_F(CorpusTest, EveryImplementationsStoriesDecode) {
  const std::vector<std::string> folders = {
      "go-hpack", "haskell-http2-linear-huffman", "haskell-http2-naive",
      "nghttp2",  "nghttp2-change-table-size",    "python-hpack"};
  HeaderList list;
  for (const std::string& folder : folders) {
    const std::vector<std::string> files = StoryFiles(root_ + "/" + folder);
    // 32 stories each; nghttp2-change-table-size has no story_31.
    EXPECT_EQ(files.size(), folder == "nghttp2-change-table-size" ? 31u : 32u)
        << folder;
    size_t cases = 0;
    size_t malformed = 0;
    for (const std::string& file : files) {
      SCOPED_TRACE(file);
      const nlohmann::json story = ReadJson(file);
      Decoder decoder;  // One context per story.
      for (const auto& c : story.at("cases")) {
        const size_t seqno = c.at("seqno").get<size_t>();
        if (c.contains("header_table_size") &&
            !c.at("header_table_size").is_null()) {
          decoder.SetMaxTableSizeLimit(
              c.at("header_table_size").get<uint32_t>());
        }
        const Fields expected = HeadersOf(c);
        const DecodeError e =
            decoder.Decode(HexToBytes(c.at("wire").get<std::string>()), &list);
        const DecodeError want = AnyValueBreaksRfc9113(expected)
                                     ? DecodeError::kInvalidFieldValue
                                     : DecodeError::kOk;
        ASSERT_EQ(e, want) << "case " << seqno << ": " << DecodeErrorName(e);
        ASSERT_EQ(ToFields(list), expected) << "case " << seqno;
        ++cases;
        if (e != DecodeError::kOk) ++malformed;
      }
    }
    // The same stories in every folder, including story_25's five malformed
    // values.
    EXPECT_GT(cases, 3000u) << folder;
    EXPECT_EQ(malformed, 5u) << folder;
  }
}

TEST_F(CorpusTest, RawDataRoundTripsAtEveryTableSize) {
  const std::vector<std::string> files = StoryFiles(root_ + "/raw-data");
  ASSERT_EQ(files.size(), 32u);
  std::vector<nlohmann::json> stories;
  for (const std::string& file : files) stories.push_back(ReadJson(file));
  HeaderList list;
  std::map<uint32_t, size_t> encoded_octets;
  for (uint32_t table_size : {0u, 256u, 4096u, 16384u}) {
    for (size_t s = 0; s < stories.size(); ++s) {
      SCOPED_TRACE(files[s] + " at table size " + std::to_string(table_size));
      Encoder::Options options;
      options.max_table_size = 16384;
      Encoder encoder(options);
      Decoder decoder;
      decoder.SetMaxTableSizeLimit(table_size);
      encoder.SetPeerMaxTableSize(table_size);
      for (const auto& c : stories[s].at("cases")) {
        const Fields fields = HeadersOf(c);
        const std::string_view block =
            encoder.EncodeBlock(ToHeaderFields(fields));
        encoded_octets[table_size] += block.size();
        const DecodeError e = decoder.Decode(block, &list);
        const DecodeError want = AnyValueBreaksRfc9113(fields)
                                     ? DecodeError::kInvalidFieldValue
                                     : DecodeError::kOk;
        ASSERT_EQ(e, want) << DecodeErrorName(e);
        ASSERT_EQ(ToFields(list), fields);
      }
      EXPECT_LE(decoder.table().max_size(), table_size);
      EXPECT_EQ(decoder.table().size(), encoder.table().size());
      EXPECT_EQ(decoder.table().num_entries(), encoder.table().num_entries());
    }
  }
  // Bigger tables compress better on this corpus.
  EXPECT_GT(encoded_octets[0], encoded_octets[256]);
  EXPECT_GT(encoded_octets[256], encoded_octets[4096]);
  EXPECT_GE(encoded_octets[4096], encoded_octets[16384]);
  for (const auto& [size, octets] : encoded_octets) {
    std::cout << "raw-data encoded at table size " << size << ": " << octets
              << " octets\n";
  }
}

}  // namespace
}  // namespace hpack
