// libFuzzer target: a Connection fed arbitrary bytes after a valid preface.
//
// Input: octet 0 picks the setup (bit 0: client role, else server; bit 1: the
// application answers every request / sends a request body; bit 2: a slow
// reader that consumes only every fourth piece; bit 3: small windows and
// limits; bit 4: the output is drained only every fourth piece; bit 5, with
// bit 3: connection credit only on consumption, else within a small receive
// buffer), octets 1-4 seed the split points, the rest is what the peer sends
// after its preface and SETTINGS. A client resets some of its streams as
// their responses start and opens new ones as streams close (resets counted
// against the peer's limit, late frames ignored). Checks, besides the
// sanitizers: memory stays within the configured bounds (received-not-
// consumed octets within the receive buffer limit plus the connection
// window, output near the high-water mark plus bounded replies).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "hpack/header_list.h"
#include "transport/connection/connection.h"
#include "transport/frame/frame.h"
#include "transport/frame/frame_writer.h"
#include "transport/slice/slice.h"
#include "transport/testing/connection_test_util.h"

namespace {

using transport::Connection;
using transport::Http2ErrorCode;

class FuzzListener : public transport::ConnectionListener {
 public:
  Connection* conn = nullptr;
  bool respond = false;
  bool slow = false;
  size_t held = 0;
  std::vector<std::pair<uint32_t, size_t>> unconsumed;

  void Answer(uint32_t id) {
    if (!respond || conn->role() != transport::Role::kServer) return;
    const hpack::HeaderField status[] = {{":status", "200", false}};
    if (!conn->SubmitHeaders(id, status, false).ok()) return;
    transport::SliceBuffer body;
    body.Append(std::string(100 + id % 5000, 'r'));
    (void)conn->SubmitData(id, std::move(body), false);
    const hpack::HeaderField trailers[] = {{"grpc-status", "0", false}};
    (void)conn->SubmitTrailers(id, trailers);
  }
  void ConsumeHeld() {
    for (const auto& [id, n] : unconsumed) conn->ConsumeData(id, n);
    unconsumed.clear();
    held = 0;
  }

  void OnHeaders(uint32_t id, const hpack::HeaderList&, bool end) override {
    if (end) Answer(id);
    if (conn->role() == transport::Role::kClient && id % 4 == 1) {
      conn->ResetStream(id, Http2ErrorCode::kCancel);
    }
  }
  void OnTrailers(uint32_t id, const hpack::HeaderList&) override {
    Answer(id);
  }
  void OnData(uint32_t id, transport::Slice data) override {
    if (slow) {
      unconsumed.emplace_back(id, data.size());
      held += data.size();
    } else {
      conn->ConsumeData(id, data.size());
    }
  }
  void OnEndStream(uint32_t id) override { Answer(id); }
  void OnStreamReset(uint32_t id, Http2ErrorCode, bool) override {
    if (id % 7 == 0) conn->ResetStream(id + 2, Http2ErrorCode::kCancel);
  }
  void OnStreamClosed(uint32_t) override {
    if (conn->role() != transport::Role::kClient || requests_left == 0) return;
    --requests_left;
    const hpack::HeaderField request[] = {{":method", "GET", false},
                                          {":scheme", "http", false},
                                          {":path", "/", false}};
    (void)conn->SubmitRequest(request, true);
  }
  int requests_left = 8;  // Client: opened as others close.
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const uint8_t mode = data[0];
  const transport::Role role =
      (mode & 1) != 0 ? transport::Role::kClient : transport::Role::kServer;
  transport::ConnectionOptions options;
  options.role = role;
  if ((mode & 8) != 0) {
    options = transport::testing::SmallLimitsOptions(role);
    // Credit on receipt within a small buffer, or only on consumption.
    if ((mode & 32) != 0) options.receive_buffer_limit = 0;
  }
  FuzzListener listener;
  listener.respond = (mode & 2) != 0;
  listener.slow = (mode & 4) != 0;
  const bool lazy_output = (mode & 16) != 0;
  Connection conn(options, &listener, 0);
  listener.conn = &conn;

  // The peer's valid preface.
  transport::SliceBuffer preface;
  if (options.role == transport::Role::kServer) {
    preface.Append(transport::kClientPreface);
  }
  transport::WriteSettings({}, &preface);
  transport::WriteSettingsAck(&preface);
  conn.Receive(preface, 0);
  if (options.role == transport::Role::kClient) {
    const hpack::HeaderField request[] = {{":method", "POST", false},
                                          {":scheme", "http", false},
                                          {":path", "/", false}};
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<uint32_t> id = conn.SubmitRequest(request, false);
      if (id.ok() && listener.respond) {
        transport::SliceBuffer body;
        body.Append(std::string(3000, 'q'));
        (void)conn.SubmitData(*id, std::move(body), true);
      }
    }
  }

  const uint32_t seed = (uint32_t{data[1]} << 24) | (uint32_t{data[2]} << 16) |
                        (uint32_t{data[3]} << 8) | data[4];
  const transport::Slice bytes = transport::Slice::Copy(data + 5, size - 5);
  std::mt19937 rng(seed);
  std::vector<size_t> splits(1 + rng() % 8);
  for (size_t& s : splits) s = rng() % (bytes.size() + 1);
  std::sort(splits.begin(), splits.end());
  splits.push_back(bytes.size());

  int64_t now = 0;
  size_t at = 0;
  int piece = 0;
  // Received and unconsumed DATA stays within the receive buffer limit plus
  // the connection window.
  const size_t window = std::max<uint32_t>(options.connection_window, 65535) +
                        options.receive_buffer_limit;
  for (const size_t end : splits) {
    now += 1000 * 1000;  // 1 ms per piece.
    conn.Receive(bytes.Sub(at, end - at), now);
    at = end;
    ++piece;
    if (conn.unconsumed_receive_bytes() > window) {
      std::fprintf(stderr, "unconsumed %zu > limit + window %zu\n",
                   conn.unconsumed_receive_bytes(), window);
      std::abort();
    }
    if (listener.slow && piece % 4 == 0) listener.ConsumeHeld();
    if (!lazy_output || piece % 4 == 0) {
      conn.ConsumeOutput(conn.output().size());
    } else if (conn.output().size() > options.output_high_water + (1 << 20)) {
      std::fprintf(stderr, "output %zu unbounded\n", conn.output().size());
      std::abort();
    }
    if (conn.NextDeadline() <= now) conn.OnTimer(now);
  }
  if (piece % 3 == 0) conn.GracefulShutdown(now);
  conn.OnTimer(now + int64_t{60} * 1000 * 1000 * 1000);
  conn.ConsumeOutput(conn.output().size());
  return 0;
}
