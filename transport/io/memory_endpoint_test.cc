#include "transport/io/memory_endpoint.h"

#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "transport/io/event_loop.h"

namespace transport {
namespace {

std::string ReadAll(Endpoint& e, IoOutcome* last) {
  std::string out;
  *last = e.ReadSome(&out, 1 << 20).outcome;
  return out;
}

TEST(MemoryEndpointTest, PairCarriesBytesBothWaysAndRecordsThem) {
  auto loop = EventLoop::CreateWithManualClock();
  ASSERT_TRUE(loop.ok());
  auto [a, b] = MemoryEndpoint::CreatePair(loop->get());
  int b_readable = 0;
  b->SetCallbacks([&] { ++b_readable; }, nullptr);
  ASSERT_TRUE(a->Write("hello ").ok());
  const std::string_view parts[] = {"wor", "ld"};
  ASSERT_EQ(a->Writev(parts).bytes, 5u);
  // Not from inside the writer's call: at the end of the loop iteration.
  EXPECT_EQ(b_readable, 0);
  (*loop)->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(b_readable, 1);
  IoOutcome last;
  EXPECT_EQ(ReadAll(*b, &last), "hello world");
  EXPECT_EQ(last, IoOutcome::kWouldBlock);
  EXPECT_EQ(a->written(), "hello world");
  EXPECT_EQ(a->peer_address().ToString(), b->local_address().ToString());

  a->ShutdownWrite();
  EXPECT_FALSE(a->Write("late").ok());
  (*loop)->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(b_readable, 2);
  EXPECT_EQ(ReadAll(*b, &last), "");
  EXPECT_EQ(last, IoOutcome::kEof);
  // The other direction still works until b closes.
  ASSERT_TRUE(b->Write("bye").ok());
  b.reset();
  EXPECT_EQ(ReadAll(*a, &last), "bye");
  EXPECT_EQ(last, IoOutcome::kEof);
}

TEST(MemoryEndpointTest, LoneEndpointIsFedByTheTest) {
  auto loop = EventLoop::CreateWithManualClock();
  ASSERT_TRUE(loop.ok());
  auto e = MemoryEndpoint::Create(loop->get());
  int readable = 0;
  e->SetCallbacks([&] { ++readable; }, nullptr);
  e->Deliver("abc");
  e->Deliver("def");
  e->DeliverEof();
  e->Deliver("ignored");
  (*loop)->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(readable, 1);  // One notification per iteration.
  IoOutcome last;
  EXPECT_EQ(ReadAll(*e, &last), "abcdef");
  EXPECT_EQ(last, IoOutcome::kEof);
  ASSERT_TRUE(e->Write("out").ok());
  EXPECT_EQ(e->TakeWritten(), "out");
  EXPECT_EQ(e->written(), "");
  e->Close();
  EXPECT_TRUE(e->closed());
  EXPECT_FALSE(e->Write("x").ok());
  // A notification still pending after Close or destruction does nothing.
  e->Deliver("x");
  e.reset();
  (*loop)->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(readable, 1);
}

TEST(MemoryEndpointTest, WriteCapacityGivesShortWritesAndOnWritable) {
  auto loop = EventLoop::CreateWithManualClock();
  ASSERT_TRUE(loop.ok());
  auto e = MemoryEndpoint::Create(loop->get());
  int writable = 0;
  e->SetCallbacks(nullptr, [&] { ++writable; });
  e->set_write_capacity(4);
  const std::string_view parts[] = {"ab", "cdef"};
  EXPECT_EQ(e->Writev(parts).bytes, 4u);
  EXPECT_EQ(e->Write("gh").bytes, 0u);
  (*loop)->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(writable, 0);  // No room yet.
  EXPECT_EQ(e->TakeWritten(), "abcd");
  (*loop)->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(writable, 1);
  EXPECT_EQ(e->Write("efgh").bytes, 4u);

  // A pair counts what the peer has not read.
  auto [a, b] = MemoryEndpoint::CreatePair(loop->get());
  int a_writable = 0;
  a->SetCallbacks(nullptr, [&] { ++a_writable; });
  a->set_write_capacity(3);
  EXPECT_EQ(a->Write("12345").bytes, 3u);
  char buf[2];
  ASSERT_EQ(b->Read(absl::Span<char>(buf, 2)).bytes, 2u);
  (*loop)->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(a_writable, 1);
  EXPECT_EQ(a->Write("45").bytes, 2u);
}

}  // namespace
}  // namespace transport
