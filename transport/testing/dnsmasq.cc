#include "transport/testing/dnsmasq.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "transport/io/socket.h"

namespace transport {
namespace testing {
namespace {

constexpr int kStartTries = 5;
constexpr absl::Duration kReadyTimeout = absl::Seconds(5);

// A port that was free a moment ago: bind a UDP socket to 127.0.0.1:0.
absl::StatusOr<uint16_t> PickUdpPort() {
  ScopedFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::ErrnoToStatus(errno, "socket");
  const SocketAddress any = SocketAddress::Loopback(AF_INET, 0);
  if (::bind(fd.get(), any.addr(), any.len()) != 0) {
    return absl::ErrnoToStatus(errno, "bind 127.0.0.1:0");
  }
  absl::StatusOr<SocketAddress> local = SocketAddress::LocalOf(fd.get());
  if (!local.ok()) return local.status();
  return local->port();
}

std::string CurrentUserName() {
  char buf[4096];
  passwd pw;
  passwd* result = nullptr;
  if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &result) == 0 &&
      result != nullptr) {
    return result->pw_name;
  }
  return std::string();
}

// A DNS query for `name` type A, id `id`.
std::string QueryPacket(uint16_t id, std::string_view name) {
  std::string p;
  p.push_back(static_cast<char>(id >> 8));
  p.push_back(static_cast<char>(id & 0xff));
  p.append("\x01\x00", 2);                          // RD
  p.append("\x00\x01\x00\x00\x00\x00\x00\x00", 8);  // QDCOUNT 1
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    p.push_back(static_cast<char>(dot - start));
    p.append(name.data() + start, dot - start);
    start = dot + 1;
  }
  p.push_back('\0');
  p.append("\x00\x01\x00\x01", 4);  // A, IN
  return p;
}

// The hosts-file text of `records` ("ADDRESS NAME" lines).
absl::StatusOr<std::string> HostsFile(
    const std::vector<std::pair<std::string, std::string>>& records) {
  std::string text;
  for (const auto& [name, address] : records) {
    if (name.empty() || absl::StrContains(name, ' ') ||
        absl::StrContains(name, '\n') ||
        !SocketAddress::Parse(address, 0).ok() || address == "localhost") {
      return absl::InvalidArgumentError(
          absl::StrCat("bad record '", name, "' -> '", address, "'"));
    }
    absl::StrAppend(&text, address, " ", name, "\n");
  }
  return text;
}

// Writes `text` to `path` through a temporary file and rename, so dnsmasq
// never reads half a file.
absl::Status WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return absl::ErrnoToStatus(errno, "fopen " + tmp);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) {
    return absl::ErrnoToStatus(errno, "write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::ErrnoToStatus(errno, "rename " + tmp);
  }
  return absl::OkStatus();
}

// True once a server on 127.0.0.1:`port` answers a query (any answer).
bool Answers(uint16_t port, absl::Duration wait) {
  ScopedFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return false;
  const SocketAddress server = SocketAddress::Loopback(AF_INET, port);
  if (::connect(fd.get(), server.addr(), server.len()) != 0) return false;
  const uint16_t id = static_cast<uint16_t>(getpid() ^ port);
  const std::string query = QueryPacket(id, "dnsmasq-ready.invalid");
  if (::send(fd.get(), query.data(), query.size(), 0) < 0) return false;
  pollfd p = {fd.get(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(wait))) <= 0) {
    return false;
  }
  unsigned char reply[512];
  const ssize_t n = ::recv(fd.get(), reply, sizeof(reply), 0);
  return n >= 12 && reply[0] == (id >> 8) && reply[1] == (id & 0xff) &&
         (reply[2] & 0x80) != 0;  // QR: a response
}

}  // namespace

absl::StatusOr<std::unique_ptr<DnsmasqServer>> DnsmasqServer::Start(
    const std::vector<std::pair<std::string, std::string>>& records) {
  if (::access(kDnsmasqPath, X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("dnsmasq not found at ", kDnsmasqPath,
                     ": install dnsmasq-base (./bazelw installs it)"));
  }
  absl::StatusOr<std::string> hosts = HostsFile(records);
  if (!hosts.ok()) return hosts.status();
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  std::string dir =
      absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp",
                   "/dnsmasq.XXXXXX");
  if (::mkdtemp(dir.data()) == nullptr) {
    return absl::ErrnoToStatus(errno, "mkdtemp " + dir);
  }
  const std::string hosts_path = dir + "/hosts";
  if (absl::Status s = WriteAtomically(hosts_path, *hosts); !s.ok()) return s;
  const std::string user = CurrentUserName();
  std::string last_output;
  for (int attempt = 0; attempt < kStartTries; ++attempt) {
    absl::StatusOr<uint16_t> port = PickUdpPort();
    if (!port.ok()) return port.status();
    std::vector<std::string> argv = {
        kDnsmasqPath,
        "--keep-in-foreground",
        "--conf-file=/dev/null",
        "--no-resolv",
        "--no-hosts",
        "--listen-address=127.0.0.1",
        "--bind-interfaces",
        absl::StrCat("--port=", *port),
        "--pid-file=",
        "--log-facility=-",
        // Every name is local: NXDOMAIN instead of REFUSED for unknown ones.
        "--local=/#/",
    };
    if (!user.empty()) argv.push_back(absl::StrCat("--user=", user));
    // No group change: inside a user namespace (Bazel's sandbox) setgid to
    // dnsmasq's default group "dip" fails with EPERM.
    argv.push_back("--group=");
    argv.push_back("--addn-hosts=" + hosts_path);
    absl::StatusOr<std::unique_ptr<Subprocess>> process =
        Subprocess::Start(argv);
    if (!process.ok()) return process.status();

    const absl::Time deadline = absl::Now() + kReadyTimeout;
    bool exited = false;
    while (absl::Now() < deadline) {
      if (Answers(*port, absl::Milliseconds(100))) {
        return std::unique_ptr<DnsmasqServer>(
            new DnsmasqServer(std::move(*process), *port, dir));
      }
      if ((*process)->WaitForExit(absl::ZeroDuration()).ok()) {
        exited = true;
        break;
      }
    }
    (*process)->ReadAvailable();
    last_output = (*process)->output();
    // Someone took the port between the pick and dnsmasq's bind: try
    // another. Anything else is not going to get better.
    if (!exited || !absl::StrContains(last_output, "in use")) break;
  }
  std::remove(hosts_path.c_str());
  ::rmdir(dir.c_str());
  return absl::UnavailableError(
      absl::StrCat("dnsmasq did not start: ", last_output));
}

DnsmasqServer::~DnsmasqServer() {
  process_.reset();  // kills and reaps
  std::remove(hosts_path().c_str());
  ::rmdir(dir_.c_str());
}

absl::Status DnsmasqServer::SetRecords(
    const std::vector<std::pair<std::string, std::string>>& records) {
  absl::StatusOr<std::string> hosts = HostsFile(records);
  if (!hosts.ok()) return hosts.status();
  // dnsmasq logs "read PATH - N names" each time it loads the file.
  const std::string loaded = "read " + hosts_path() + " - ";
  auto loads = [&] {
    process_->ReadAvailable();
    const std::string& out = process_->output();
    size_t n = 0;
    for (size_t at = out.find(loaded); at != std::string::npos;
         at = out.find(loaded, at + 1)) {
      ++n;
    }
    return n;
  };
  const size_t before = loads();
  if (absl::Status s = WriteAtomically(hosts_path(), *hosts); !s.ok()) {
    return s;
  }
  if (::kill(process_->pid(), SIGHUP) != 0) {
    return absl::ErrnoToStatus(errno, "kill SIGHUP dnsmasq");
  }
  const absl::Time deadline = absl::Now() + kReadyTimeout;
  while (loads() == before) {
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "dnsmasq did not re-read ", hosts_path(), ": ", process_->output()));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return absl::OkStatus();
}

std::string DnsmasqServer::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

std::string DnsmasqServer::output() {
  process_->ReadAvailable();
  return process_->output();
}

}  // namespace testing
}  // namespace transport
