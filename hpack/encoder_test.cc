#include "hpack/encoder.h"

#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "hpack/decoder.h"
#include "hpack/huffman/huffman.h"
#include "hpack/test_util.h"

namespace hpack {
namespace {

using testing::BytesToHex;
using testing::Fields;
using testing::HexToBytes;
using testing::ToFields;
using testing::ToHeaderFields;

const Fields& ChromeRequest() {
  static const auto* fields = new Fields{
      {":method", "GET"},
      {":scheme", "https"},
      {":authority", "www.example.com"},
      {":path",
       "/search?q=hpack+header+compression&oq=hpack&sourceid=chrome&ie=UTF-8"},
      {"user-agent",
       "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
       "Chrome/131.0.0.0 Safari/537.36"},
      {"accept",
       "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/"
       "webp,"
       "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"},
      {"accept-encoding", "gzip, deflate, br, zstd"},
      {"accept-language", "en-US,en;q=0.9"},
      {"cookie", std::string("session=") + std::string(92, 'c')}};
  return *fields;
}

const Fields& GrpcRequest() {
  static const auto* fields = new Fields{
      {":method", "POST"},
      {":scheme", "http"},
      {":path", "/helloworld.Greeter/SayHello"},
      {":authority", "localhost:50051"},
      {"content-type", "application/grpc"},
      {"te", "trailers"},
      {"grpc-accept-encoding", "identity,deflate,gzip"},
      {"user-agent", "grpc-c++/1.51.1 grpc-c/29.0.0 (linux; chttp2)"}};
  return *fields;
}

Encoder::Options Raw() {
  Encoder::Options options;
  options.use_huffman = false;
  return options;
}

// Decodes with a fresh-per-encoder decoder and checks the round trip.
class RoundTrip {
 public:
  explicit RoundTrip(const Encoder::Options& options = Encoder::Options())
      : encoder_(options) {}
  Encoder& encoder() { return encoder_; }
  Decoder& decoder() { return decoder_; }
  std::string Send(const Fields& fields) {
    const std::string block(encoder_.EncodeBlock(ToHeaderFields(fields)));
    HeaderList list;
    EXPECT_EQ(decoder_.Decode(block, &list), DecodeError::kOk);
    EXPECT_EQ(ToFields(list), fields);
    return block;
  }

 private:
  Encoder encoder_;
  Decoder decoder_;
};

TEST(EncoderTest, RepeatedChromeRequestIsAllIndexed) {
  RoundTrip rt;
  const std::string first = rt.Send(ChromeRequest());
  EXPECT_GT(first.size(), 200u);
  const std::string second = rt.Send(ChromeRequest());
  // :method GET and :scheme https from the static table, then the 7 fields of
  // the first request from the dynamic table, :authority oldest (62 + 6 = 68 ->
  // 0xc4).
  EXPECT_EQ(BytesToHex(second), "8287c4c3c2c1c0bfbe");
  EXPECT_LE(second.size(), 12u);
  EXPECT_EQ(rt.Send(ChromeRequest()), second);
}

// The first block that inserts reserves the table's storage for all its
// fields at once (one allocation, not doubling from 512 while it is encoded).
TEST(EncoderTest, FirstBlockReservesTheTableOnce) {
  RoundTrip rt;
  EXPECT_EQ(rt.encoder().table().capacity(), 0u);
  uint32_t octets = 0;
  for (const auto& [name, value] : ChromeRequest()) {
    octets += static_cast<uint32_t>(name.size() + value.size() + 32);
  }
  ASSERT_GT(octets, DynamicTable::kMinCapacity);  // Doubling: 1024.
  ASSERT_LT(octets, DynamicTable::kDefaultMaxSize);
  rt.Send(ChromeRequest());
  EXPECT_EQ(rt.encoder().table().capacity(), octets);
  // A fresh encoder whose first block has no fields allocates nothing.
  Encoder empty;
  empty.EncodeBlock({});
  EXPECT_EQ(empty.table().capacity(), 0u);
}

// The table is reserved at the first insertion: an encoder whose blocks hold
// only static matches, never-indexed fields, index_name_only fields with a
// static name and oversized ones allocates no table at all.
TEST(EncoderTest, BlocksThatCannotInsertAllocateNoTable) {
  RoundTrip rt;
  HeaderField secret{"x-secret", "s3cr3t"};
  for (int i = 0; i < 3; ++i) {
    rt.Send({{":method", "GET"},
             {":scheme", "https"},
             {":path", "/"},
             {"accept-encoding", "gzip, deflate"},
             {"authorization", "Basic dXNlcjpwYXNz"},
             {"cookie", "short=1"},
             {"x-huge", std::string(3100, 'h')}});
    EXPECT_EQ(rt.encoder().table().capacity(), 0u);
  }
  const HeaderField date{"date", "Wed, 02 Dec 2026 17:00:00 GMT", false, true};
  secret.sensitive = true;
  rt.encoder().EncodeBlock({secret, date});
  EXPECT_EQ(rt.encoder().table().capacity(), 0u);
  EXPECT_EQ(rt.encoder().table().num_entries(), 0u);
  // The first block that inserts reserves for its fields, not counting
  // sensitive ones.
  rt.encoder().EncodeBlock({secret, {"x-custom", std::string(600, 'v')}});
  EXPECT_EQ(rt.encoder().table().capacity(), 8u + 600 + 32);
}

TEST(EncoderTest, RepeatedGrpcRequestIsAllIndexed) {
  RoundTrip rt;
  rt.Send(GrpcRequest());
  const std::string second = rt.Send(GrpcRequest());
  EXPECT_EQ(BytesToHex(second), "8386c3c2c1c0bfbe");
}

TEST(EncoderTest, RepeatedPathIsIndexedEvenWhenOthersChange) {
  RoundTrip rt;
  rt.Send({{":path", "/a/b?c=d"}, {"x-request-id", "1"}});
  const std::string second =
      rt.Send({{":path", "/a/b?c=d"}, {"x-request-id", "2"}});
  EXPECT_EQ(static_cast<uint8_t>(second[0]), 0xbf);  // :path, now 63.
}

TEST(EncoderTest, AuthorizationIsNeverIndexed) {
  for (const char* name : {"authorization", "proxy-authorization"}) {
    RoundTrip rt;
    const Fields fields = {
        {name, "Bearer abcdefghijklmnopqrstuvwxyz0123456789"}};
    const std::string first = rt.Send(fields);
    EXPECT_EQ(static_cast<uint8_t>(first[0]) & 0xf0, 0x10)
        << name;  // Never indexed.
    EXPECT_EQ(rt.encoder().table().num_entries(), 0u);
    EXPECT_EQ(rt.Send(fields), first);  // And never becomes an index.
    HeaderList list;
    ASSERT_EQ(Decoder().Decode(first, &list), DecodeError::kOk);
    EXPECT_TRUE(list[0].sensitive);
  }
}

TEST(EncoderTest, ShortCookiesAreNeverIndexedLongOnesAre) {
  RoundTrip rt(Raw());
  const std::string short_cookie =
      rt.Send({{"cookie", "id=0123456789abcdef"}});  // 19
  // 0001 1111, 32 - 15 = 17: never indexed, name from static index 32.
  EXPECT_EQ(BytesToHex(short_cookie.substr(0, 2)), "1f11");
  EXPECT_EQ(rt.encoder().table().num_entries(), 0u);
  const std::string long_cookie =
      rt.Send({{"cookie", "id=0123456789abcdefg"}});  // 20
  EXPECT_EQ(static_cast<uint8_t>(long_cookie[0]),
            0x60);  // Incremental indexing, name 32.
  EXPECT_EQ(rt.encoder().table().num_entries(), 1u);
}

TEST(EncoderTest, CallerMarkedSensitiveFieldsAreNeverIndexed) {
  Encoder encoder(Raw());
  Decoder decoder;
  HeaderList list;
  // First indexed normally (x-token enters the table), then sent sensitive: the
  // name may come from the table (62 -> 0x1f 0x2f), the value may not.
  const HeaderField plain{"x-token", "a"};
  ASSERT_EQ(decoder.Decode(encoder.EncodeBlock(&plain, 1), &list),
            DecodeError::kOk);
  const HeaderField secret{"x-token", "b", true};
  const std::string block(encoder.EncodeBlock(&secret, 1));
  EXPECT_EQ(BytesToHex(block), "1f2f0162");
  ASSERT_EQ(decoder.Decode(block, &list), DecodeError::kOk);
  EXPECT_TRUE(list[0].sensitive);
  EXPECT_EQ(list[0].value, "b");
  EXPECT_EQ(encoder.table().num_entries(), 1u);
  // Even a field already in the table is sent as a literal when marked
  // sensitive.
  const HeaderField marked{"x-token", "a", true};
  EXPECT_EQ(BytesToHex(encoder.EncodeBlock(&marked, 1)), "1f2f0161");
  const HeaderField custom{"x-secret", "s", true};
  EXPECT_EQ(BytesToHex(encoder.EncodeBlock(&custom, 1)),
            "1008782d73656372657401"
            "73");
}

TEST(EncoderTest, IndexNameOnlyFieldsLeaveTheTableAlone) {
  Encoder encoder(Raw());
  Decoder decoder;
  HeaderList list;
  // The first grpc-timeout has no name index yet: indexed as usual (0x40),
  // after content-type's value.
  const HeaderField first[] = {{"content-type", "application/grpc"},
                               {"grpc-timeout", "1S", false, true}};
  ASSERT_EQ(decoder.Decode(encoder.EncodeBlock(first, 2), &list),
            DecodeError::kOk);
  ASSERT_EQ(encoder.table().num_entries(), 2u);
  ASSERT_EQ(decoder.table().num_entries(), 2u);
  const uint64_t version = encoder.table().version();
  for (const char* timeout : {"2S", "3S", "1S"}) {
    const HeaderField next[] = {{"content-type", "application/grpc"},
                                {"grpc-timeout", timeout, false, true}};
    const std::string block(encoder.EncodeBlock(next, 2));
    // content-type from the table (63, 0xbf); grpc-timeout without indexing
    // (0000), its name from entry 62 (0x0f 0x2f), a raw 2-octet value. Even
    // the value first sent ("1S") is in the table: an index (0xbe).
    EXPECT_EQ(BytesToHex(block), std::string(timeout) == "1S"
                                     ? "bfbe"
                                     : "bf0f2f02" + BytesToHex(timeout))
        << timeout;
    ASSERT_EQ(decoder.Decode(block, &list), DecodeError::kOk);
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[1].name, "grpc-timeout");
    EXPECT_EQ(list[1].value, timeout);
    EXPECT_FALSE(list[1].sensitive);
    EXPECT_EQ(encoder.table().version(), version);
    EXPECT_EQ(encoder.table().num_entries(), 2u);
    EXPECT_EQ(decoder.table().num_entries(), 2u);
  }
  // A static name (user-agent, 58) is never indexed with its value: 0x0f 0x2b.
  Encoder fresh(Raw());
  const HeaderField agent{"user-agent", "x", false, true};
  EXPECT_EQ(BytesToHex(fresh.EncodeBlock(&agent, 1)), "0f2b0178");
  EXPECT_EQ(fresh.table().num_entries(), 0u);
}

// encoder.h: an index_name_only field is compared with the newest dynamic
// entry of its name only: equal to an older one, it is a literal.
TEST(EncoderTest, AnIndexNameOnlyFieldEqualToAnOlderEntryIsALiteral) {
  Encoder encoder(Raw());
  const HeaderField one{"grpc-timeout", "1S"};
  const HeaderField two{"grpc-timeout", "2S"};
  encoder.EncodeBlock(&one, 1);
  encoder.EncodeBlock(&two, 1);  // 62: grpc-timeout: 2S, 63: grpc-timeout: 1S.
  ASSERT_EQ(encoder.table().num_entries(), 2u);
  const HeaderField again{"grpc-timeout", "1S", false, true};
  // Without indexing, the name from the newest entry (62), the value raw.
  EXPECT_EQ(BytesToHex(encoder.EncodeBlock(&again, 1)),
            "0f2f02" + BytesToHex("1S"));
  EXPECT_EQ(encoder.table().num_entries(), 2u);
  // Without the flag: entry 63.
  EXPECT_EQ(BytesToHex(encoder.EncodeBlock(&one, 1)), "bf");
}

TEST(EncoderTest, HuffmanOnlyWhenStrictlyShorter) {
  Encoder encoder;
  // "x-a" is 18 bits (3 octets) and "&&" 16 bits (2 octets) in Huffman: not
  // shorter, raw.
  EXPECT_EQ(BytesToHex(encoder.EncodeBlock({{"x-a", "&&"}})),
            "4003782d61022626");
  // "www.example.com": 12 Huffman octets against 15.
  EXPECT_EQ(BytesToHex(encoder.EncodeBlock({{"x-b", "www.example.com"}})),
            "4003782d628cf1e3c2e5f23a6ba0ab90f4ff");
  // One octet is never shorter in Huffman.
  EXPECT_EQ(BytesToHex(encoder.EncodeBlock({{"x-c", "0"}})), "4003782d630130");
  // Without Huffman at all.
  Encoder raw(Raw());
  EXPECT_EQ(BytesToHex(raw.EncodeBlock({{"x-b", "www.example.com"}})),
            "4003782d620f7777772e6578616d706c652e636f6d");
}

// Around the 7-bit length prefix's limit (127) the Huffman length may need
// fewer prefix octets than the raw one, and the encoded octets move down.
TEST(EncoderTest, LongStringsRoundTripAcrossPrefixLengths) {
  std::mt19937 rng(3);
  for (size_t len :
       {125u, 126u, 127u, 128u, 150u, 200u, 202u, 203u, 300u, 5000u, 20000u}) {
    for (int kind = 0; kind < 3; ++kind) {
      std::string value(len,
                        'a');  // 5-bit code: 200 -> 125 octets, 1-octet prefix.
      if (kind == 1) {
        // obs-text: long Huffman codes, so raw is shorter (and the value is
        // valid).
        for (char& c : value) c = static_cast<char>(0x80 + rng() % 128);
      } else if (kind == 2) {
        for (char& c : value) c = "0123456789"[rng() % 10];
      }
      Encoder::Options options;
      options.max_table_size = 65536;
      RoundTrip rt(options);
      const std::string block = rt.Send({{"x-long", value}});
      const size_t huffman = HuffmanEncodedLength(value);
      const size_t best = std::min(huffman, value.size());
      // First octet, literal name "x-long" (Huffman: 5 octets), then the value.
      ASSERT_EQ(HuffmanEncodedLength("x-long"), 5u);
      const size_t prefix = best < 127           ? 1
                            : best < 127 + 128   ? 2
                            : best < 127 + 16384 ? 3
                                                 : 4;
      EXPECT_EQ(block.size(), 1 + 1 + 5 + prefix + best) << len << " " << kind;
    }
  }
}

TEST(EncoderTest, TableSizeUpdateWhenPeerLimitChanges) {
  RoundTrip rt;
  rt.Send(GrpcRequest());
  // No change, no update.
  rt.encoder().SetPeerMaxTableSize(4096);
  EXPECT_EQ(BytesToHex(rt.Send(GrpcRequest())), "8386c3c2c1c0bfbe");
  // Shrink to 0: the block starts with the update, nothing is indexed any more.
  rt.decoder().SetMaxTableSizeLimit(0);
  rt.encoder().SetPeerMaxTableSize(0);
  const std::string block = rt.Send({{":method", "GET"}, {"x-a", "b"}});
  EXPECT_EQ(BytesToHex(block), "20820003782d610162");
  EXPECT_EQ(rt.encoder().table().max_size(), 0u);
  // The update is sent once.
  EXPECT_EQ(BytesToHex(rt.Send({{":method", "GET"}})), "82");
}

TEST(EncoderTest, ShrinkThenGrowSendsTheMinimumThenTheFinalSize) {
  RoundTrip rt;
  rt.Send(ChromeRequest());  // About 700 octets of entries.
  rt.decoder().SetMaxTableSizeLimit(100);
  rt.encoder().SetPeerMaxTableSize(100);
  rt.decoder().SetMaxTableSizeLimit(4096);
  rt.encoder().SetPeerMaxTableSize(4096);
  const std::string block = rt.Send({{":method", "GET"}});
  // 100 = 31 + 69 (0x45); 4096 = 31 + 4065 (0xe1 0x1f).
  EXPECT_EQ(BytesToHex(block), "3f453fe11f82");
  EXPECT_EQ(rt.encoder().table().num_entries(), 0u);  // 100 evicted them all.
  EXPECT_EQ(rt.encoder().table().max_size(), 4096u);
}

TEST(EncoderTest, PeerLimitIsCappedByOurMaximum) {
  Encoder::Options options;
  options.max_table_size = 16384;
  RoundTrip rt(options);
  rt.decoder().SetMaxTableSizeLimit(65536);
  rt.encoder().SetPeerMaxTableSize(65536);
  // 16384 = 31 + 16353 (0xe1 0x7f).
  EXPECT_EQ(BytesToHex(rt.Send({{":method", "GET"}})), "3fe17f82");
  EXPECT_EQ(rt.encoder().table().max_size(), 16384u);
}

TEST(EncoderTest, SmallerMaximumIsAnnouncedInTheFirstBlock) {
  Encoder::Options options;
  options.max_table_size = 1024;
  RoundTrip rt(options);
  EXPECT_EQ(BytesToHex(rt.Send({{":method", "GET"}})),
            "3fe10782");  // 1024 = 31 + 993.
  EXPECT_EQ(BytesToHex(rt.Send({{":method", "GET"}})), "82");
}

TEST(EncoderTest, HugeFieldsAreNotIndexed) {
  RoundTrip rt;
  rt.Send({{"x-small", "v"}});
  // 3100 + 7 + 32 > 3/4 of 4096: sent without indexing, and the table keeps its
  // entry.
  const std::string block = rt.Send({{"x-large", std::string(3100, '\x01')}});
  EXPECT_EQ(static_cast<uint8_t>(block[0]), 0x00);
  EXPECT_EQ(rt.encoder().table().num_entries(), 1u);
  // 2000 fits the 3/4 rule and is indexed.
  rt.Send({{"x-large", std::string(2000, '\x01')}});
  EXPECT_EQ(rt.encoder().table().num_entries(), 2u);
}

// The indexing policy (encoder.h): a name whose values never come back stops
// taking table slots after its first 16 literals, a value of it seen again is
// indexed on that second sighting, and the other names' entries survive.
TEST(EncoderTest, NamesWhoseValuesDoNotRepeatStopBeingIndexed) {
  RoundTrip rt(Raw());
  rt.Send({{"server", "kept"}});
  const DynamicTable& table = rt.encoder().table();
  for (int i = 0; i < 16; ++i) {
    rt.Send({{"x-request-id", "id-" + std::to_string(i)}});
  }
  EXPECT_EQ(table.num_entries(), 17u);  // The first 16 literals are indexed.
  // From the 17th fresh value on: literal without indexing, name indexed
  // (x-request-id's newest entry, 62 -> 0x0f 0x2f).
  const std::string fresh = rt.Send({{"x-request-id", "id-16"}});
  EXPECT_EQ(BytesToHex(fresh.substr(0, 2)), "0f2f");
  for (int i = 17; i < 200; ++i) {
    rt.Send({{"x-request-id", "id-" + std::to_string(i)}});
  }
  EXPECT_EQ(table.num_entries(), 17u);
  EXPECT_EQ(table.name(16), "server");  // Never evicted.
  // A value seen again while it would still have been in the table: indexed
  // now (literal with incremental indexing), an index the time after.
  const std::string again = rt.Send({{"x-request-id", "id-199"}});
  EXPECT_EQ(static_cast<uint8_t>(again[0]) & 0xc0, 0x40);
  EXPECT_EQ(rt.Send({{"x-request-id", "id-199"}}), "\xbe");
  // Names whose values repeat are indexed at first sight, as before.
  for (int i = 0; i < 40; ++i) {
    rt.Send({{"content-type", i % 2 ? "text/html" : "image/png"}});
  }
  const std::string third_type = rt.Send({{"content-type", "text/css"}});
  EXPECT_EQ(static_cast<uint8_t>(third_type[0]) & 0xc0, 0x40);
}

// The threshold itself, past a name's first 16 literals (all fresh): each
// `pairs` adds one fresh value (not indexed) and that value again at once (a
// repeat within reach, indexed), then one more fresh value is sent. Returns
// that value's first octet: 0x40 indexed, 0x00 not.
uint8_t FreshValueAfterRepeats(uint32_t table_size, int pairs) {
  Encoder::Options options = Raw();
  options.max_table_size = table_size;
  RoundTrip rt(options);
  rt.decoder().SetMaxTableSizeLimit(table_size);
  rt.encoder().SetPeerMaxTableSize(table_size);
  int next = 0;
  auto fresh = [&] {
    return Fields{{"x-request-id", "id-" + std::to_string(next++)}};
  };
  for (int i = 0; i < 16; ++i) rt.Send(fresh());
  for (int i = 0; i < pairs; ++i) {
    const Fields value = fresh();
    EXPECT_EQ(static_cast<uint8_t>(rt.Send(value)[0]) & 0xc0, 0x00) << i;
    EXPECT_EQ(static_cast<uint8_t>(rt.Send(value)[0]) & 0xc0, 0x40) << i;
  }
  return static_cast<uint8_t>(rt.Send(fresh())[0]) & 0xc0;
}

// At 4096: 4 repeats in 25 literals (16%) keep fresh values indexed, 3 in 23
// (13%) do not.
TEST(EncoderTest, FreshValuesAreIndexedFromFifteenPercentRepeats) {
  EXPECT_EQ(FreshValueAfterRepeats(4096, 4), 0x40);
  EXPECT_EQ(FreshValueAfterRepeats(4096, 3), 0x00);
}

// The threshold follows the table size: 16% is not enough below 512 octets
// (50% there), and is from 512 on.
TEST(EncoderTest, RepeatThresholdDependsOnTheTableSize) {
  EXPECT_EQ(FreshValueAfterRepeats(256, 4), 0x00);
  EXPECT_EQ(FreshValueAfterRepeats(511, 4), 0x00);
  EXPECT_EQ(FreshValueAfterRepeats(512, 4), 0x40);
  EXPECT_EQ(FreshValueAfterRepeats(16384, 4), 0x40);
  EXPECT_EQ(FreshValueAfterRepeats(16384, 3), 0x00);
}

// The repeat test's reach is capped at 256 KiB: in a 1 MiB table a value sent
// again after 300 KiB of insertions is fresh (uncapped, the 16-bit distance
// was always within a 1 MiB reach, so it was a repeat and indexed).
TEST(EncoderTest, RepeatReachIsCappedForHugeTables) {
  constexpr uint32_t kSize = 1 << 20;
  Encoder::Options options = Raw();
  options.max_table_size = kSize;
  RoundTrip rt(options);
  rt.decoder().SetMaxTableSizeLimit(kSize);
  rt.encoder().SetPeerMaxTableSize(kSize);
  for (int i = 0; i < 16; ++i) {
    rt.Send({{"x-request-id", "id-" + std::to_string(i)}});
  }
  const Fields value{{"x-request-id", "id-again"}};
  EXPECT_EQ(static_cast<uint8_t>(rt.Send(value)[0]) & 0xc0, 0x00);
  for (int i = 0; i < 10; ++i) {
    rt.Send({{"x-pad-" + std::to_string(i), std::string(30000, 'p')}});
  }
  EXPECT_EQ(rt.encoder().table().num_entries(), 26u);  // All indexed.
  EXPECT_EQ(static_cast<uint8_t>(rt.Send(value)[0]) & 0xc0, 0x00);
}

TEST(EncoderTest, NamesComeFromTheDynamicTableWhenNotStatic) {
  Encoder encoder(Raw());
  encoder.EncodeBlock({{"x-custom", "1"}});
  // 01 111110 (62): the name of the entry just added.
  EXPECT_EQ(BytesToHex(encoder.EncodeBlock({{"x-custom", "2"}})), "7e0132");
}

TEST(EncoderTest, AppendBlockAppendsAndChunksCoverTheBlock) {
  Encoder encoder;
  std::string out = "prefix";
  encoder.AppendBlock(ToHeaderFields(ChromeRequest()), &out);
  Encoder same;
  const std::string block(same.EncodeBlock(ToHeaderFields(ChromeRequest())));
  EXPECT_EQ(out, "prefix" + block);

  std::string_view rest = block;
  std::string joined;
  size_t chunks = 0;
  while (!rest.empty()) {
    const std::string_view chunk = Encoder::NextChunk(&rest, 100);
    EXPECT_LE(chunk.size(), 100u);
    EXPECT_FALSE(chunk.empty());
    EXPECT_EQ(chunk.data(),
              block.data() + joined.size());  // Views, not copies.
    joined.append(chunk.data(), chunk.size());
    ++chunks;
  }
  EXPECT_EQ(joined, block);
  EXPECT_EQ(chunks, (block.size() + 99) / 100);
}

TEST(EncoderTest, HeaderListAndVectorInputsEncodeTheSame) {
  HeaderList list;
  for (const auto& [name, value] : GrpcRequest()) list.Append(name, value);
  Encoder a;
  Encoder b;
  const std::vector<HeaderField> fields = ToHeaderFields(GrpcRequest());
  EXPECT_EQ(std::string(a.EncodeBlock(list)),
            std::string(b.EncodeBlock(fields)));
  EXPECT_EQ(std::string(a.EncodeBlock(list)),
            std::string(b.EncodeBlock(fields.data(), fields.size())));
}

// Random field lists with repeats, random table size changes: every block round
// trips.
TEST(EncoderTest, RandomRoundTrip) {
  std::mt19937 rng(11);
  Encoder::Options options;
  options.max_table_size = 8192;
  RoundTrip rt(options);
  for (int block = 0; block < 2000; ++block) {
    if (rng() % 50 == 0) {
      const uint32_t size = rng() % 3 == 0 ? 0 : rng() % 10000;
      rt.decoder().SetMaxTableSizeLimit(size);
      rt.encoder().SetPeerMaxTableSize(size);
    }
    Fields fields;
    const int n = rng() % 12;
    for (int i = 0; i < n; ++i) {
      std::string name = "x-" + std::to_string(rng() % 20);
      if (rng() % 4 == 0) name = ":path";
      if (rng() % 8 == 0) name = "cookie";
      std::string value(rng() % 5 == 0 ? rng() % 400 : rng() % 10, 'v');
      for (char& c : value) c = static_cast<char>(' ' + 1 + rng() % 94);
      fields.emplace_back(name, value);
    }
    rt.Send(fields);
    if (HasFailure()) break;
  }
}

}  // namespace
// The answer cache is a cache of the general lookup path: with it on and off,
// random sequences of blocks (repeats at the same and at shifted positions,
// sensitive repeats, evictions, table size changes, static full matches and
// near misses, values changed in place behind the same pointer and length)
// encode byte for byte the same, and decode back to the input.
TEST(EncoderTest, AnswerCacheEqualsTheGeneralPath) {
  std::mt19937 rng(3);
  const std::vector<std::string> names = {"a",          "x-b",
                                          ":path",      "cookie",
                                          "user-agent", ":method",
                                          ":scheme",    "accept-encoding",
                                          ":status",    "x-long-name-0123456"};
  // Static table values (RFC 7541 Appendix A) and near misses of them.
  const std::vector<std::string> static_values = {
      "GET",           "POST", "http", "https",
      "gzip, deflate", "200",  "304",  "/",
      "/index.html",   "GE",   "GETT", "POSU",
      "gzip, deflatf", "20",   ""};
  auto random_value = [&] {
    if (rng() % 3 == 0) return static_values[rng() % static_values.size()];
    return std::string(rng() % 40, static_cast<char>('a' + rng() % 3));
  };
  for (int run = 0; run < 300; ++run) {
    Encoder::Options on_options;
    on_options.max_table_size = 1 + rng() % 600;
    Encoder::Options off_options = on_options;
    off_options.cache_answers = false;
    Encoder on(on_options);
    Encoder off(off_options);
    Decoder decoder;
    std::vector<std::string> storage;
    std::vector<HeaderField> block;
    for (int b = 0; b < 30; ++b) {
      // Mostly the previous block again, with a few fields changed, moved or
      // marked sensitive or index-name-only.
      if (block.empty() || rng() % 4 == 0) {
        storage.clear();
        block.clear();
        const size_t n = 1 + rng() % 12;
        storage.reserve(2 * n);
        for (size_t k = 0; k < n; ++k) {
          storage.push_back(names[rng() % names.size()]);
          storage.push_back(random_value());
          block.push_back({storage[storage.size() - 2], storage.back(),
                           rng() % 10 == 0, rng() % 5 == 0});
        }
      } else {
        const int change = static_cast<int>(rng() % 5);
        if (change == 1) {
          std::swap(block[rng() % block.size()], block[rng() % block.size()]);
        } else if (change == 2) {
          HeaderField& f = block[rng() % block.size()];
          if (rng() % 2 == 0) {
            f.sensitive = !f.sensitive;
          } else {
            f.index_name_only = !f.index_name_only;
          }
        } else if (change == 3 && block.size() > 1) {
          block.erase(block.begin());
        } else if (change == 4) {
          // One octet of a value changes where it is (same pointer, same
          // length): only comparing the bytes tells.
          HeaderField& f = block[rng() % block.size()];
          if (!f.value.empty()) {
            const_cast<char*>(f.value.data())[rng() % f.value.size()] ^= 1;
          }
        }
      }
      if (rng() % 15 == 0) {
        const uint32_t size = rng() % 700;
        on.SetPeerMaxTableSize(size);
        off.SetPeerMaxTableSize(size);
      }
      const std::string a(on.EncodeBlock(block.data(), block.size()));
      const std::string c(off.EncodeBlock(block.data(), block.size()));
      ASSERT_EQ(testing::BytesToHex(a), testing::BytesToHex(c))
          << "run " << run << " block " << b;
      HeaderList list;
      ASSERT_EQ(decoder.Decode(a, &list), DecodeError::kOk);
      ASSERT_EQ(list.size(), block.size());
      for (size_t k = 0; k < block.size(); ++k) {
        ASSERT_EQ(list[k].name, block[k].name);
        ASSERT_EQ(list[k].value, block[k].value);
      }
    }
  }
}

// Past the cache's reach: blocks of more than 64 fields (positions 64 on are
// never cached), a table of more than 65 entries (answers for dynamic
// positions 65 on take two octets and are not cached), and a run of hits that
// does not fit the output buffer (a literal over twice the buffer grows it to
// just that field's bound, and the 63 static hits after it meet its end).
// Cache on and off, byte for byte the same.
TEST(EncoderTest, AnswerCacheEqualsTheGeneralPathPastItsReach) {
  const Fields static_fields = {{":method", "GET"},
                                {":scheme", "https"},
                                {":path", "/"},
                                {"accept-encoding", "gzip, deflate"},
                                {":status", "200"}};
  const std::vector<HeaderField> statics =
      testing::ToHeaderFields(static_fields);
  // 80 entries of 57 octets: at 4096 the table holds 71 and evicts.
  Fields custom_fields;
  for (int k = 0; k < 80; ++k) {
    custom_fields.emplace_back(
        "x-c" + std::to_string(k + 10),
        std::string(20, static_cast<char>('a' + k % 26)));
  }
  const std::vector<HeaderField> customs =
      testing::ToHeaderFields(custom_fields);
  for (const uint32_t table_size : {16384u, 4096u}) {
    for (const bool huffman : {false, true}) {
      Encoder::Options on_options;
      on_options.max_table_size = table_size;
      on_options.use_huffman = huffman;
      Encoder::Options off_options = on_options;
      off_options.cache_answers = false;
      Encoder on(on_options);
      Encoder off(off_options);
      on.SetPeerMaxTableSize(table_size);
      off.SetPeerMaxTableSize(table_size);
      Decoder decoder;
      decoder.SetMaxTableSizeLimit(table_size);
      decoder.set_max_header_list_size(size_t{1} << 30);
      size_t literal = 1000;
      for (int b = 0; b < 8; ++b) {
        // Over twice the buffer: the buffer grows to just this field's bound
        // (raw; Huffman codes 'u' shorter and leaves room after it).
        if (b % 4 == 1) literal *= 16;
        const std::string user_agent_value(literal, 'u');
        const HeaderField user_agent{"user-agent", user_agent_value, false,
                                     /*index_name_only=*/true};
        std::vector<HeaderField> block;
        const bool literal_first = b / 2 % 2 == 0;  // Two blocks each.
        if (literal_first) {
          // The literal (answer 0), then 63 cached static hits, then the
          // entries at positions 64 on.
          block.push_back(user_agent);
          for (int k = 0; k < 63; ++k) block.push_back(statics[k % 5]);
          block.insert(block.end(), customs.begin(), customs.end());
        } else {
          // The entries first: dynamic positions 79 down to 0 (at 16384) at
          // field positions 0..79, cached where both are below 65 and 64.
          block.insert(block.end(), customs.begin(), customs.end());
          block.push_back(user_agent);
          for (int k = 0; k < 63; ++k) block.push_back(statics[k % 5]);
        }
        const std::string a(on.EncodeBlock(block.data(), block.size()));
        const std::string c(off.EncodeBlock(block.data(), block.size()));
        ASSERT_EQ(testing::BytesToHex(a), testing::BytesToHex(c))
            << "table " << table_size << " huffman " << huffman << " block "
            << b;
        HeaderList list;
        ASSERT_EQ(decoder.Decode(a, &list), DecodeError::kOk);
        ASSERT_EQ(list.size(), block.size());
        for (size_t k = 0; k < block.size(); ++k) {
          ASSERT_EQ(list[k].name, block[k].name) << k;
          ASSERT_EQ(list[k].value, block[k].value) << k;
        }
        ASSERT_GT(on.table().num_entries(), 65u);
      }
    }
  }
}

// An Encoder neither copies nor moves: a member-wise move copied the answer
// cache's indeterminate entries and left the moved-from encoder its cache
// and capacity without a buffer (its next block stored through null).
static_assert(!std::is_copy_constructible_v<Encoder> &&
                  !std::is_copy_assignable_v<Encoder> &&
                  !std::is_move_constructible_v<Encoder> &&
                  !std::is_move_assignable_v<Encoder>,
              "Encoder must not be copied or moved");

}  // namespace hpack
