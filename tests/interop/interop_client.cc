// interop_client: the client side of grpc's doc/interop-test-descriptions.md
// on our stack; one test case per run, exit 0 when it passes.
//   interop_client --server_host=H --server_port=P --test_case=NAME
//       [--use_tls [--server_host_override=N] [--ca_file=F]]
// Built a second time with -DINTEROP_GRPCPP against Debian's grpc++
// (grpcpp_interop_client, the peer the acceptance test drives our server
// with): the two APIs have the same shapes, the few differences are marked.

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/interop/cli_util.h"

#ifdef INTEROP_GRPCPP
#include <grpcpp/grpcpp.h>

#include "tests/interop/test.grpc.pb.h"
namespace api = ::grpc;
#else
#include "rpc/rpc.h"
#include "tests/interop/test.rpc.pb.h"
namespace api = ::rpc;
#endif

namespace {

using grpc::testing::Empty;
using grpc::testing::SimpleRequest;
using grpc::testing::SimpleResponse;
using grpc::testing::StreamingInputCallRequest;
using grpc::testing::StreamingInputCallResponse;
using grpc::testing::StreamingOutputCallRequest;
using grpc::testing::StreamingOutputCallResponse;

constexpr char kEchoInitial[] = "x-grpc-test-echo-initial";
constexpr char kEchoTrailing[] = "x-grpc-test-echo-trailing-bin";
const int kRequestSizes[] = {27182, 8, 1828, 45904};
const int kResponseSizes[] = {31415, 9, 2653, 58979};

// A failed check: the message says what and the case fails.
struct Failure {
  std::string what;
};

void Check(bool ok, const std::string& what) {
  if (!ok) throw Failure{what};
}

std::string Describe(const api::Status& s) {
  return std::to_string(static_cast<int>(s.error_code())) + " \"" +
         s.error_message() + "\"";
}

void CheckOk(const api::Status& s, const std::string& what) {
  Check(s.ok(), what + ": status " + Describe(s));
}

void CheckCode(const api::Status& s, api::StatusCode code,
               const std::string& what) {
  Check(s.error_code() == code, what + ": want code " +
                                    std::to_string(static_cast<int>(code)) +
                                    ", got " + Describe(s));
}

void CheckZeros(const std::string& body, size_t size, const std::string& what) {
  Check(body.size() == size, what + ": payload of " +
                                 std::to_string(body.size()) +
                                 " octets, want " + std::to_string(size));
  Check(body == std::string(size, '\0'), what + ": payload is not all zeros");
}

#ifdef INTEROP_GRPCPP
std::optional<std::string> Lookup(
    const std::multimap<grpc::string_ref, grpc::string_ref>& md,
    const std::string& key) {
  auto it = md.find(key);
  if (it == md.end()) return std::nullopt;
  return std::string(it->second.data(), it->second.size());
}
#else
std::optional<std::string> Lookup(const rpc::Metadata& md,
                                  const std::string& key) {
  auto v = md.Get(key);
  if (!v) return std::nullopt;
  return std::string(*v);
}
#endif

void SetTimeout(api::ClientContext* ctx, std::chrono::milliseconds timeout) {
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
}

class Client {
 public:
  explicit Client(std::shared_ptr<api::Channel> channel)
      : channel_(channel),
        stub_(grpc::testing::TestService::NewStub(channel)) {}

  void EmptyUnary() {
    api::ClientContext ctx;
    Bound(&ctx);
    Empty req, resp;
    CheckOk(stub_->EmptyCall(&ctx, req, &resp), "EmptyCall");
    Check(resp.ByteSizeLong() == 0, "EmptyCall: response not empty");
  }

  void LargeUnary() {
    api::ClientContext ctx;
    Bound(&ctx);
    SimpleRequest req;
    req.set_response_size(314159);
    req.mutable_payload()->set_body(std::string(271828, '\0'));
    SimpleResponse resp;
    CheckOk(stub_->UnaryCall(&ctx, req, &resp), "UnaryCall");
    CheckZeros(resp.payload().body(), 314159, "UnaryCall");
  }

  void ClientStreaming() {
    api::ClientContext ctx;
    Bound(&ctx);
    StreamingInputCallResponse resp;
    auto writer = stub_->StreamingInputCall(&ctx, &resp);
    for (int size : kRequestSizes) {
      StreamingInputCallRequest req;
      req.mutable_payload()->set_body(std::string(size, '\0'));
      Check(writer->Write(req), "StreamingInputCall: Write failed");
    }
    writer->WritesDone();
    CheckOk(writer->Finish(), "StreamingInputCall");
    Check(resp.aggregated_payload_size() == 74922,
          "StreamingInputCall: aggregated_payload_size " +
              std::to_string(resp.aggregated_payload_size()));
  }

  void ServerStreaming() {
    api::ClientContext ctx;
    Bound(&ctx);
    StreamingOutputCallRequest req;
    for (int size : kResponseSizes) {
      req.add_response_parameters()->set_size(size);
    }
    auto reader = stub_->StreamingOutputCall(&ctx, req);
    StreamingOutputCallResponse resp;
    for (int size : kResponseSizes) {
      Check(reader->Read(&resp), "StreamingOutputCall: too few responses");
      CheckZeros(resp.payload().body(), size, "StreamingOutputCall");
    }
    Check(!reader->Read(&resp), "StreamingOutputCall: too many responses");
    CheckOk(reader->Finish(), "StreamingOutputCall");
  }

  void PingPong() {
    api::ClientContext ctx;
    Bound(&ctx);
    auto stream = stub_->FullDuplexCall(&ctx);
    for (int i = 0; i < 4; ++i) {
      StreamingOutputCallRequest req;
      req.add_response_parameters()->set_size(kResponseSizes[i]);
      req.mutable_payload()->set_body(std::string(kRequestSizes[i], '\0'));
      Check(stream->Write(req), "FullDuplexCall: Write failed");
      StreamingOutputCallResponse resp;
      Check(stream->Read(&resp), "FullDuplexCall: no response");
      CheckZeros(resp.payload().body(), kResponseSizes[i], "FullDuplexCall");
    }
    stream->WritesDone();
    StreamingOutputCallResponse resp;
    Check(!stream->Read(&resp), "FullDuplexCall: extra response");
    CheckOk(stream->Finish(), "FullDuplexCall");
  }

  void EmptyStream() {
    api::ClientContext ctx;
    Bound(&ctx);
    auto stream = stub_->FullDuplexCall(&ctx);
    stream->WritesDone();
    StreamingOutputCallResponse resp;
    Check(!stream->Read(&resp), "FullDuplexCall: unexpected response");
    CheckOk(stream->Finish(), "FullDuplexCall");
  }

  void CustomMetadata() {
    const std::string initial = "test_initial_metadata_value";
    const std::string trailing = "\x0a\x0b\x0a\x0b\x0a\x0b";
    {
      api::ClientContext ctx;
      Bound(&ctx);
      ctx.AddMetadata(kEchoInitial, initial);
      ctx.AddMetadata(kEchoTrailing, trailing);
      SimpleRequest req;
      req.set_response_size(314159);
      req.mutable_payload()->set_body(std::string(271828, '\0'));
      SimpleResponse resp;
      CheckOk(stub_->UnaryCall(&ctx, req, &resp), "UnaryCall");
      CheckZeros(resp.payload().body(), 314159, "UnaryCall");
      CheckMetadata(ctx, initial, trailing, "UnaryCall");
    }
    {
      api::ClientContext ctx;
      Bound(&ctx);
      ctx.AddMetadata(kEchoInitial, initial);
      ctx.AddMetadata(kEchoTrailing, trailing);
      auto stream = stub_->FullDuplexCall(&ctx);
      StreamingOutputCallRequest req;
      req.add_response_parameters()->set_size(314159);
      req.mutable_payload()->set_body(std::string(271828, '\0'));
      Check(stream->Write(req), "FullDuplexCall: Write failed");
      StreamingOutputCallResponse resp;
      Check(stream->Read(&resp), "FullDuplexCall: no response");
      CheckZeros(resp.payload().body(), 314159, "FullDuplexCall");
      stream->WritesDone();
      Check(!stream->Read(&resp), "FullDuplexCall: extra response");
      CheckOk(stream->Finish(), "FullDuplexCall");
      CheckMetadata(ctx, initial, trailing, "FullDuplexCall");
    }
  }

  void StatusCodeAndMessage() { EchoStatus("test status message", true); }

  void SpecialStatusMessage() {
    EchoStatus(
        "\t\ntest with whitespace\r\nand Unicode BMP \xe2\x98\xba and non-BMP "
        "\xf0\x9f\x98\x88\t\n",
        false);
  }

  void UnimplementedMethod() {
    api::ClientContext ctx;
    Bound(&ctx);
    Empty req, resp;
    CheckCode(stub_->UnimplementedCall(&ctx, req, &resp),
              api::StatusCode::UNIMPLEMENTED, "TestService.UnimplementedCall");
  }

  void UnimplementedService() {
    auto stub = grpc::testing::UnimplementedService::NewStub(channel_);
    api::ClientContext ctx;
    Bound(&ctx);
    Empty req, resp;
    CheckCode(stub->UnimplementedCall(&ctx, req, &resp),
              api::StatusCode::UNIMPLEMENTED,
              "UnimplementedService.UnimplementedCall");
  }

  void CancelAfterBegin() {
    api::ClientContext ctx;
    Bound(&ctx);
    StreamingInputCallResponse resp;
    auto writer = stub_->StreamingInputCall(&ctx, &resp);
    ctx.TryCancel();
    CheckCode(writer->Finish(), api::StatusCode::CANCELLED,
              "StreamingInputCall cancelled after begin");
  }

  void CancelAfterFirstResponse() {
    api::ClientContext ctx;
    Bound(&ctx);
    auto stream = stub_->FullDuplexCall(&ctx);
    StreamingOutputCallRequest req;
    req.add_response_parameters()->set_size(31415);
    req.mutable_payload()->set_body(std::string(27182, '\0'));
    Check(stream->Write(req), "FullDuplexCall: Write failed");
    StreamingOutputCallResponse resp;
    Check(stream->Read(&resp), "FullDuplexCall: no response");
    CheckZeros(resp.payload().body(), 31415, "FullDuplexCall");
    ctx.TryCancel();
    CheckCode(stream->Finish(), api::StatusCode::CANCELLED,
              "FullDuplexCall cancelled after first response");
  }

  void TimeoutOnSleepingServer() {
    api::ClientContext ctx;
    SetTimeout(&ctx, std::chrono::milliseconds(1));
    auto stream = stub_->FullDuplexCall(&ctx);
    StreamingOutputCallRequest req;
    req.mutable_payload()->set_body(std::string(27182, '\0'));
    stream->Write(req);  // may fail: the deadline can pass first
    CheckCode(stream->Finish(), api::StatusCode::DEADLINE_EXCEEDED,
              "FullDuplexCall with a 1 ms deadline");
  }

 private:
  // Every call but timeout_on_sleeping_server gets a generous deadline so
  // that a hung peer fails the case instead of the test runner's timeout.
  static void Bound(api::ClientContext* ctx) {
    SetTimeout(ctx, std::chrono::seconds(20));
  }

  static void CheckMetadata(const api::ClientContext& ctx,
                            const std::string& initial,
                            const std::string& trailing,
                            const std::string& what) {
    auto got_initial = Lookup(ctx.GetServerInitialMetadata(), kEchoInitial);
    Check(got_initial == initial, what + ": initial metadata not echoed");
    auto got_trailing = Lookup(ctx.GetServerTrailingMetadata(), kEchoTrailing);
    Check(got_trailing == trailing, what + ": trailing metadata not echoed");
  }

  // status_code_and_message / special_status_message: UnaryCall (and
  // FullDuplexCall when `streaming`) asked to answer UNKNOWN + `message`.
  void EchoStatus(const std::string& message, bool streaming) {
    {
      api::ClientContext ctx;
      Bound(&ctx);
      SimpleRequest req;
      req.mutable_response_status()->set_code(2);
      req.mutable_response_status()->set_message(message);
      SimpleResponse resp;
      api::Status s = stub_->UnaryCall(&ctx, req, &resp);
      CheckCode(s, api::StatusCode::UNKNOWN, "UnaryCall");
      Check(s.error_message() == message,
            "UnaryCall: message \"" + s.error_message() + "\"");
    }
    if (!streaming) return;
    api::ClientContext ctx;
    Bound(&ctx);
    auto stream = stub_->FullDuplexCall(&ctx);
    StreamingOutputCallRequest req;
    req.mutable_response_status()->set_code(2);
    req.mutable_response_status()->set_message(message);
    Check(stream->Write(req), "FullDuplexCall: Write failed");
    stream->WritesDone();
    api::Status s = stream->Finish();
    CheckCode(s, api::StatusCode::UNKNOWN, "FullDuplexCall");
    Check(s.error_message() == message,
          "FullDuplexCall: message \"" + s.error_message() + "\"");
  }

  std::shared_ptr<api::Channel> channel_;
  std::unique_ptr<grpc::testing::TestService::Stub> stub_;
};

using interop::FlagValue;
using interop::ReadFile;

}  // namespace

int main(int argc, char** argv) {
  std::string host = "localhost";
  int port = 0;
  std::string test_case;
  bool use_tls = false;
  std::string host_override, ca_file;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (FlagValue(argv[i], "--server_host_override", &v)) {
      host_override = v;
    } else if (FlagValue(argv[i], "--server_host", &v)) {
      host = v;
    } else if (FlagValue(argv[i], "--server_port", &v)) {
      port = std::atoi(v.c_str());
    } else if (FlagValue(argv[i], "--test_case", &v)) {
      test_case = v;
    } else if (FlagValue(argv[i], "--use_tls", &v)) {
      use_tls = v == "true" || v == "1";
    } else if (FlagValue(argv[i], "--use_test_ca", &v)) {
      // The CA comes from --ca_file (there is no built-in test CA).
    } else if (FlagValue(argv[i], "--ca_file", &v)) {
      ca_file = v;
    } else {
      std::cerr << "unknown flag " << argv[i] << "\n";
      return 2;
    }
  }
  if (port <= 0 || test_case.empty()) {
    std::cerr << "need --server_port and --test_case\n";
    return 2;
  }

  const std::string target = host + ":" + std::to_string(port);
  std::shared_ptr<api::Channel> channel;
  if (use_tls) {
    api::SslCredentialsOptions options;
    if (!ca_file.empty() && !ReadFile(ca_file, &options.pem_root_certs)) {
      std::cerr << "cannot read --ca_file " << ca_file << "\n";
      return 2;
    }
    api::ChannelArguments args;
    if (!host_override.empty()) args.SetSslTargetNameOverride(host_override);
    channel =
        api::CreateCustomChannel(target, api::SslCredentials(options), args);
  } else {
    channel = api::CreateChannel(target, api::InsecureChannelCredentials());
  }

  Client client(channel);
  const std::map<std::string, std::function<void()>> cases = {
      {"empty_unary", [&] { client.EmptyUnary(); }},
      {"large_unary", [&] { client.LargeUnary(); }},
      {"client_streaming", [&] { client.ClientStreaming(); }},
      {"server_streaming", [&] { client.ServerStreaming(); }},
      {"ping_pong", [&] { client.PingPong(); }},
      {"empty_stream", [&] { client.EmptyStream(); }},
      {"custom_metadata", [&] { client.CustomMetadata(); }},
      {"status_code_and_message", [&] { client.StatusCodeAndMessage(); }},
      {"special_status_message", [&] { client.SpecialStatusMessage(); }},
      {"unimplemented_method", [&] { client.UnimplementedMethod(); }},
      {"unimplemented_service", [&] { client.UnimplementedService(); }},
      {"cancel_after_begin", [&] { client.CancelAfterBegin(); }},
      {"cancel_after_first_response",
       [&] { client.CancelAfterFirstResponse(); }},
      {"timeout_on_sleeping_server", [&] { client.TimeoutOnSleepingServer(); }},
  };
  auto it = cases.find(test_case);
  if (it == cases.end()) {
    std::cerr << "unknown --test_case " << test_case << "\n";
    return 2;
  }
  try {
    it->second();
  } catch (const Failure& f) {
    std::cerr << test_case << " FAILED: " << f.what << "\n";
    return 1;
  }
  std::cout << test_case << " passed\n";
  return 0;
}
