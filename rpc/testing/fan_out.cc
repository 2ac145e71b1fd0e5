#include "rpc/testing/fan_out.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "rpc/internal/channel_impl.h"
#include "rpc/internal/proto_utils.h"

namespace rpc {
namespace testing {

void HandlerGate::Enter() {
  absl::MutexLock lock(&mu_);
  ++started_;
  max_active_ = std::max(max_active_, ++active_);
  cv_.SignalAll();
}

void HandlerGate::Leave() {
  absl::MutexLock lock(&mu_);
  --active_;
}

void HandlerGate::Hold() {
  released_.WaitForNotificationWithTimeout(absl::Seconds(30));
}

void HandlerGate::Release() {
  if (!released_.HasBeenNotified()) released_.Notify();
}

bool HandlerGate::WaitStarted(int n) {
  absl::MutexLock lock(&mu_);
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (started_ < n) {
    if (cv_.WaitWithDeadline(&mu_, give_up)) return started_ >= n;
  }
  return true;
}

int HandlerGate::started() {
  absl::MutexLock lock(&mu_);
  return started_;
}

int HandlerGate::max_active() {
  absl::MutexLock lock(&mu_);
  return max_active_;
}

std::unique_ptr<StreamCall> StartServerStream(Channel* channel,
                                              const test::EchoRequest& req,
                                              absl::Time deadline) {
  auto c = std::make_unique<StreamCall>();
  c->call = internal::ChannelAccess::Impl(channel)->CreateCall(
      "/rpc.test.EchoService/ServerStream", deadline, Metadata());
  StreamCall* raw = c.get();
  c->call->SetOnDone([raw] { raw->done.Notify(); });
  transport::SliceBuffer first;
  internal::Serialize(req, &first);
  c->call->Start(&first, /*end=*/true);
  return c;
}

bool WaitCallsStarted(Channel* channel) {
  std::unique_ptr<StreamCall> marker = StartServerStream(
      channel, test::EchoRequest(), absl::Now() - absl::Seconds(1));
  return marker->done.WaitForNotificationWithTimeout(absl::Seconds(30));
}

int CountSucceeded(const std::vector<std::unique_ptr<StreamCall>>& calls,
                   int messages, std::string* first_error) {
  int ok = 0;
  for (const auto& c : calls) {
    if (!c->done.WaitForNotificationWithTimeout(absl::Seconds(60))) {
      if (first_error->empty()) *first_error = "a call did not end";
      continue;
    }
    int received = 0;
    transport::SliceBuffer payload;
    while (c->call->Read(&payload)) ++received;
    Status s = c->call->Finish(nullptr, nullptr);
    if (s.ok() && received == messages) {
      ++ok;
    } else if (first_error->empty()) {
      *first_error = absl::StrCat(s.error_code(), " ", s.error_message(), " (",
                                  received, " messages)");
    }
  }
  return ok;
}

}  // namespace testing
}  // namespace rpc
