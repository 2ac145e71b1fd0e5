// RFC 7541 Appendix C, example by example: the decoder must produce the listed
// header lists and dynamic tables (entries newest first, and sizes), and the
// encoder, whose strategy (index everything that is not sensitive, Huffman when
// shorter) is the one the examples use, must produce the listed octets.

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/test_util.h"
#include "hpack/varint.h"

namespace hpack {
namespace {

using testing::BytesToHex;
using testing::Fields;
using testing::HexToBytes;
using testing::ToFields;
using testing::ToHeaderFields;

Fields TableOf(const DynamicTable& table) {
  Fields out;
  for (size_t i = 0; i < table.num_entries(); ++i) {
    out.emplace_back(std::string(table.name(i)), std::string(table.value(i)));
  }
  return out;
}

struct Step {
  const char* wire;
  Fields headers;
  Fields table;  // Newest first.
  uint32_t table_size;
  // What our encoder sends when its strategy differs from the example's; null:
  // `wire`.
  const char* our_wire = nullptr;
};

void DecodeSteps(Decoder* decoder, const std::vector<Step>& steps) {
  HeaderList list;
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE("block " + std::to_string(i + 1));
    ASSERT_EQ(decoder->Decode(HexToBytes(steps[i].wire), &list),
              DecodeError::kOk);
    EXPECT_EQ(ToFields(list), steps[i].headers);
    EXPECT_EQ(TableOf(decoder->table()), steps[i].table);
    EXPECT_EQ(decoder->table().size(), steps[i].table_size);
  }
}

// `strip_prefix`: octets the encoder must emit before the RFC's bytes (its
// table size announcement, when the example assumes a table size agreed out of
// band).
void EncodeSteps(Encoder* encoder, const std::vector<Step>& steps,
                 const std::string& strip_prefix = "") {
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE("block " + std::to_string(i + 1));
    std::string block(encoder->EncodeBlock(ToHeaderFields(steps[i].headers)));
    if (i == 0 && !strip_prefix.empty()) {
      ASSERT_EQ(BytesToHex(block.substr(0, strip_prefix.size() / 2)),
                strip_prefix);
      block.erase(0, strip_prefix.size() / 2);
    }
    const char* expected =
        steps[i].our_wire ? steps[i].our_wire : steps[i].wire;
    EXPECT_EQ(BytesToHex(block), BytesToHex(HexToBytes(expected)));
    EXPECT_EQ(TableOf(encoder->table()), steps[i].table);
    EXPECT_EQ(encoder->table().size(), steps[i].table_size);
  }
}

Encoder::Options EncoderOptions(uint32_t table_size, bool huffman) {
  Encoder::Options options;
  options.max_table_size = table_size;
  options.use_huffman = huffman;
  return options;
}

Decoder::Options DecoderOptions(uint32_t table_size) {
  Decoder::Options options;
  options.max_table_size = table_size;
  return options;
}

// C.1: integer representation.
TEST(Rfc7541AppendixC, C1_1_Integer10With5BitPrefix) {
  uint8_t out[kMaxVarintEncodedLength];
  ASSERT_EQ(EncodeVarint(10, 5, 0, out), 1u);
  EXPECT_EQ(out[0], 0x0a);
}

TEST(Rfc7541AppendixC, C1_2_Integer1337With5BitPrefix) {
  uint8_t out[kMaxVarintEncodedLength];
  ASSERT_EQ(EncodeVarint(1337, 5, 0, out), 3u);
  EXPECT_EQ(BytesToHex(std::string(reinterpret_cast<char*>(out), 3)), "1f9a0a");
  const uint8_t* p = out;
  uint32_t v = 0;
  ASSERT_EQ(DecodeVarint(5, &p, out + 3, &v), VarintStatus::kOk);
  EXPECT_EQ(v, 1337u);
}

TEST(Rfc7541AppendixC, C1_3_Integer42AtOctetBoundary) {
  uint8_t out[kMaxVarintEncodedLength];
  ASSERT_EQ(EncodeVarint(42, 8, 0, out), 1u);
  EXPECT_EQ(out[0], 0x2a);
}

// C.2: header field representations, each from an empty table.
const Step kC21 = {
    "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
    {{"custom-key", "custom-header"}},
    {{"custom-key", "custom-header"}},
    55};

TEST(Rfc7541AppendixC, C2_1_LiteralWithIndexing) {
  Decoder decoder;
  DecodeSteps(&decoder, {kC21});
  Encoder encoder(EncoderOptions(4096, false));
  EncodeSteps(&encoder, {kC21});
}

TEST(Rfc7541AppendixC, C2_2_LiteralWithoutIndexing) {
  Decoder decoder;
  DecodeSteps(&decoder, {{"040c 2f73 616d 706c 652f 7061 7468",
                          {{":path", "/sample/path"}},
                          {},
                          0}});
  // (Our encoder indexes this field instead: a different, valid choice.)
}

TEST(Rfc7541AppendixC, C2_3_LiteralNeverIndexed) {
  const char* wire = "1008 7061 7373 776f 7264 0673 6563 7265 74";
  Decoder decoder;
  DecodeSteps(&decoder, {{wire, {{"password", "secret"}}, {}, 0}});
  HeaderList list;
  Decoder fresh;
  ASSERT_EQ(fresh.Decode(HexToBytes(wire), &list), DecodeError::kOk);
  EXPECT_TRUE(list[0].sensitive);

  Encoder encoder(EncoderOptions(4096, false));
  const HeaderField field{"password", "secret", /*sensitive=*/true};
  EXPECT_EQ(BytesToHex(encoder.EncodeBlock(&field, 1)),
            BytesToHex(HexToBytes(wire)));
  EXPECT_EQ(encoder.table().num_entries(), 0u);
}

TEST(Rfc7541AppendixC, C2_4_IndexedField) {
  const Step step = {"82", {{":method", "GET"}}, {}, 0};
  Decoder decoder;
  DecodeSteps(&decoder, {step});
  Encoder encoder;
  EncodeSteps(&encoder, {step});
}

// C.3 / C.4: three requests on one connection, without and with Huffman coding.
const Fields kRequest1 = {{":method", "GET"},
                          {":scheme", "http"},
                          {":path", "/"},
                          {":authority", "www.example.com"}};
const Fields kRequest2 = {{":method", "GET"},
                          {":scheme", "http"},
                          {":path", "/"},
                          {":authority", "www.example.com"},
                          {"cache-control", "no-cache"}};
const Fields kRequest3 = {{":method", "GET"},
                          {":scheme", "https"},
                          {":path", "/index.html"},
                          {":authority", "www.example.com"},
                          {"custom-key", "custom-value"}};
const Fields kTable1 = {{":authority", "www.example.com"}};
const Fields kTable2 = {{"cache-control", "no-cache"},
                        {":authority", "www.example.com"}};
const Fields kTable3 = {{"custom-key", "custom-value"},
                        {"cache-control", "no-cache"},
                        {":authority", "www.example.com"}};

const std::vector<Step>& C3() {
  static const auto* steps = new std::vector<Step>{
      {"8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", kRequest1, kTable1,
       57},
      {"8286 84be 5808 6e6f 2d63 6163 6865", kRequest2, kTable2, 110},
      {"8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 "
       "65",
       kRequest3, kTable3, 164}};
  return *steps;
}

const std::vector<Step>& C4() {
  static const auto* steps = new std::vector<Step>{
      {"8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", kRequest1, kTable1, 57},
      {"8286 84be 5886 a8eb 1064 9cbf", kRequest2, kTable2, 110},
      {"8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf", kRequest3,
       kTable3, 164}};
  return *steps;
}

TEST(Rfc7541AppendixC, C3_RequestsWithoutHuffman) {
  Decoder decoder;
  DecodeSteps(&decoder, C3());
}

TEST(Rfc7541AppendixC, C3_EncoderReproducesRequestsWithoutHuffman) {
  Encoder encoder(EncoderOptions(4096, false));
  EncodeSteps(&encoder, C3());
}

TEST(Rfc7541AppendixC, C4_RequestsWithHuffman) {
  Decoder decoder;
  DecodeSteps(&decoder, C4());
}

TEST(Rfc7541AppendixC, C4_EncoderReproducesRequestsWithHuffman) {
  Encoder encoder;
  EncodeSteps(&encoder, C4());
}

// C.5 / C.6: three responses with a 256-octet table, so entries get evicted.
const Fields kResponse1 = {{":status", "302"},
                           {"cache-control", "private"},
                           {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                           {"location", "https://www.example.com"}};
const Fields kResponse2 = {{":status", "307"},
                           {"cache-control", "private"},
                           {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                           {"location", "https://www.example.com"}};
const Fields kResponse3 = {
    {":status", "200"},
    {"cache-control", "private"},
    {"date", "Mon, 21 Oct 2013 20:13:22 GMT"},
    {"location", "https://www.example.com"},
    {"content-encoding", "gzip"},
    {"set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"}};
const Fields kRespTable1 = {{"location", "https://www.example.com"},
                            {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                            {"cache-control", "private"},
                            {":status", "302"}};
const Fields kRespTable2 = {{":status", "307"},
                            {"location", "https://www.example.com"},
                            {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                            {"cache-control", "private"}};
const Fields kRespTable3 = {
    {"set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"},
    {"content-encoding", "gzip"},
    {"date", "Mon, 21 Oct 2013 20:13:22 GMT"}};

const std::vector<Step>& C5() {
  static const auto* steps = new std::vector<Step>{
      {"4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 "
       "3230 3133"
       " 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 "
       "7861 6d70"
       " 6c65 2e63 6f6d",
       kResponse1, kRespTable1, 222},
      {"4803 3330 37c1 c0bf", kResponse2, kRespTable2, 222},
      {"88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 "
       "3220 474d"
       " 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 "
       "454f 5049"
       " 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 "
       "7369 6f6e"
       " 3d31",
       kResponse3, kRespTable3, 215}};
  return *steps;
}

const std::vector<Step>& C6() {
  static const auto* steps = new std::vector<Step>{
      {"4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 "
       "66e0 82a6"
       " 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
       kResponse1, kRespTable1, 222},
      // "307" Huffman-codes to 3 octets, no shorter than raw: the example uses
      // Huffman anyway, we send it raw (and the rest of the block is the same).
      {"4883 640e ffc1 c0bf", kResponse2, kRespTable2, 222,
       "4803 3330 37c1 c0bf"},
      {"88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a "
       "839b d9ab"
       " 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 "
       "0fb5 291f"
       " 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
       kResponse3, kRespTable3, 215}};
  return *steps;
}

// The examples assume both ends agreed on 256 out of band; our encoder starts
// from the protocol's 4096 and so first announces 256 (001 11111 + 225):
// "3fe101".
constexpr char kAnnounce256[] = "3fe101";

TEST(Rfc7541AppendixC, C5_ResponsesWithoutHuffman) {
  Decoder decoder(DecoderOptions(256));
  DecodeSteps(&decoder, C5());
}

TEST(Rfc7541AppendixC, C5_EncoderReproducesResponsesWithoutHuffman) {
  Encoder encoder(EncoderOptions(256, false));
  EncodeSteps(&encoder, C5(), kAnnounce256);
}

TEST(Rfc7541AppendixC, C6_ResponsesWithHuffman) {
  Decoder decoder(DecoderOptions(256));
  DecodeSteps(&decoder, C6());
}

TEST(Rfc7541AppendixC, C6_EncoderReproducesResponsesWithHuffman) {
  Encoder encoder(EncoderOptions(256, true));
  EncodeSteps(&encoder, C6(), kAnnounce256);
}

// The announcement itself is what a 4096-default decoder needs to reach 256.
TEST(Rfc7541AppendixC, C6_AnnouncedTableSizeDecodesFromDefault) {
  Encoder encoder(EncoderOptions(256, true));
  Decoder decoder;  // Limit 4096: 256 is allowed.
  HeaderList list;
  for (const Step& step : C6()) {
    ASSERT_EQ(decoder.Decode(encoder.EncodeBlock(ToHeaderFields(step.headers)),
                             &list),
              DecodeError::kOk);
    EXPECT_EQ(ToFields(list), step.headers);
    EXPECT_EQ(TableOf(decoder.table()), step.table);
  }
  EXPECT_EQ(decoder.table().max_size(), 256u);
}

}  // namespace
}  // namespace hpack
