#include "hpack/tool/ratio.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/header_list.h"
#include "hpack/tool/story.h"

namespace hpack {
namespace tool {
namespace {

// RFC 7541 C.4.1's request.
const std::vector<Field> kRequest = {{":method", "GET"},
                                     {":scheme", "http"},
                                     {":path", "/"},
                                     {":authority", "www.example.com"}};
// RFC 7541 C.6.1's response.
const std::vector<Field> kResponse = {{":status", "302"},
                                      {"cache-control", "private"},
                                      {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                                      {"location", "https://www.example.com"}};

TEST(Http1TextTest, RequestLineHostAndFields) {
  Message m{true, kRequest};
  m.fields.push_back({"user-agent", "x"});
  EXPECT_EQ(Http1Text(m),
            "GET / HTTP/1.1\r\n"
            "Host: www.example.com\r\n"
            "user-agent: x\r\n"
            "\r\n");
}

TEST(Http1TextTest, StatusLineWithReasonPhrase) {
  EXPECT_EQ(Http1Text(Message{false, kResponse}),
            "HTTP/1.1 302 Found\r\n"
            "cache-control: private\r\n"
            "date: Mon, 21 Oct 2013 20:13:21 GMT\r\n"
            "location: https://www.example.com\r\n"
            "\r\n");
  EXPECT_EQ(Http1Text(Message{false, {{":status", "299"}}}),
            "HTTP/1.1 299 \r\n\r\n");
}

TEST(ConversationFromStoryTest, DirectionFromContextOrPseudoHeaders) {
  Story story;
  story.cases.resize(2);
  story.cases[0].headers = kRequest;
  story.cases[1].headers = kResponse;
  Conversation c = ConversationFromStory(story, "s");
  EXPECT_TRUE(c.messages[0].is_request);
  EXPECT_FALSE(c.messages[1].is_request);
  story.context = "response";
  c = ConversationFromStory(story, "s");
  EXPECT_FALSE(c.messages[0].is_request);
}

TEST(ComputeRatiosTest, TwoRequestsExactNumbers) {
  // Block 1 (RFC C.4.1): 82 86 84 41 8c f1e3c2e5f23a6ba0ab90f4ff = 17 octets.
  // Block 2: 82 86 84 be = 4 octets. HTTP/1.1: "GET / HTTP/1.1\r\n" (16) +
  // "Host: www.example.com\r\n" (23) + "\r\n" (2) = 41 octets each.
  const std::vector<Conversation> conversations = {
      {"two", {Message{true, kRequest}, Message{true, kRequest}}}};
  std::vector<RatioRow> rows;
  std::string error;
  ASSERT_TRUE(ComputeRatios(conversations, {4096}, &rows, &error)) << error;
  ASSERT_EQ(rows.size(), 1u);
  const RatioRow& r = rows[0];
  EXPECT_EQ(r.table_size, 4096u);
  EXPECT_TRUE(r.requests);
  EXPECT_EQ(r.messages, 2u);
  EXPECT_EQ(r.encoded_octets, 21u);
  EXPECT_EQ(r.http1_octets, 82u);
  EXPECT_DOUBLE_EQ(r.ratio, 21.0 / 82);
  EXPECT_DOUBLE_EQ(r.min, 4.0 / 41);
  EXPECT_DOUBLE_EQ(r.max, 17.0 / 41);
  EXPECT_DOUBLE_EQ(r.mean, 21.0 / 82);
  EXPECT_NEAR(r.stddev, 13.0 / 82,
              1e-12);  // Population: half the spread of two values.
}

TEST(ComputeRatiosTest, TableSizesAndDirections) {
  const std::vector<Conversation> conversations = {
      {"requests", {Message{true, kRequest}, Message{true, kRequest}}},
      {"responses", {Message{false, kResponse}}}};
  std::vector<RatioRow> rows;
  std::string error;
  ASSERT_TRUE(ComputeRatios(conversations, {256, 4096}, &rows, &error))
      << error;
  ASSERT_EQ(rows.size(), 4u);
  // 256: the first block starts with the size update 3f e1 01.
  EXPECT_EQ(rows[0].table_size, 256u);
  EXPECT_TRUE(rows[0].requests);
  EXPECT_EQ(rows[0].encoded_octets, 24u);
  EXPECT_FALSE(rows[1].requests);
  EXPECT_EQ(rows[1].encoded_octets, 3u + 54u);
  // 4096: RFC C.6.1's 54 octets (every field indexed, Huffman where shorter).
  EXPECT_EQ(rows[2].encoded_octets, 21u);
  EXPECT_EQ(rows[3].encoded_octets, 54u);
  EXPECT_EQ(rows[3].http1_octets, 118u);
  EXPECT_EQ(rows[3].messages, 1u);
  EXPECT_DOUBLE_EQ(rows[3].stddev, 0);

  const std::string table = FormatRatioTable(rows);
  EXPECT_NE(table.find("requests: 2 messages, 82 octets as HTTP/1.1\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("responses: 1 messages, 118 octets as HTTP/1.1\n"),
            std::string::npos);
  EXPECT_NE(table.find("      4096              21   0.256   0.098   0.415   "
                       "0.256    0.159\n"),
            std::string::npos)
      << table;
}

TEST(ComputeRatiosTest, StoryWireColumnAt4096Only) {
  Story story;
  story.cases.resize(2);
  story.cases[0].headers = kRequest;
  story.cases[1].headers = kRequest;
  story.cases[0].has_wire = story.cases[1].has_wire = true;
  story.cases[0].wire = std::string(20, 'x');
  story.cases[1].wire = std::string(5, 'x');
  const Conversation c = ConversationFromStory(story, "s");
  EXPECT_EQ(c.messages[0].story_wire_octets, 20);
  std::vector<RatioRow> rows;
  std::string error;
  ASSERT_TRUE(ComputeRatios({c}, {256, 4096}, &rows, &error)) << error;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].has_story_wire);
  EXPECT_TRUE(rows[1].has_story_wire);
  EXPECT_EQ(rows[1].story_wire_octets, 25u);
  const std::string table = FormatRatioTable(rows);
  EXPECT_NE(table.find("std dev    story wire\n"), std::string::npos) << table;
  EXPECT_NE(table.find("0.195             -\n"), std::string::npos) << table;
  EXPECT_NE(table.find("0.159            25\n"), std::string::npos) << table;

  // A story that changes the table size, or lacks a wire, has none.
  story.cases[1].header_table_size = 256;
  EXPECT_EQ(ConversationFromStory(story, "s").messages[0].story_wire_octets,
            -1);
  story.cases[1].header_table_size.reset();
  story.cases[1].has_wire = false;
  EXPECT_EQ(ConversationFromStory(story, "s").messages[0].story_wire_octets,
            -1);
}

// A peer whose blocks are our encoder's with every string raw (no Huffman),
// so its octets are known, and whose decoder is ours.
class RawEncoder : public PeerEncoder {
 public:
  explicit RawEncoder(uint32_t table_size) : encoder_(Options(table_size)) {
    encoder_.SetPeerMaxTableSize(table_size);
  }
  bool Encode(const std::vector<Field>& fields, std::string* block) override {
    std::vector<HeaderField> hf;
    for (const Field& f : fields) hf.push_back(HeaderField{f.first, f.second});
    *block = std::string(encoder_.EncodeBlock(hf.data(), hf.size()));
    return true;
  }

 private:
  static Encoder::Options Options(uint32_t table_size) {
    Encoder::Options o;
    o.max_table_size = table_size;
    o.use_huffman = false;
    return o;
  }
  Encoder encoder_;
};

class OurDecoder : public PeerDecoder {
 public:
  explicit OurDecoder(uint32_t table_size) {
    decoder_.SetMaxTableSizeLimit(table_size);
  }
  bool Decode(std::string_view block, std::vector<Field>* fields) override {
    HeaderList list;
    if (decoder_.Decode(block, &list) != DecodeError::kOk) return false;
    fields->clear();
    for (const HeaderField f : list) {
      fields->emplace_back(std::string(f.name), std::string(f.value));
    }
    return true;
  }
  Decoder decoder_;
};

TEST(ComputeRatiosTest, PeerColumns) {
  Peer peer;
  peer.name = "raw";
  peer.description = "raw strings";
  peer.make_encoder = [](uint32_t size) {
    return std::unique_ptr<PeerEncoder>(new RawEncoder(size));
  };
  peer.make_decoder = [](uint32_t size) {
    return std::unique_ptr<PeerDecoder>(new OurDecoder(size));
  };
  const std::vector<Conversation> conversations = {
      {"two", {Message{true, kRequest}, Message{true, kRequest}}}};
  std::vector<RatioRow> rows;
  std::string error;
  ASSERT_TRUE(ComputeRatios(conversations, {4096}, &rows, &error, &peer))
      << error;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].has_peer);
  // RFC 7541 C.3.1 + C.3.2 without Huffman: 20 + 4 octets; ours 17 + 4.
  EXPECT_EQ(rows[0].peer_octets, 24u);
  EXPECT_EQ(rows[0].encoded_octets, 21u);
  const std::string table = FormatRatioTable(rows);
  EXPECT_NE(table.find("std dev      raw octets      vs raw\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("0.159              24       0.875\n"),
            std::string::npos)
      << table;
}

// A peer that cannot decode our blocks fails the computation.
TEST(ComputeRatiosTest, PeerThatCannotDecodeOursIsAnError) {
  class Refuses : public PeerDecoder {
   public:
    bool Decode(std::string_view, std::vector<Field>*) override {
      return false;
    }
  };
  Peer peer;
  peer.name = "refuses";
  peer.make_encoder = [](uint32_t size) {
    return std::unique_ptr<PeerEncoder>(new RawEncoder(size));
  };
  peer.make_decoder = [](uint32_t) {
    return std::unique_ptr<PeerDecoder>(new Refuses);
  };
  std::vector<RatioRow> rows;
  std::string error;
  EXPECT_FALSE(ComputeRatios({{"one", {Message{true, kRequest}}}}, {4096},
                             &rows, &error, &peer));
  EXPECT_NE(error.find("refuses does not decode our block"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace tool
}  // namespace hpack
