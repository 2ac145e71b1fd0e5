#include "transport/http/blocking_http2_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "hpack/header_list.h"

namespace transport {

namespace {

std::vector<std::pair<std::string, std::string>> ToPairs(
    const hpack::HeaderList& list) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(list.size());
  for (const hpack::HeaderField& f : list) {
    out.emplace_back(std::string(f.name), std::string(f.value));
  }
  return out;
}

FetchedResponse Copy(const Http2Response& r) {
  FetchedResponse out;
  out.status = r.status;
  out.headers = ToPairs(r.headers);
  out.body = r.body.ToString();
  out.trailers = ToPairs(r.trailers);
  out.error = r.error;
  return out;
}

// Responses of one FetchAll, filled on the loop thread, read by the caller.
struct Batch {
  absl::Mutex mu;
  std::vector<FetchedResponse> responses ABSL_GUARDED_BY(mu);
  size_t remaining ABSL_GUARDED_BY(mu) = 0;
  absl::Notification done;
};

}  // namespace

std::string FetchedResponse::Header(const std::string& name) const {
  for (const auto& h : headers) {
    if (h.first == name) return h.second;
  }
  return std::string();
}

absl::StatusOr<std::unique_ptr<BlockingHttp2Client>>
BlockingHttp2Client::Connect(const SocketAddress& address,
                             const Http2ClientOptions& options) {
  absl::StatusOr<std::unique_ptr<EventLoopThread>> thread =
      EventLoopThread::Start("h2-client");
  if (!thread.ok()) return thread.status();
  std::unique_ptr<BlockingHttp2Client> self(new BlockingHttp2Client());
  self->thread_ = *std::move(thread);
  EventLoop* loop = self->thread_->loop();
  absl::Status status;
  absl::Notification connected;
  BlockingHttp2Client* raw = self.get();
  loop->Post([&, loop, raw] {
    Http2Client::Connect(
        loop, address, options,
        [&, raw](absl::StatusOr<std::unique_ptr<Http2Client>> client) {
          if (client.ok()) {
            raw->client_ = *std::move(client);
          } else {
            status = client.status();
          }
          connected.Notify();
        });
  });
  connected.WaitForNotification();
  if (!status.ok()) return status;
  return self;
}

BlockingHttp2Client::~BlockingHttp2Client() {
  if (thread_ == nullptr) return;
  absl::Notification done;
  thread_->loop()->Post([this, &done] {
    client_.reset();
    done.Notify();
  });
  done.WaitForNotification();
  thread_.reset();
}

void BlockingHttp2Client::RunInLoop(absl::AnyInvocable<void(Http2Client*)> fn) {
  absl::Notification done;
  thread_->loop()->Post([this, &fn, &done] {
    fn(client_.get());
    done.Notify();
  });
  done.WaitForNotification();
}

absl::StatusOr<FetchedResponse> BlockingHttp2Client::Fetch(
    const FetchRequest& request, absl::Duration timeout) {
  absl::StatusOr<std::vector<FetchedResponse>> all =
      FetchAll({request}, timeout);
  if (!all.ok()) return all.status();
  return std::move((*all)[0]);
}

absl::StatusOr<FetchedResponse> BlockingHttp2Client::Fetch(
    const std::string& method, const std::string& path,
    absl::Duration timeout) {
  FetchRequest request;
  request.method = method;
  request.path = path;
  return Fetch(request, timeout);
}

absl::StatusOr<std::vector<FetchedResponse>> BlockingHttp2Client::FetchAll(
    const std::vector<FetchRequest>& requests, absl::Duration timeout) {
  auto batch = std::make_shared<Batch>();
  {
    absl::MutexLock lock(&batch->mu);
    batch->responses.resize(requests.size());
    batch->remaining = requests.size();
  }
  if (requests.empty()) return std::vector<FetchedResponse>();
  RunInLoop([&requests, batch](Http2Client* client) {
    for (size_t i = 0; i < requests.size(); ++i) {
      const FetchRequest& r = requests[i];
      std::vector<hpack::HeaderField> extra;
      for (const auto& h : r.headers) extra.push_back({h.first, h.second});
      SliceBuffer body;
      body.Append(r.body);
      client->Fetch(
          r.method, r.path, std::move(body),
          [batch, i](Http2Response response) {
            FetchedResponse copy = Copy(response);
            absl::MutexLock lock(&batch->mu);
            batch->responses[i] = std::move(copy);
            if (--batch->remaining == 0) batch->done.Notify();
          },
          extra);
    }
  });
  if (!batch->done.WaitForNotificationWithTimeout(timeout)) {
    absl::MutexLock lock(&batch->mu);
    return absl::DeadlineExceededError(absl::StrCat(
        batch->remaining, " of ", requests.size(), " responses missing after ",
        absl::FormatDuration(timeout)));
  }
  absl::MutexLock lock(&batch->mu);
  return std::move(batch->responses);
}

absl::Status BlockingHttp2Client::Shutdown(absl::Duration timeout) {
  auto closed = std::make_shared<absl::Notification>();
  RunInLoop([closed](Http2Client* client) {
    if (client->closed()) {
      closed->Notify();
      return;
    }
    client->SetOnClosed([closed](absl::Status) { closed->Notify(); });
    client->GracefulShutdown();
  });
  if (!closed->WaitForNotificationWithTimeout(timeout)) {
    return absl::DeadlineExceededError("connection did not close");
  }
  return absl::OkStatus();
}

bool BlockingHttp2Client::closed() {
  bool result = false;
  RunInLoop([&result](Http2Client* client) { result = client->closed(); });
  return result;
}

}  // namespace transport
