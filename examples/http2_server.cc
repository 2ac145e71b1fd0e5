// http2_server: a small HTTP/2 server on //transport, the harness of the
// real-peer tests (tests/peers) and of benchmarks/h2load_compare.sh.
//
//   http2_server --root=DIR [--port=N] [--host=127.0.0.1] [--threads=N]
//                [--tls_cert=FILE --tls_key=FILE]
//                [--compress_min_bytes=N] [--compress_max_bytes=N]
//                [--encodings=zstd,gzip,...]
//
// Serves files under --root (GET and HEAD; content type by extension; 404;
// paths with ".." are refused), and answers POST /echo with the request body,
// streamed back under flow control: a received piece is released to the
// client's window only once its echo has gone to the connection, so a client
// that uploads faster than it reads is slowed down, and memory stays bounded.
// Prints "listening on port N" (flushed) once it accepts connections; SIGINT
// or SIGTERM shut it down gracefully.
//
// Small files (up to 1 MiB) are cached per loop thread and revalidated with
// stat() at most once a second; larger ones are read in 256 KiB chunks as the
// connection takes them.
//
// Compression (issue 6): a GET or HEAD of a file of at least
// --compress_min_bytes (default 1024) and at most --compress_max_bytes
// (default 16 MiB) octets, of a type not compressed already, negotiates the
// request's accept-encoding with rpc::compression's Negotiator (the default
// one, zstd > gzip > deflate, or one built at start-up from --encodings, the
// server's order of preference) and answers with `vary: accept-encoding` and,
// unless identity was chosen, `content-encoding` and the compressed length as
// content-length. Nothing acceptable (`identity;q=0`, `*;q=0`): 406. The rules
// are in content_coding.h. Each loop thread compresses a version of a file
// (path, size, mtime, inode) once per encoding and keeps the result next to
// its cached body; files above the small-file cache's 1 MiB are read whole
// for it. --encodings= (empty) turns compression off.

#include "transport/http/http2_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "examples/content_coding.h"
#include "rpc/compression/accept_encoding.h"
#include "rpc/compression/encoding.h"
#include "rpc/compression/negotiator.h"
#include "transport/slice/slice.h"
#include "transport/tls/tls.h"

namespace {

using examples::CodingDecision;
using examples::CodingOptions;
using rpc::compression::Encoding;
using transport::Http2ServerStream;
using transport::SliceBuffer;

constexpr size_t kCacheableSize = 1 << 20;
constexpr size_t kChunkSize = 256 << 10;

std::string_view ContentType(std::string_view path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string_view::npos ||
      (slash != std::string_view::npos && dot < slash)) {
    return "application/octet-stream";
  }
  const std::string_view ext = path.substr(dot + 1);
  static const std::pair<std::string_view, std::string_view> kTypes[] = {
      {"html", "text/html; charset=utf-8"},
      {"htm", "text/html; charset=utf-8"},
      {"txt", "text/plain; charset=utf-8"},
      {"css", "text/css"},
      {"js", "text/javascript"},
      {"mjs", "text/javascript"},
      {"json", "application/json"},
      {"xml", "application/xml"},
      {"png", "image/png"},
      {"jpg", "image/jpeg"},
      {"jpeg", "image/jpeg"},
      {"gif", "image/gif"},
      {"svg", "image/svg+xml"},
      {"ico", "image/x-icon"},
      {"webp", "image/webp"},
      {"wasm", "application/wasm"},
      {"pdf", "application/pdf"},
  };
  for (const auto& t : kTypes) {
    if (t.first == ext) return t.second;
  }
  return "application/octet-stream";
}

// A file cached for one loop thread: its identity and, when small, its body;
// its compressed bodies once asked for.
struct CachedFile {
  transport::Slice data;
  bool has_data = false;  // Small file: `data` is the body.
  examples::EncodedVariants encoded;
  struct timespec mtime;
  off_t size;
  ino_t ino;
  absl::Time checked;
};

bool SameFile(const CachedFile& c, const struct stat& st) {
  return c.size == st.st_size && c.ino == st.st_ino &&
         c.mtime.tv_sec == st.st_mtim.tv_sec &&
         c.mtime.tv_nsec == st.st_mtim.tv_nsec;
}

// Reads `n` octets at `offset` into new block space at the end of *out.
bool ReadInto(int fd, off_t offset, size_t n, SliceBuffer* out) {
  size_t available = 0;
  uint8_t* p = out->PrepareAppend(n, &available);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, p + got, n - got, offset + got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  out->CommitAppend(got);
  return true;
}

class FileServer : public transport::Http2Handler {
 public:
  FileServer(std::string root, CodingOptions coding)
      : root_(std::move(root)), coding_(coding) {}

  void OnRequest(Http2ServerStream* stream) override {
    std::string_view path = stream->path();
    const std::string_view method = stream->method();
    const size_t query = path.find('?');
    if (query != std::string_view::npos) path = path.substr(0, query);
    if (path == "/echo") {
      if (method == "POST" || method == "PUT") {
        Echo(stream);
      } else {
        Simple(stream, "405", "use POST for /echo\n");
      }
      return;
    }
    if (method != "GET" && method != "HEAD") {
      Simple(stream, "405", "method not allowed\n");
      return;
    }
    if (path.empty() || path[0] != '/' ||
        path.find("..") != std::string_view::npos ||
        path.find('\0') != std::string_view::npos) {
      Simple(stream, "400", "bad path\n");
      return;
    }
    ServeFile(stream, path, method == "HEAD");
  }

 private:
  // Per loop thread: no locks on the hot path.
  static std::unordered_map<std::string, CachedFile>& Cache() {
    thread_local std::unordered_map<std::string, CachedFile> cache;
    return cache;
  }

  static void Simple(Http2ServerStream* stream, std::string_view status,
                     std::string_view body) {
    const std::string length = absl::StrCat(body.size());
    const hpack::HeaderField headers[] = {
        {":status", status},
        {"content-type", "text/plain; charset=utf-8"},
        {"content-length", length}};
    stream->Respond(headers, /*end_stream=*/false).IgnoreError();
    SliceBuffer data;
    data.Append(body);
    stream->Write(std::move(data), /*end_stream=*/true).IgnoreError();
  }

  // `encoding`: content-encoding unless identity; `vary`: vary:
  // accept-encoding.
  static void RespondFile(Http2ServerStream* stream, std::string_view path,
                          size_t size, bool end_stream,
                          Encoding encoding = Encoding::kIdentity,
                          bool vary = false) {
    const absl::AlphaNum length(size);  // Digits on the stack, no printf.
    hpack::HeaderField headers[5] = {
        {":status", "200"},
        {"content-type", ContentType(path)},
        {"content-length", std::string_view(length.data(), length.size())}};
    size_t n = 3;
    if (encoding != Encoding::kIdentity) {
      headers[n++] = {"content-encoding",
                      rpc::compression::EncodingName(encoding)};
    }
    if (vary) headers[n++] = {"vary", "accept-encoding"};
    stream->Respond(absl::MakeConstSpan(headers, n), end_stream).IgnoreError();
  }

  void ServeFile(Http2ServerStream* stream, std::string_view path, bool head) {
    // Reused per loop thread: no allocation per request once warm.
    thread_local std::string full;
    full.assign(root_);
    full.append(path.data(), path.size());
    if (full.back() == '/') full += "index.html";

    auto& cache = Cache();
    const absl::Time now = absl::Now();
    auto it = cache.find(full);
    if (it != cache.end() && now - it->second.checked < absl::Seconds(1)) {
      Send(stream, path, it->second, head);
      return;
    }
    struct stat st;
    if (::stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      if (it != cache.end()) cache.erase(it);
      Simple(stream, "404", "not found\n");
      return;
    }
    if (it != cache.end() && SameFile(it->second, st)) {
      it->second.checked = now;
      Send(stream, path, it->second, head);
      return;
    }
    // A new file or a new version: forget the old one's bodies.
    if (it != cache.end()) cache.erase(it);
    const size_t size = static_cast<size_t>(st.st_size);
    SliceBuffer body;
    if (size <= kCacheableSize) {
      const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        Simple(stream, "404", "not found\n");
        return;
      }
      const bool ok = size == 0 || ReadInto(fd, 0, size, &body);
      ::close(fd);
      if (!ok) {
        Simple(stream, "500", "read failed\n");
        return;
      }
    }
    // Large files are cached too, without their body: their identity, and
    // their compressed bodies once made.
    CachedFile& c = cache[full];
    c.has_data = size <= kCacheableSize;
    c.data = body.empty() ? transport::Slice() : body.front();
    c.mtime = st.st_mtim;
    c.size = st.st_size;
    c.ino = st.st_ino;
    c.checked = now;
    Send(stream, path, c, head);
  }

  // The value of the request's accept-encoding, nullopt if absent.
  static std::optional<std::string_view> AcceptEncoding(
      Http2ServerStream* stream) {
    for (const hpack::HeaderField& f : stream->request_headers()) {
      if (f.name == "accept-encoding") return f.value;
    }
    return std::nullopt;
  }

  void Send(Http2ServerStream* stream, std::string_view path, CachedFile& file,
            bool head) {
    const size_t size = static_cast<size_t>(file.size);
    CodingDecision coding;
    if (size >= coding_.min_bytes) {  // Small files: no header lookup.
      coding = examples::ChooseCoding(coding_, AcceptEncoding(stream), size,
                                      ContentType(path));
    }
    if (coding.not_acceptable) {
      Simple(stream, "406", "no acceptable content-coding\n");
      return;
    }
    if (coding.encoding != Encoding::kIdentity) {
      const transport::Slice* encoded = nullptr;
      if (file.encoded.computed(coding.encoding) || file.has_data) {
        encoded = file.encoded.Get(coding.encoding, file.data.view());
      } else {
        std::string whole;
        if (!ReadWhole(path, size, &whole)) {
          Simple(stream, "500", "read failed\n");
          return;
        }
        encoded = file.encoded.Get(coding.encoding, whole);
      }
      if (encoded != nullptr) {  // Else not smaller: identity.
        SendBody(stream, path, *encoded, head, coding);
        return;
      }
      coding.encoding = Encoding::kIdentity;
    }
    if (file.has_data) {
      SendBody(stream, path, file.data, head, coding);
      return;
    }
    // A large file, identity: from the disk.
    thread_local std::string full;
    full.assign(root_);
    full.append(path.data(), path.size());
    if (full.back() == '/') full += "index.html";
    const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      Simple(stream, "404", "not found\n");
      return;
    }
    if (head || size == 0) {
      ::close(fd);
      RespondFile(stream, path, size, /*end_stream=*/true, coding.encoding,
                  coding.vary);
      return;
    }
    RespondFile(stream, path, size, /*end_stream=*/false, coding.encoding,
                coding.vary);
    StreamFile(stream, fd, size);
  }

  // Reads the file at `path` (under the root), expecting `size` octets.
  bool ReadWhole(std::string_view path, size_t size, std::string* out) const {
    std::string full = root_;
    full.append(path.data(), path.size());
    if (full.back() == '/') full += "index.html";
    const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    out->resize(size);
    size_t got = 0;
    while (got < size) {
      const ssize_t r = ::pread(fd, out->data() + got, size - got, got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    ::close(fd);
    return got == size;
  }

  static void SendBody(Http2ServerStream* stream, std::string_view path,
                       const transport::Slice& data, bool head,
                       const CodingDecision& coding) {
    const size_t size = data.size();
    if (head || size == 0) {
      RespondFile(stream, path, size, /*end_stream=*/true, coding.encoding,
                  coding.vary);
      return;
    }
    RespondFile(stream, path, size, /*end_stream=*/false, coding.encoding,
                coding.vary);
    SliceBuffer body;
    body.Append(data);  // A reference, no copy.
    stream->Write(std::move(body), /*end_stream=*/true).IgnoreError();
  }

  // Large files: one chunk at a time, the next when the last has gone to the
  // connection.
  struct FileStreamer {
    Http2ServerStream* stream;
    int fd;
    size_t size;
    size_t offset = 0;
    ~FileStreamer() {
      if (fd >= 0) ::close(fd);
    }
    void Pump() {
      while (offset < size && !stream->write_blocked()) {
        const size_t n = std::min(kChunkSize, size - offset);
        SliceBuffer chunk;
        if (!ReadInto(fd, static_cast<off_t>(offset), n, &chunk)) {
          stream->Reset(transport::Http2ErrorCode::kInternalError);
          return;
        }
        offset += n;
        if (!stream->Write(std::move(chunk), offset == size).ok()) return;
      }
    }
  };

  static void StreamFile(Http2ServerStream* stream, int fd, size_t size) {
    auto streamer = std::make_shared<FileStreamer>();
    streamer->stream = stream;
    streamer->fd = fd;
    streamer->size = size;
    Http2ServerStream::Callbacks callbacks;
    callbacks.on_writable = [streamer] { streamer->Pump(); };
    callbacks.on_close = [streamer](transport::Http2ErrorCode) {
      streamer->offset = streamer->size;  // Stop.
    };
    stream->SetCallbacks(std::move(callbacks));
    streamer->Pump();
  }

  // POST /echo: each piece is written back as received (the same Slice), and
  // released to the client's window once it left the stream's queue.
  struct Echoer {
    Http2ServerStream* stream;
    size_t unreleased = 0;
    void Release() {
      if (unreleased > 0 && !stream->write_blocked()) {
        stream->ConsumeData(unreleased);
        unreleased = 0;
      }
    }
  };

  static void Echo(Http2ServerStream* stream) {
    std::string_view content_type = "application/octet-stream";
    for (const hpack::HeaderField& f : stream->request_headers()) {
      if (f.name == "content-type") content_type = f.value;
    }
    const hpack::HeaderField headers[] = {{":status", "200"},
                                          {"content-type", content_type}};
    stream->Respond(headers, /*end_stream=*/false).IgnoreError();
    auto echoer = std::make_shared<Echoer>();
    echoer->stream = stream;
    Http2ServerStream::Callbacks callbacks;
    callbacks.on_data = [echoer](transport::Slice piece) {
      echoer->unreleased += piece.size();
      SliceBuffer data;
      data.Append(std::move(piece));
      echoer->stream->Write(std::move(data), /*end_stream=*/false)
          .IgnoreError();
      echoer->Release();
    };
    callbacks.on_writable = [echoer] { echoer->Release(); };
    callbacks.on_end = [echoer] {
      echoer->stream->Write(SliceBuffer(), /*end_stream=*/true).IgnoreError();
    };
    stream->SetCallbacks(std::move(callbacks), /*manual_flow_control=*/true);
  }

  const std::string root_;
  const CodingOptions coding_;
};

bool Flag(std::string_view arg, std::string_view name, std::string* value) {
  if (arg.size() < name.size() + 3 || arg.substr(0, 2) != "--" ||
      arg.substr(2, name.size()) != name || arg[name.size() + 2] != '=') {
    return false;
  }
  *value = std::string(arg.substr(name.size() + 3));
  return true;
}

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --root=DIR [--port=N] [--host=ADDR] [--threads=N] "
               "[--tls_cert=FILE --tls_key=FILE] [--compress_min_bytes=N] "
               "[--compress_max_bytes=N] [--encodings=zstd,gzip,deflate]\n",
               argv0);
  return 2;
}

// The Negotiator for --encodings (names in the server's order of
// preference), or nullptr if a name is unknown. The default list gets the
// compile-time kDefaultNegotiator; any other a Negotiator built here, once.
const rpc::compression::Negotiator* MakeNegotiator(std::string_view list) {
  using rpc::compression::Preference;
  std::vector<Encoding> order;
  while (!list.empty()) {
    const size_t comma = std::min(list.find(','), list.size());
    const std::string_view name = list.substr(0, comma);
    list.remove_prefix(std::min(comma + 1, list.size()));
    if (name.empty()) continue;
    // One coding name, OWS trimmed, any case.
    const std::optional<Encoding> e = rpc::compression::ParseGrpcEncoding(name);
    if (!e.has_value()) return nullptr;
    order.push_back(*e);
  }
  // Preference takes an initializer_list: at most four names, by count
  // (duplicates are dropped by Preference itself).
  std::optional<Preference> preference;
  switch (order.size()) {
    case 0:
      preference.emplace(Preference{});
      break;
    case 1:
      preference.emplace(Preference{order[0]});
      break;
    case 2:
      preference.emplace(Preference{order[0], order[1]});
      break;
    case 3:
      preference.emplace(Preference{order[0], order[1], order[2]});
      break;
    case 4:
      preference.emplace(Preference{order[0], order[1], order[2], order[3]});
      break;
    default:
      return nullptr;
  }
  if (*preference == rpc::compression::kDefaultPreference) {
    return &rpc::compression::kDefaultNegotiator;
  }
  static const rpc::compression::Negotiator* custom =
      new rpc::compression::Negotiator(*preference);
  return custom;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root, port = "0", host = "127.0.0.1", threads = "1", cert, key;
  std::string min_bytes = "1024", max_bytes = "16777216",
              encodings = "zstd,gzip,deflate";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!Flag(arg, "root", &root) && !Flag(arg, "port", &port) &&
        !Flag(arg, "host", &host) && !Flag(arg, "threads", &threads) &&
        !Flag(arg, "tls_cert", &cert) && !Flag(arg, "tls_key", &key) &&
        !Flag(arg, "compress_min_bytes", &min_bytes) &&
        !Flag(arg, "compress_max_bytes", &max_bytes) &&
        !Flag(arg, "encodings", &encodings)) {
      std::fprintf(stderr, "unknown argument: %s\n", argv[i]);
      return Usage(argv[0]);
    }
  }
  int port_number = 0, thread_count = 1;
  if (root.empty() || !absl::SimpleAtoi(port, &port_number) ||
      port_number < 0 || port_number > 65535 ||
      !absl::SimpleAtoi(threads, &thread_count) || thread_count < 1 ||
      cert.empty() != key.empty()) {
    return Usage(argv[0]);
  }
  CodingOptions coding;
  coding.negotiator = MakeNegotiator(encodings);
  if (coding.negotiator == nullptr ||
      !absl::SimpleAtoi(min_bytes, &coding.min_bytes) ||
      !absl::SimpleAtoi(max_bytes, &coding.max_bytes)) {
    std::fprintf(stderr,
                 "bad --encodings (zstd, gzip, deflate, identity) or "
                 "--compress_min_bytes/--compress_max_bytes\n");
    return Usage(argv[0]);
  }
  while (root.size() > 1 && root.back() == '/') root.pop_back();

  transport::Http2ServerOptions options;
  absl::StatusOr<transport::SocketAddress> address =
      transport::SocketAddress::Parse(host, static_cast<uint16_t>(port_number));
  if (!address.ok()) {
    std::fprintf(stderr, "bad --host: %s\n",
                 address.status().ToString().c_str());
    return 2;
  }
  options.address = *address;
  options.num_threads = thread_count;
  if (!cert.empty()) {
    transport::TlsServerOptions tls;
    absl::StatusOr<std::string> chain = transport::ReadPemFile(cert);
    absl::StatusOr<std::string> pkey = transport::ReadPemFile(key);
    if (!chain.ok() || !pkey.ok()) {
      std::fprintf(stderr, "cannot read --tls_cert/--tls_key\n");
      return 1;
    }
    tls.certificate_chain_pem = *chain;
    tls.private_key_pem = *pkey;
    auto context = transport::TlsContext::CreateServer(tls);
    if (!context.ok()) {
      std::fprintf(stderr, "TLS: %s\n", context.status().ToString().c_str());
      return 1;
    }
    options.tls = *context;
  }

  // The loops inherit this mask; the main thread waits for the signal.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  FileServer handler(root, coding);
  auto server = transport::Http2Server::Start(options, &handler);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  std::printf("listening on port %u\n",
              static_cast<unsigned>((*server)->port()));
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  (*server)->Shutdown(absl::Seconds(5));
  return 0;
}
