// ConnectionDriver on a loop run by an EventLoopThread, with an endpoint
// whose writes fail on demand; and on a manual-clock loop over a
// MemoryEndpoint the test feeds, counting writes (no timing). Every wait is
// bounded.

#include "transport/driver/connection_driver.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "transport/connection/connection.h"
#include "transport/frame/frame.h"
#include "transport/io/endpoint.h"
#include "transport/io/event_loop.h"
#include "transport/io/memory_endpoint.h"

namespace transport {
namespace {

constexpr absl::Duration kWait = absl::Seconds(10);

// Writes succeed until fail_writes; reads find nothing.
class FakeEndpoint final : public Endpoint {
 public:
  explicit FakeEndpoint(EventLoop* loop) : loop_(loop) {}
  EventLoop* loop() const override { return loop_; }
  const SocketAddress& peer_address() const override { return address_; }
  const SocketAddress& local_address() const override { return address_; }
  IoResult Read(absl::Span<char>) override { return IoResult::WouldBlock(); }
  IoResult Writev(absl::Span<const std::string_view> buffers) override {
    if (fail_writes) return IoResult::Error(absl::UnavailableError("EPIPE"));
    size_t n = 0;
    for (std::string_view b : buffers) n += b.size();
    return IoResult::Ok(n);
  }
  void ShutdownWrite() override {}
  void Close() override {}

  std::atomic<bool> fail_writes{false};

 private:
  EventLoop* const loop_;
  SocketAddress address_;
};

class NullListener final : public ConnectionListener {
 public:
  void OnHeaders(uint32_t, const hpack::HeaderList&, bool) override {}
  void OnTrailers(uint32_t, const hpack::HeaderList&) override {}
  void OnData(uint32_t, Slice) override {}
  void OnEndStream(uint32_t) override {}
  void OnStreamReset(uint32_t, Http2ErrorCode, bool) override {}
};

class RecordingOwner final : public ConnectionDriver::Owner {
 public:
  void OnDriverClosed(const absl::Status&) override {
    closed_on = std::this_thread::get_id();
    closed.Notify();
  }
  std::thread::id closed_on;
  absl::Notification closed;
};

TEST(ConnectionDriverTest, AWriteErrorFoundInlineIsHandledOnTheLoopThread) {
  // An inline runner (a blocking caller, maybe holding a user lock) whose
  // flush fails must not close the connection itself: closing completes
  // every call of the connection (OnDriverClosed, user callbacks).
  auto t = EventLoopThread::Start("test-loop");
  ASSERT_TRUE(t.ok()) << t.status();
  EventLoop* loop = (*t)->loop();
  NullListener listener;
  RecordingOwner owner;
  std::unique_ptr<ConnectionDriver> driver;
  FakeEndpoint* endpoint = nullptr;
  absl::Notification started;
  loop->Post([&] {
    auto e = std::make_unique<FakeEndpoint>(loop);
    endpoint = e.get();
    ConnectionOptions options;
    options.role = Role::kClient;
    driver = std::make_unique<ConnectionDriver>(std::move(e), options,
                                                &listener, &owner);
    driver->Start();
    started.Notify();
  });
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(kWait));
  // Until a try runs inline (the loop sleeps): a ping whose flush fails.
  std::atomic<bool> ran_inline{false};
  const absl::Time give_up = absl::Now() + kWait;
  while (!ran_inline.load() && absl::Now() < give_up) {
    loop->RunInlineOrPost([&] {
      if (!EventLoop::RunningInline() || ran_inline.load()) return;
      ran_inline = true;
      endpoint->fail_writes = true;
      driver->connection().SendPing(7);
      driver->ScheduleFlush();
    });
    if (!ran_inline.load()) absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_TRUE(ran_inline.load()) << "the loop never slept";
  ASSERT_TRUE(owner.closed.WaitForNotificationWithTimeout(kWait));
  EXPECT_NE(owner.closed_on, std::this_thread::get_id());
  absl::Notification destroyed;
  loop->Post([&] {
    EXPECT_TRUE(driver->closed());
    driver.reset();
    destroyed.Notify();
  });
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(kWait));
}

// ---- Steps: max_stream_ends_per_receive ----

// A server listener that answers every request as soon as it ended (as a
// callback handler does, inside Receive) and records how many writes the
// driver had made by then.
class AnsweringListener final : public ConnectionListener {
 public:
  void OnHeaders(uint32_t id, const hpack::HeaderList&, bool end) override {
    if (end) Answer(id);
  }
  void OnTrailers(uint32_t, const hpack::HeaderList&) override {}
  void OnData(uint32_t, Slice) override {}
  void OnEndStream(uint32_t id) override { Answer(id); }
  void OnStreamReset(uint32_t, Http2ErrorCode, bool) override {}
  void OnConnectionError(const ConnectionError& e) override {
    errors.push_back(e.DebugData());
  }

  ConnectionDriver* driver = nullptr;
  // writev_calls() when each request was answered, in order.
  std::vector<uint64_t> writes_at_answer;
  std::vector<std::string> errors;
  // Runs after each answer (the test's peer acting meanwhile).
  std::function<void()> after_answer;

 private:
  void Answer(uint32_t id) {
    writes_at_answer.push_back(driver->writev_calls());
    const hpack::HeaderField status[] = {{":status", "200"}};
    EXPECT_TRUE(driver->connection().SubmitHeaders(id, status, true).ok());
    if (after_answer) after_answer();
  }
};

// Frames in `bytes` (a server's output: no preface) with END_STREAM: the
// answers written.
size_t CountEnds(std::string_view bytes) {
  size_t ends = 0;
  size_t pos = 0;
  while (pos + kFrameHeaderSize <= bytes.size()) {
    const FrameHeader h =
        ParseFrameHeader(reinterpret_cast<const uint8_t*>(bytes.data() + pos));
    pos += kFrameHeaderSize + h.length;
    if (h.has_flags(kFlagEndStream) &&
        (h.is(FrameType::kHeaders) || h.is(FrameType::kData))) {
      ++ends;
    }
  }
  return ends;
}

// How many answers each step (the answers made before the same write)
// holds, in order.
std::vector<size_t> StepSizes(const std::vector<uint64_t>& writes_at_answer) {
  std::map<uint64_t, size_t> steps;
  for (uint64_t w : writes_at_answer) ++steps[w];
  std::vector<size_t> sizes;
  for (const auto& [w, n] : steps) sizes.push_back(n);
  return sizes;
}

class NullOwner final : public ConnectionDriver::Owner {
 public:
  void OnDriverClosed(const absl::Status&) override {}
};

// What a client sends: preface, SETTINGS, then `requests` unary requests
// (HEADERS with END_STREAM), from a client-role Connection.
std::string ClientBytes(int requests) {
  NullListener listener;
  ConnectionOptions options;
  options.role = Role::kClient;
  Connection client(options, &listener, 0);
  const hpack::HeaderField headers[] = {{":method", "POST"},
                                        {":scheme", "http"},
                                        {":path", "/echo.Echo/Unary"},
                                        {":authority", "localhost"}};
  for (int i = 0; i < requests; ++i) {
    EXPECT_TRUE(client.SubmitRequest(headers, true, nullptr).ok());
  }
  SliceBuffer out;
  client.TakeOutput(&out);
  return out.ToString();
}

class DriverStepTest : public ::testing::Test {
 protected:
  void Start(size_t max_stream_ends_per_receive,
             size_t write_capacity = SIZE_MAX) {
    MakeLoop();
    auto endpoint = MemoryEndpoint::Create(loop_.get());
    endpoint_ = endpoint.get();
    endpoint_->set_write_capacity(write_capacity);
    StartDriver(std::move(endpoint), max_stream_ends_per_receive);
  }
  void MakeLoop() {
    auto loop = EventLoop::CreateWithManualClock();
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = std::move(*loop);
  }
  // A server driver over `endpoint` (on loop_), answering every request;
  // runs until the loop is idle.
  void StartDriver(std::unique_ptr<Endpoint> endpoint,
                   size_t max_stream_ends_per_receive) {
    DriverOptions options;
    options.max_stream_ends_per_receive = max_stream_ends_per_receive;
    driver_ = std::make_unique<ConnectionDriver>(
        std::move(endpoint), ConnectionOptions(), &listener_, &owner_, options);
    listener_.driver = driver_.get();
    driver_->Start();
    RunIdle();
  }
  // Runs iterations until one does nothing (bounded).
  void RunIdle() {
    for (int i = 0; i < 1000; ++i) {
      if (loop_->RunOnce(absl::ZeroDuration()) == 0) return;
    }
    ADD_FAILURE() << "the loop never went idle";
  }

  AnsweringListener listener_;
  NullOwner owner_;
  std::unique_ptr<EventLoop> loop_;
  MemoryEndpoint* endpoint_ = nullptr;
  std::unique_ptr<ConnectionDriver> driver_;
};

TEST_F(DriverStepTest, ABatchIsAnsweredInStepsEachWrittenBeforeTheNext) {
  // 32 requests arrive in one read. With steps of 8 the first 8 answers are
  // written before the 9th request is even received: the peer starts on
  // them while this side works on the rest. Without steps all 32 answers
  // were produced before the first write.
  Start(8);
  const std::string bytes = ClientBytes(32);
  endpoint_->Deliver(bytes);
  RunIdle();
  ASSERT_TRUE(listener_.errors.empty()) << listener_.errors[0];
  ASSERT_EQ(listener_.writes_at_answer.size(), 32u);
  const uint64_t first = listener_.writes_at_answer[0];
  for (size_t i = 0; i < 32; ++i) {
    // One write per step of 8 answers (its frames in one Writev).
    EXPECT_EQ(listener_.writes_at_answer[i], first + i / 8) << "request " << i;
  }
  EXPECT_EQ(driver_->writev_calls(), first + 4);
  EXPECT_EQ(endpoint_->unread(), 0u);
}

TEST_F(DriverStepTest, WithoutStepsTheWholeBatchPrecedesItsOneWrite) {
  // The default (0): one Receive per read, one write per batch (what the
  // HTTP layer keeps).
  Start(0);
  endpoint_->Deliver(ClientBytes(32));
  RunIdle();
  ASSERT_EQ(listener_.writes_at_answer.size(), 32u);
  EXPECT_EQ(listener_.writes_at_answer[31], listener_.writes_at_answer[0]);
  EXPECT_EQ(driver_->writev_calls(), listener_.writes_at_answer[0] + 1);
}

TEST_F(DriverStepTest, OneCallInFlightStillCostsOneWritePerCall) {
  // A request per read never reaches the bound: no extra step, no extra
  // write (sequential calls keep one write each).
  Start(8);
  const std::string bytes = ClientBytes(5);
  // Where request i ends: the same encoder state makes the same octets.
  std::vector<size_t> ends;
  for (int i = 0; i <= 5; ++i) ends.push_back(ClientBytes(i).size());
  endpoint_->Deliver(bytes.substr(0, ends[0]));
  RunIdle();
  const uint64_t before = driver_->writev_calls();
  for (size_t i = 0; i < 5; ++i) {
    endpoint_->Deliver(bytes.substr(ends[i], ends[i + 1] - ends[i]));
    RunIdle();
    EXPECT_EQ(driver_->writev_calls(), before + i + 1) << "request " << i;
  }
  EXPECT_EQ(listener_.writes_at_answer.size(), 5u);
}

TEST_F(DriverStepTest, ABlockedWriteDoesNotHoldInputBack) {
  // Steps wait for the flush only while writes go out. Blocked (the peer
  // reads nothing, maybe because it is blocked writing to us: both sides'
  // buffers full), all input is received: two peers that each waited for
  // their write before receiving more would wait forever (64 KiB streams
  // both ways stalled so). Here the write blocks in the middle of the
  // batch: the first step's answers (and the SETTINGS ack, 89 octets) fit
  // in 100 octets, the second's do not; the step after that short write
  // takes the rest at once, without waiting for on_writable.
  Start(8);
  endpoint_->TakeWritten();  // The preface.
  endpoint_->set_write_capacity(100);
  endpoint_->Deliver(ClientBytes(32));
  RunIdle();
  ASSERT_EQ(listener_.writes_at_answer.size(), 32u);
  EXPECT_EQ(endpoint_->unread(), 0u);
  const uint64_t first = listener_.writes_at_answer[0];
  for (size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(listener_.writes_at_answer[i], first + std::min<size_t>(i / 8, 2))
        << "request " << i;
  }
  // Then the writes go on as the peer takes them.
  for (int i = 0; i < 1000 && driver_->connection().WantsWrite(); ++i) {
    endpoint_->TakeWritten();
    RunIdle();
  }
  EXPECT_FALSE(driver_->connection().WantsWrite());
}

TEST_F(DriverStepTest, StepsFollowFramesSplitAnywhere) {
  // The steps cut the input at frame boundaries the driver tracks across
  // reads (the preface, headers and payloads split between them): fed in
  // pieces of 1 to 13 octets (at most one request ends in a piece: one step
  // per read) and of 40 to 200 (several: steps of at most 3), every request
  // is answered, none twice, and the connection sees no error.
  std::vector<size_t> pieces;
  for (size_t piece = 1; piece <= 13; ++piece) pieces.push_back(piece);
  for (size_t piece = 40; piece <= 200; piece += 8) pieces.push_back(piece);
  for (size_t piece : pieces) {
    listener_.writes_at_answer.clear();
    listener_.errors.clear();
    Start(3);
    const std::string bytes = ClientBytes(40);
    for (size_t pos = 0; pos < bytes.size(); pos += piece) {
      endpoint_->Deliver(bytes.substr(pos, piece));
      RunIdle();
    }
    EXPECT_TRUE(listener_.errors.empty()) << "piece " << piece;
    EXPECT_EQ(listener_.writes_at_answer.size(), 40u) << "piece " << piece;
    EXPECT_EQ(driver_->connection().num_active_streams(), 0u);
    const std::vector<size_t> steps = StepSizes(listener_.writes_at_answer);
    size_t full = 0;
    for (size_t n : steps) {
      EXPECT_LE(n, 3u) << "piece " << piece;
      if (n == 3) ++full;
    }
    if (piece <= 13) {
      EXPECT_EQ(full, 0u) << "piece " << piece;
    } else {
      // Pieces hold more than 3 requests (after the first, about 10 octets
      // each): the bound is reached.
      EXPECT_GT(full, 0u) << "piece " << piece;
    }
    driver_.reset();
  }
}

TEST_F(DriverStepTest, AnEofAfterABatchStillGetsItsAnswers) {
  // A client that half-closes after its requests still reads the answers.
  // Here the EOF is read while steps still hold 24 of the 32 requests: they
  // are received at once, and their answers written before the streams are
  // reset (answering each read at once, that took one write before the EOF
  // was read).
  Start(8);
  endpoint_->TakeWritten();  // The preface.
  endpoint_->Deliver(ClientBytes(32));
  loop_->RunOnce(absl::ZeroDuration());  // The first step and its write.
  ASSERT_EQ(listener_.writes_at_answer.size(), 8u);
  ASSERT_EQ(CountEnds(endpoint_->written()), 8u);
  endpoint_->DeliverEof();
  RunIdle();
  EXPECT_TRUE(driver_->closed());
  EXPECT_EQ(listener_.writes_at_answer.size(), 32u);
  EXPECT_EQ(CountEnds(endpoint_->written()), 32u);
}

TEST_F(DriverStepTest, AnEofInTheSameReadStillGetsItsAnswers) {
  // The requests and the EOF in one read: all of it is received and the
  // answers written before closing.
  Start(8);
  endpoint_->TakeWritten();
  endpoint_->Deliver(ClientBytes(32));
  endpoint_->DeliverEof();
  RunIdle();
  EXPECT_TRUE(driver_->closed());
  EXPECT_EQ(listener_.writes_at_answer.size(), 32u);
  EXPECT_EQ(CountEnds(endpoint_->written()), 32u);
}

TEST_F(DriverStepTest, InputReadBeforeAFullStepsFlushWaitsForIt) {
  // The first step ends exactly at the 8th request (nothing is left); more
  // requests read before that step's flush are the next step's, after its
  // write: the 9th answer follows the first write.
  Start(8);
  std::vector<size_t> ends;
  for (int i = 0; i <= 16; ++i) ends.push_back(ClientBytes(i).size());
  const std::string bytes = ClientBytes(16);
  listener_.after_answer = [&] {
    if (listener_.writes_at_answer.size() != 8) return;
    // Its on_readable runs before the flush (deferred after it).
    endpoint_->Deliver(bytes.substr(ends[8]));
  };
  endpoint_->Deliver(bytes.substr(0, ends[8]));
  RunIdle();
  ASSERT_EQ(listener_.writes_at_answer.size(), 16u);
  EXPECT_EQ(listener_.writes_at_answer[8], listener_.writes_at_answer[7] + 1);
  EXPECT_EQ(StepSizes(listener_.writes_at_answer), (std::vector<size_t>{8, 8}));
}

// Who finds the peer's reset first.
enum class ResetFoundBy { kRead, kWrite };

// Reads return `input`, then the peer's reset: at once (kRead), or (kWrite)
// only once a write found it (after fail_writes; until then reads would
// block), as TcpEndpoint's reads do after a write error. Writes take
// everything until fail_writes.
class ResetEndpoint final : public Endpoint {
 public:
  ResetEndpoint(EventLoop* loop, std::string input,
                ResetFoundBy found_by = ResetFoundBy::kRead)
      : loop_(loop), input_(std::move(input)), found_by_(found_by) {}
  EventLoop* loop() const override { return loop_; }
  const SocketAddress& peer_address() const override { return address_; }
  const SocketAddress& local_address() const override { return address_; }
  IoResult Read(absl::Span<char> buffer) override {
    if (input_.empty()) {
      return found_by_ == ResetFoundBy::kRead || write_failed_
                 ? IoResult::Error(absl::UnavailableError("RST"))
                 : IoResult::WouldBlock();
    }
    const size_t n = std::min(buffer.size(), input_.size());
    input_.copy(buffer.data(), n);
    input_.erase(0, n);
    return IoResult::Ok(n);
  }
  IoResult Writev(absl::Span<const std::string_view> buffers) override {
    if (fail_writes) {
      write_failed_ = true;
      return IoResult::Error(absl::UnavailableError("RST"));
    }
    size_t n = 0;
    for (std::string_view b : buffers) n += b.size();
    ++writes_ok;
    return IoResult::Ok(n);
  }
  void ShutdownWrite() override {}
  void Close() override {}
  // More input, after `input` (no readable callback: read when asked).
  void Deliver(std::string_view bytes) { input_.append(bytes); }

  bool fail_writes = false;
  int writes_ok = 0;

 private:
  EventLoop* const loop_;
  std::string input_;
  const ResetFoundBy found_by_;
  bool write_failed_ = false;
  SocketAddress address_;
};

// The driver (steps of 8) over a ResetEndpoint.
class ConnectionDriverResetTest : public DriverStepTest {
 protected:
  void SetUp() override { MakeLoop(); }
  void Run(std::unique_ptr<ResetEndpoint> endpoint) {
    reset_endpoint_ = endpoint.get();
    StartDriver(std::move(endpoint), 8);
  }

  ResetEndpoint* reset_endpoint_ = nullptr;
};

TEST_F(ConnectionDriverResetTest, InputReadBeforeAResetIsReceivedWhole) {
  // Requests read in the same event as a connection reset are all received,
  // the steps' held ones too, as when every read was received at once: what
  // the endpoint returned is data the peer sent (on a client, a response
  // that came just before a reset completes its call). Nothing is written
  // after the reset.
  Run(std::make_unique<ResetEndpoint>(loop_.get(), ClientBytes(32)));
  EXPECT_TRUE(driver_->closed());
  EXPECT_EQ(driver_->close_reason().message(), "RST");
  ASSERT_EQ(listener_.writes_at_answer.size(), 32u);
  EXPECT_EQ(listener_.writes_at_answer.back(), listener_.writes_at_answer[0]);
}

TEST_F(ConnectionDriverResetTest, InputBeforeAResetFoundByAWriteIsReceived) {
  // The peer sends 32 requests and resets the connection; the first step's
  // flush is the first to learn it (its write fails). Of the 24 requests
  // read, the steps still hold 16; the last 8 are still in the endpoint
  // (they came after that read). All are received, as when a read finds the
  // reset (and as before steps): a call whose request came whole runs (on a
  // client: a response that came just before the reset completes its
  // call). Nothing is written after the failed write. (The 24 were dropped:
  // a callback server never started calls of a client that went away, rpc's
  // ConnectionGoneWithLiveReactorsEndsEachOnce.)
  const std::string bytes = ClientBytes(32);
  // The same encoder state makes the same octets: the first 24 requests.
  const size_t first = ClientBytes(24).size();
  listener_.after_answer = [&] {
    if (listener_.writes_at_answer.size() != 8) return;
    reset_endpoint_->Deliver(bytes.substr(first));
    reset_endpoint_->fail_writes = true;
  };
  Run(std::make_unique<ResetEndpoint>(loop_.get(), bytes.substr(0, first),
                                      ResetFoundBy::kWrite));
  EXPECT_TRUE(driver_->closed());
  EXPECT_EQ(driver_->close_reason().message(), "RST");
  EXPECT_EQ(listener_.writes_at_answer.size(), 32u);
  EXPECT_EQ(reset_endpoint_->writes_ok, 0);
}

// `bytes` (ClientBytes) with its first request's HEADERS split into HEADERS
// (END_STREAM, without END_HEADERS) and a CONTINUATION (END_HEADERS).
std::string WithContinuation(const std::string& bytes) {
  size_t pos = kClientPreface.size();
  for (;;) {
    const FrameHeader h =
        ParseFrameHeader(reinterpret_cast<const uint8_t*>(bytes.data() + pos));
    if (!h.is(FrameType::kHeaders)) {
      pos += kFrameHeaderSize + h.length;
      continue;
    }
    EXPECT_EQ(h.flags, kFlagEndStream | kFlagEndHeaders);
    const size_t first = h.length / 2;
    auto header = [&](uint32_t length, FrameType type, uint8_t flags) {
      uint8_t octets[kFrameHeaderSize];
      FrameHeader f;
      f.length = length;
      f.type = static_cast<uint8_t>(type);
      f.flags = flags;
      f.stream_id = h.stream_id;
      SerializeFrameHeader(f, octets);
      return std::string(reinterpret_cast<char*>(octets), kFrameHeaderSize);
    };
    const size_t payload = pos + kFrameHeaderSize;
    return bytes.substr(0, pos) +
           header(first, FrameType::kHeaders, kFlagEndStream) +
           bytes.substr(payload, first) +
           header(h.length - first, FrameType::kContinuation, kFlagEndHeaders) +
           bytes.substr(payload + first);
  }
}

TEST_F(DriverStepTest, AStreamEndsAtTheEndOfItsHeaderBlock) {
  // HEADERS with END_STREAM ends its stream at the END_HEADERS of its
  // CONTINUATION: a step of one request takes both frames (then the
  // request is answered, alone, before the next step).
  Start(1);
  endpoint_->Deliver(WithContinuation(ClientBytes(3)));
  RunIdle();
  ASSERT_TRUE(listener_.errors.empty()) << listener_.errors[0];
  ASSERT_EQ(listener_.writes_at_answer.size(), 3u);
  EXPECT_EQ(StepSizes(listener_.writes_at_answer),
            (std::vector<size_t>{1, 1, 1}));
}

}  // namespace
}  // namespace transport
