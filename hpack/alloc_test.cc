// Proves the steady-state claim: once warmed, encoding a repeated request and
// decoding it into a reused HeaderList perform no heap allocation at all.
//
// The global operator new/delete of this test binary count calls while
// `counting` is on.

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpack/decoder.h"
#include "hpack/encoder.h"

namespace {

std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* CountedAlloc(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) {
    allocations.fetch_add(1, std::memory_order_relaxed);
  }
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return CountedAlloc(size); }
void* operator new[](std::size_t size) { return CountedAlloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace hpack {
namespace {

// Counts allocations made by `fn`.
template <typename Fn>
long AllocationsDuring(Fn fn) {
  allocations = 0;
  counting = true;
  fn();
  counting = false;
  return allocations.load();
}

const std::vector<HeaderField>& ChromeRequest() {
  static const std::string* cookie =
      new std::string("session=" + std::string(92, 'c'));
  static const auto* fields = new std::vector<HeaderField>{
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
      {"cookie", *cookie}};
  return *fields;
}

const std::vector<HeaderField>& GrpcRequest() {
  static const auto* fields = new std::vector<HeaderField>{
      {":method", "POST"},
      {":scheme", "http"},
      {":path", "/helloworld.Greeter/SayHello"},
      {":authority", "localhost:50051"},
      {"content-type", "application/grpc"},
      {"te", "trailers"},
      {"grpc-accept-encoding", "identity,deflate,gzip"},
      {"user-agent", "grpc-c++/1.51.1 grpc-c/29.0.0 (linux; chttp2)"},
      {"authorization",
       "Bearer 0123456789abcdef"}};  // Never indexed: a literal each time.
  return *fields;
}

void ExpectSteadyStateAllocatesNothing(
    const std::vector<HeaderField>& request) {
  Encoder encoder;
  Decoder decoder;
  HeaderList list;
  std::string wire;
  // Warm up: the first block fills the tables, the second reaches the steady
  // state.
  for (int i = 0; i < 2; ++i) {
    wire.clear();
    encoder.AppendBlock(request, &wire);
    ASSERT_EQ(decoder.Decode(wire, &list), DecodeError::kOk);
  }
  size_t octets = 0;
  DecodeError error = DecodeError::kOk;
  const long n = AllocationsDuring([&] {
    for (int i = 0; i < 100; ++i) {
      wire.clear();
      encoder.AppendBlock(request, &wire);
      octets += wire.size();
      const std::string_view view = encoder.EncodeBlock(request);
      octets += view.size();
      if (decoder.Decode(wire, &list) != DecodeError::kOk)
        error = DecodeError::kTruncated;
      if (decoder.Decode(view, &list) != DecodeError::kOk)
        error = DecodeError::kTruncated;
    }
  });
  EXPECT_EQ(n, 0);
  EXPECT_EQ(error, DecodeError::kOk);
  ASSERT_EQ(list.size(), request.size());
  for (size_t i = 0; i < request.size(); ++i) {
    EXPECT_EQ(list[i].name, request[i].name);
    EXPECT_EQ(list[i].value, request[i].value);
  }
  EXPECT_GT(octets, 0u);
}

TEST(AllocTest, CounterSeesAllocations) {
  // The counter works: a fresh encoder and list do allocate.
  const long n = AllocationsDuring([] {
    Encoder encoder;
    Decoder decoder;
    HeaderList list;
    (void)decoder.Decode(encoder.EncodeBlock(ChromeRequest()), &list);
  });
  EXPECT_GT(n, 0);
}

// Allocations made by a fresh `decoder` decoding `wire` (which must decode
// without error) into `list`, whose storage another decoder grows first.
long ColdDecodeAllocations(const std::string& wire, Decoder* decoder,
                           HeaderList* list) {
  {
    Decoder warm;
    EXPECT_EQ(warm.Decode(wire, list), DecodeError::kOk);
  }
  DecodeError error = DecodeError::kTruncated;
  const long n =
      AllocationsDuring([&] { error = decoder->Decode(wire, list); });
  EXPECT_EQ(error, DecodeError::kOk);
  return n;
}

// A fresh decoder sizes its table for the whole block at its first insert: one
// allocation (the byte ring and the record ring share it), not one per
// doubling from 512 octets (this request's entries total more than 512).
TEST(AllocTest, ColdDecodeAllocatesTheTableOnce) {
  Encoder encoder;
  const std::string wire(encoder.EncodeBlock(ChromeRequest()));
  HeaderList list;
  Decoder decoder;
  const long n = ColdDecodeAllocations(wire, &decoder, &list);
  EXPECT_GT(decoder.table().size(), DynamicTable::kMinCapacity);
  EXPECT_EQ(n, 1);
}

// A first indexed field larger than the table is not inserted (RFC 7541
// section 4.4), so it must not make a fresh decoder allocate its table either.
TEST(AllocTest, ColdDecodeOfAnOversizedEntryAllocatesNothing) {
  // Literal with incremental indexing, new name "x", a raw 5000-octet value
  // (length 127 + 4873: 0x7f 0x89 0x26): 5033 octets > 4096.
  std::string wire = "\x40\x01x\x7f\x89\x26";
  wire.append(5000, 'v');
  HeaderList list;
  Decoder decoder;
  const long n = ColdDecodeAllocations(wire, &decoder, &list);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].value.size(), 5000u);
  EXPECT_EQ(decoder.table().num_entries(), 0u);
  EXPECT_EQ(decoder.table().capacity(), 0u);
  EXPECT_EQ(n, 0);
}

TEST(AllocTest, ChromeRequestSteadyStateAllocatesNothing) {
  ExpectSteadyStateAllocatesNothing(ChromeRequest());
}

TEST(AllocTest, GrpcRequestSteadyStateAllocatesNothing) {
  ExpectSteadyStateAllocatesNothing(GrpcRequest());
}

// Churn in steady state: new values every block (literals inserted, old entries
// evicted) still allocate nothing once the buffers have grown.
TEST(AllocTest, ChangingValuesAllocateNothingOnceGrown) {
  Encoder encoder;
  Decoder decoder;
  HeaderList list;
  std::vector<std::string> ids;
  for (int i = 0; i < 1000; ++i)
    ids.push_back("request-" + std::to_string(i * 7919));
  auto one = [&](int i) {
    const HeaderField fields[] = {
        {":method", "POST"},
        {":path", "/helloworld.Greeter/SayHello"},
        {"x-request-id", ids[i % ids.size()]},
        {"x-payload", std::string_view(ids[(i * 31) % ids.size()])}};
    return decoder.Decode(encoder.EncodeBlock(fields, 4), &list) ==
           DecodeError::kOk;
  };
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(one(i));
  bool ok = true;
  const long n = AllocationsDuring([&] {
    for (int i = 2000; i < 4000; ++i) ok = one(i) && ok;
  });
  EXPECT_TRUE(ok);
  EXPECT_EQ(n, 0);
}

}  // namespace
}  // namespace hpack
