#include "rpc/fuzz/harness.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>

#include "google/protobuf/stubs/logging.h"
#include "rpc/channel.h"
#include "rpc/credentials.h"
#include "rpc/internal/channel_impl.h"
#include "rpc/internal/proto_utils.h"
#include "rpc/server_context.h"
#include "transport/io/memory_endpoint.h"
#include "transport/testing/connection_test_util.h"

namespace rpc {
namespace fuzz {

using rpc::test::EchoRequest;
using rpc::test::EchoResponse;

void DrainLoop(transport::EventLoop* loop, absl::FunctionRef<bool()> more) {
  // A finite exchange settles in a few hundred iterations; every piece of
  // work costs at least one, so this is far beyond any real need.
  constexpr int kMaxIterations = 100000;
  for (int i = 0; i < kMaxIterations; ++i) {
    const int callbacks = loop->RunOnce(absl::ZeroDuration());
    const bool did_more = more();
    if (callbacks == 0 && !did_more) return;
  }
  std::fprintf(stderr, "the loop did not settle after %d iterations\n",
               kMaxIterations);
  std::abort();
}

bool SplitInput(const uint8_t* data, size_t size, uint8_t* mode,
                std::vector<std::string_view>* pieces) {
  if (size < 5) return false;
  *mode = data[0];
  const uint32_t seed = (uint32_t{data[1]} << 24) | (uint32_t{data[2]} << 16) |
                        (uint32_t{data[3]} << 8) | data[4];
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 5,
                               size - 5);
  std::mt19937 rng(seed);
  std::vector<size_t> splits(rng() % 9);
  for (size_t& s : splits) s = rng() % (bytes.size() + 1);
  std::sort(splits.begin(), splits.end());
  splits.push_back(bytes.size());
  pieces->clear();
  size_t at = 0;
  for (const size_t end : splits) {
    pieces->push_back(bytes.substr(at, end - at));
    at = end;
  }
  return true;
}

void FeedPieces(transport::EventLoop* loop, transport::MemoryEndpoint* peer,
                const std::vector<std::string_view>& pieces, bool slow_reader,
                absl::FunctionRef<void()> drain) {
  if (slow_reader) peer->set_write_capacity(4 << 10);
  int n = 0;
  for (std::string_view piece : pieces) {
    peer->Deliver(piece);
    loop->AdvanceClock(absl::Milliseconds(1));
    drain();
    if (peer->written().size() > (64u << 20)) {
      std::fprintf(stderr, "%zu octets written\n", peer->written().size());
      std::abort();
    }
    if (!slow_reader || ++n % 4 == 0) peer->TakeWritten();
  }
  peer->set_write_capacity(SIZE_MAX);
  drain();
  peer->TakeWritten();
}

// ---- FuzzEchoService ----

namespace {

void EchoMetadata(ServerContext* ctx) {
  if (auto v = ctx->client_metadata().Get("x-echo-initial")) {
    ctx->AddInitialMetadata("x-echo-initial", std::string(*v));
  }
  if (auto v = ctx->client_metadata().Get("x-echo-trailing-bin")) {
    ctx->AddTrailingMetadata("x-echo-trailing-bin", std::string(*v));
  }
  if (auto v = ctx->client_metadata().Get("x-encoding")) {
    if (auto e = compression::ParseGrpcEncoding(*v)) {
      ctx->set_compression_algorithm(*e);
    }
  }
}

// The request's status, if it asks for one (codes out of range wrap).
bool RequestedStatus(const EchoRequest& req, Status* status) {
  if (req.status_code() == 0) return false;
  const int code = static_cast<int>(static_cast<unsigned>(req.status_code()) %
                                    (kMaxStatusCode + 1));
  *status = Status(static_cast<StatusCode>(code), req.status_message());
  return true;
}

int Count(const EchoRequest& req) {
  return std::clamp(req.count(), 0, FuzzEchoService::kMaxResponses);
}

EchoResponse Response(const EchoRequest& req, int index) {
  EchoResponse r;
  r.set_message(req.message());
  const size_t n = static_cast<size_t>(
      std::clamp(req.response_size(), 0, FuzzEchoService::kMaxResponseSize));
  std::string payload = req.payload().substr(0, n);
  payload.resize(n, 'r');
  r.set_payload(std::move(payload));
  r.set_index(index);
  return r;
}

}  // namespace

Status FuzzEchoService::Echo(ServerContext* ctx, const EchoRequest* req,
                             EchoResponse* resp) {
  EchoMetadata(ctx);
  Status status;
  if (RequestedStatus(*req, &status)) return status;
  *resp = Response(*req, 0);
  return Status::OK;
}

Status FuzzEchoService::ServerStream(ServerContext* ctx, const EchoRequest* req,
                                     ServerWriter<EchoResponse>* writer) {
  EchoMetadata(ctx);
  for (int i = 0; i < Count(*req); ++i) {
    if (!writer->Write(Response(*req, i))) {
      return Status(StatusCode::CANCELLED, "write failed");
    }
  }
  Status status;
  if (RequestedStatus(*req, &status)) return status;
  return Status::OK;
}

Status FuzzEchoService::ClientStream(ServerContext* ctx,
                                     ServerReader<EchoRequest>* reader,
                                     EchoResponse* resp) {
  EchoMetadata(ctx);
  EchoRequest req;
  int n = 0;
  std::string messages;
  while (reader->Read(&req)) {
    Status status;
    if (RequestedStatus(req, &status)) return status;
    if (messages.size() < kMaxResponseSize) messages += req.message();
    ++n;
  }
  if (ctx->IsCancelled()) return Status(StatusCode::CANCELLED, "cancelled");
  resp->set_message(messages.substr(0, kMaxResponseSize));
  resp->set_index(n);
  return Status::OK;
}

Status FuzzEchoService::Bidi(
    ServerContext* ctx, ServerReaderWriter<EchoResponse, EchoRequest>* stream) {
  EchoMetadata(ctx);
  EchoRequest req;
  int index = 0;
  while (stream->Read(&req)) {
    Status status;
    if (RequestedStatus(req, &status)) return status;
    for (int i = 0; i < std::max(1, Count(req)); ++i) {
      if (!stream->Write(Response(req, index++))) {
        return Status(StatusCode::CANCELLED, "write failed");
      }
    }
  }
  if (ctx->IsCancelled()) return Status(StatusCode::CANCELLED, "cancelled");
  return Status::OK;
}

// ---- FuzzCallbackEchoService ----

namespace {

class UnaryEcho final : public ServerUnaryReactor {
 public:
  UnaryEcho(CallbackServerContext* ctx, const EchoRequest& req,
            EchoResponse* resp) {
    EchoMetadata(ctx);
    Status status;
    if (RequestedStatus(req, &status)) {
      Finish(status);
      return;
    }
    *resp = Response(req, 0);
    Finish(Status::OK);
  }
  void OnDone() override { delete this; }
};

class StreamWriter final : public ServerWriteReactor<EchoResponse> {
 public:
  StreamWriter(CallbackServerContext* ctx, const EchoRequest& req)
      : req_(req), count_(Count(req)) {
    EchoMetadata(ctx);
    Next();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(Status(StatusCode::CANCELLED, "write failed"));
      return;
    }
    Next();
  }
  void OnDone() override { delete this; }

 private:
  void Next() {
    if (index_ < count_) {
      resp_ = Response(req_, index_++);
      StartWrite(&resp_);
      return;
    }
    Status status;
    Finish(RequestedStatus(req_, &status) ? status : Status::OK);
  }

  const EchoRequest& req_;  // The call's: lives until OnDone.
  const int count_;
  int index_ = 0;
  EchoResponse resp_;
};

class StreamReader final : public ServerReadReactor<EchoRequest> {
 public:
  StreamReader(CallbackServerContext* ctx, EchoResponse* resp)
      : ctx_(ctx), resp_(resp) {
    EchoMetadata(ctx);
    StartRead(&req_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {
      if (ctx_->IsCancelled()) {
        Finish(Status(StatusCode::CANCELLED, "cancelled"));
        return;
      }
      resp_->set_message(
          messages_.substr(0, FuzzEchoService::kMaxResponseSize));
      resp_->set_index(n_);
      Finish(Status::OK);
      return;
    }
    Status status;
    if (RequestedStatus(req_, &status)) {
      Finish(status);
      return;
    }
    if (messages_.size() < FuzzEchoService::kMaxResponseSize) {
      messages_ += req_.message();
    }
    ++n_;
    StartRead(&req_);
  }
  void OnDone() override { delete this; }

 private:
  CallbackServerContext* const ctx_;
  EchoResponse* const resp_;
  EchoRequest req_;
  std::string messages_;
  int n_ = 0;
};

class BidiEcho final : public ServerBidiReactor<EchoRequest, EchoResponse> {
 public:
  explicit BidiEcho(CallbackServerContext* ctx) : ctx_(ctx) {
    EchoMetadata(ctx);
    StartRead(&req_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(ctx_->IsCancelled() ? Status(StatusCode::CANCELLED, "cancelled")
                                 : Status::OK);
      return;
    }
    Status status;
    if (RequestedStatus(req_, &status)) {
      Finish(status);
      return;
    }
    left_ = std::max(1, Count(req_));
    Next();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(Status(StatusCode::CANCELLED, "write failed"));
      return;
    }
    Next();
  }
  void OnDone() override { delete this; }

 private:
  void Next() {
    if (left_ == 0) {
      StartRead(&req_);
      return;
    }
    --left_;
    resp_ = Response(req_, index_++);
    StartWrite(&resp_);
  }

  CallbackServerContext* const ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  int left_ = 0;
  int index_ = 0;
};

}  // namespace

ServerUnaryReactor* FuzzCallbackEchoService::Echo(CallbackServerContext* ctx,
                                                  const EchoRequest* req,
                                                  EchoResponse* resp) {
  return new UnaryEcho(ctx, *req, resp);
}

ServerWriteReactor<EchoResponse>* FuzzCallbackEchoService::ServerStream(
    CallbackServerContext* ctx, const EchoRequest* req) {
  return new StreamWriter(ctx, *req);
}

ServerReadReactor<EchoRequest>* FuzzCallbackEchoService::ClientStream(
    CallbackServerContext* ctx, EchoResponse* resp) {
  return new StreamReader(ctx, resp);
}

ServerBidiReactor<EchoRequest, EchoResponse>* FuzzCallbackEchoService::Bidi(
    CallbackServerContext* ctx) {
  return new BidiEcho(ctx);
}

// ---- ServerHarness ----

namespace {

transport::ConnectionOptions ConnectionOptionsFor(transport::Role role,
                                                  bool small_limits) {
  if (small_limits) return transport::testing::SmallLimitsOptions(role);
  transport::ConnectionOptions options;
  options.role = role;
  return options;
}

// Fuzzed messages are mostly not valid UTF-8: protobuf would log each.
void QuietProtobuf() {
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
}

}  // namespace

ServerHarness::ServerHarness(transport::EventLoop* loop,
                             std::unique_ptr<transport::Endpoint> endpoint,
                             const ServerHarnessOptions& options)
    : loop_(loop) {
  QuietProtobuf();
  const Service& service = options.callback
                               ? static_cast<const Service&>(callback_service_)
                               : service_;
  for (const auto& m : service.methods()) methods_[m->path] = m.get();
  limits_.default_encoding = options.default_encoding;
  limits_.compression_threshold = options.compression_threshold;
  // Handlers run inline: a Write that waited for credit would wait forever.
  limits_.write_bound = SIZE_MAX;
  if (options.small_limits) {
    limits_.max_receive_message_size = 1 << 10;
    limits_.max_send_message_size = 8 << 10;
    limits_.read_bound = 2 << 10;
  }
  connection_ = std::make_unique<internal::ServerConnection>(
      this, std::move(endpoint),
      ConnectionOptionsFor(transport::Role::kServer, options.small_limits));
}

ServerHarness::~ServerHarness() {
  Drain();
  // Cancels what is left; handlers not run yet then see a cancelled call.
  connection_.reset();
  RunHandlers(/*all=*/true);
  DrainLoop(loop_, [] { return false; });
}

const Service::Method* ServerHarness::FindMethod(std::string_view path) {
  auto it = methods_.find(absl::string_view(path.data(), path.size()));
  return it == methods_.end() ? nullptr : it->second;
}

bool ServerHarness::RunHandlers(bool all) {
  bool ran = false;
  for (size_t i = 0; i < pending_.size();) {
    if (!all && !pending_[i]->RequestsComplete()) {
      ++i;
      continue;
    }
    std::shared_ptr<internal::ServerCall> call = std::move(pending_[i]);
    pending_.erase(pending_.begin() + static_cast<ptrdiff_t>(i));
    // As rpc::Server runs a synchronous method on a worker.
    ServerContext ctx(call);
    const Status status = call->method()->handler(&ctx);
    call->Finish(status, ctx.mutable_initial_metadata(),
                 ctx.mutable_trailing_metadata());
    ++handlers_run_;
    ran = true;
  }
  return ran;
}

void ServerHarness::Drain() {
  DrainLoop(loop_, [this] { return RunHandlers(/*all=*/false); });
}

// ---- ClientHarness ----

namespace {

// Gives the calls their :authority, :scheme and user-agent; never connects
// (the calls go to the harness's transport, not through the channel).
internal::ChannelImpl* HeaderChannel() {
  // Never destroyed (its idle loop thread lives until the process exits).
  static const std::shared_ptr<Channel>* const channel =
      new std::shared_ptr<Channel>(
          CreateChannel("dns:///fuzz.test", InsecureChannelCredentials()));
  return internal::ChannelAccess::Impl(channel->get());
}

EchoRequest Request(int call, int i) {
  EchoRequest req;
  req.set_message("call " + std::to_string(call) + " request " +
                  std::to_string(i));
  req.set_count(2);
  req.set_response_size(64 + 300 * call);
  req.set_payload(std::string(100 + 200 * i, 'p'));
  if (call == 1) {
    req.set_status_code(StatusCode::FAILED_PRECONDITION);
    req.set_status_message("asked to fail: 100% sure");
  }
  return req;
}

}  // namespace

namespace {

// A callback-API reader for the fuzzer: parses every message on the loop and
// reads each one late (two stay unread), then everything at the status.
class FuzzObserver final : public internal::ClientCallObserver {
 public:
  explicit FuzzObserver(internal::ClientCall* call) : call_(call) {}
  void LoopOnInitialMetadata() override {}
  void LoopOnMessage(transport::SliceBuffer payload) override {
    EchoResponse response;
    (void)internal::Parse(payload, &response);
    unread_.push_back(payload.size());
    if (unread_.size() > 2) ReadOldest();
  }
  void LoopOnWriteCredit() override {}
  void LoopOnStatus(bool /*clean*/) override {
    while (!unread_.empty()) ReadOldest();
  }

 private:
  void ReadOldest() {
    call_->LoopMessageConsumed(unread_.front());
    unread_.erase(unread_.begin());
  }
  internal::ClientCall* const call_;  // Outlives its observer's use.
  std::vector<size_t> unread_;
};

}  // namespace

const std::vector<ClientHarness::CallSpec>& ClientHarness::Calls() {
  using compression::Encoding;
  static const auto* const calls = new std::vector<CallSpec>{
      {"Echo", RpcType::kUnary, Encoding::kIdentity, 1},
      {"Echo", RpcType::kUnary, Encoding::kGzip, 1},  // fails (status)
      {"ServerStream", RpcType::kServerStreaming, Encoding::kDeflate, 1},
      {"ClientStream", RpcType::kClientStreaming, Encoding::kZstd, 3},
      {"Bidi", RpcType::kBidiStreaming, Encoding::kIdentity, 2},
      {"Bidi", RpcType::kBidiStreaming, Encoding::kGzip, 1},  // stays open
  };
  return *calls;
}

ClientHarness::ClientHarness(transport::EventLoop* loop,
                             std::unique_ptr<transport::Endpoint> endpoint,
                             const ClientHarnessOptions& options)
    : loop_(loop), options_(options) {
  QuietProtobuf();
  call_options_.write_bound = SIZE_MAX;  // Writes never wait.
  call_options_.compression_threshold = 0;
  // A transparent retry goes back to the call's channel, which here is only
  // the header source (HeaderChannel, on a loop of its own): a refused
  // attempt fails instead (crash_retry_reaches_the_header_channel).
  call_options_.transparent_retry = false;
  if (options.small_limits) {
    call_options_.max_receive_message_size = 1 << 10;
    call_options_.read_bound = 2 << 10;
  }
  internal::ClientTransportOptions transport_options;
  transport_options.connection =
      ConnectionOptionsFor(transport::Role::kClient, options.small_limits);
  transport_ = std::make_unique<internal::ClientTransport>(
      this, std::move(endpoint), transport_options);
}

ClientHarness::~ClientHarness() {
  transport_.reset();
  Collect();
  DrainLoop(loop_, [] { return false; });
}

void ClientHarness::Start() {
  transport_->Start();
  const std::vector<CallSpec>& specs = Calls();
  for (size_t c = 0; c < specs.size(); ++c) {
    const CallSpec& spec = specs[c];
    if (options_.only.has_value() && spec.type != *options_.only) continue;
    internal::ClientCallOptions options = call_options_;
    if (options_.compress) options.encoding = spec.encoding;
    Metadata metadata;
    metadata.Add("x-echo-initial", "call-" + std::to_string(c));
    metadata.Add("x-echo-trailing-bin", std::string("\0\xff trailer", 10));
    if (options_.compress && c % 2 == 0) {
      metadata.Add("x-encoding", std::string(compression::EncodingName(
                                     specs[(c + 1) % specs.size()].encoding)));
    }
    auto call = std::make_shared<internal::ClientCall>(
        HeaderChannel(), loop_,
        std::string("/rpc.test.EchoService/") + spec.method,
        // A grpc-timeout that never fires: whole seconds ("3600000S"), so a
        // loaded machine's delay before LoopStart does not change it.
        c == 0 ? absl::Now() + absl::Hours(1000) : absl::InfiniteFuture(),
        std::move(metadata), options);
    if (options_.observer) {
      observers_.push_back(std::make_unique<FuzzObserver>(call.get()));
      call->SetObserver(observers_.back().get());
    }
    // The channel's loop work for a call, done here on the harness's loop.
    call->LoopStart(transport_.get());
    for (int i = 0; i < spec.requests; ++i) {
      if (options_.observer) {
        transport::SliceBuffer payload;
        (void)internal::Serialize(Request(static_cast<int>(c), i), &payload);
        call->LoopSend(std::move(payload), false, /*no_compression=*/i == 1);
        continue;
      }
      transport::SliceBuffer payload;
      (void)internal::Serialize(Request(static_cast<int>(c), i), &payload);
      call->Write(std::move(payload), false);
    }
    if (c + 1 < specs.size()) {
      if (options_.observer) {
        call->LoopHalfClose();
      } else {
        call->WritesDone();
      }
    }
    calls_.push_back(std::move(call));
  }
}

bool ClientHarness::Collect() {
  bool any = false;
  for (size_t i = 0; i < calls_.size();) {
    internal::ClientCall& call = *calls_[i];
    if (!call.has_status()) {
      ++i;
      continue;
    }
    // Read never blocks once the call has its status.
    transport::SliceBuffer payload;
    while (call.Read(&payload)) {
      EchoResponse response;
      (void)internal::Parse(payload, &response);
      payload = transport::SliceBuffer();
    }
    Metadata initial, trailing;
    if (call.Finish(&initial, &trailing).ok()) ++ok_;
    ++finished_;
    calls_.erase(calls_.begin() + static_cast<ptrdiff_t>(i));
    any = true;
  }
  return any;
}

void ClientHarness::Drain() {
  DrainLoop(loop_, [this] { return Collect(); });
}

void ClientHarness::CancelRemaining() {
  for (auto& call : calls_) {
    call->Cancel(Status(StatusCode::CANCELLED, "fuzz input ended"));
  }
  Drain();
}

RecordedExchange RecordExchange(const ClientHarnessOptions& client_options,
                                const ServerHarnessOptions& server_options) {
  RecordedExchange x;
  auto loop = transport::EventLoop::CreateWithManualClock();
  if (!loop.ok()) return x;
  auto [client_end, server_end] =
      transport::MemoryEndpoint::CreatePair(loop->get());
  transport::MemoryEndpoint* c = client_end.get();
  transport::MemoryEndpoint* s = server_end.get();
  ServerHarness server(loop->get(), std::move(server_end), server_options);
  ClientHarness client(loop->get(), std::move(client_end), client_options);
  server.Start();
  client.Start();
  // Each Drain settles one side; a few rounds settle both.
  for (int i = 0; i < 4; ++i) {
    server.Drain();
    client.Drain();
  }
  client.CancelRemaining();
  for (int i = 0; i < 4; ++i) {
    server.Drain();
    client.Drain();
  }
  x.client_bytes = c->written();
  x.server_bytes = s->written();
  x.calls_finished = client.finished();
  x.calls_ok = client.ok();
  x.handlers_run = server.handlers_run();
  return x;
}

uint8_t ServerFuzzerMode(const ServerHarnessOptions& options) {
  uint8_t mode = static_cast<uint8_t>(options.default_encoding) & 3;
  if (options.compression_threshold == 0) mode |= 4;
  if (options.small_limits) mode |= 8;
  return mode;
}

uint8_t ClientFuzzerMode(const ClientHarnessOptions& options) {
  uint8_t mode = options.small_limits ? 1 : 0;
  if (!options.compress) mode |= 2;
  if (options.only.has_value()) {
    mode |= static_cast<uint8_t>((static_cast<int>(*options.only) + 1) << 3);
  }
  if (options.observer) mode |= 128;
  return mode;
}

}  // namespace fuzz
}  // namespace rpc
