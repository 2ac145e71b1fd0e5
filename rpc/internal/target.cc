#include "rpc/internal/target.h"

#include <arpa/inet.h>

#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "rpc/wire/percent.h"

namespace rpc {
namespace internal {

namespace {

constexpr uint16_t kDefaultPort = 443;

absl::Status Bad(absl::string_view target, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("bad target \"", target, "\": ", why));
}

// "host" or "[v6]" with ":port" as written.
std::string JoinHostPort(absl::string_view host, absl::string_view port) {
  std::string out = absl::StrContains(host, ':') ? absl::StrCat("[", host, "]")
                                                 : std::string(host);
  if (!port.empty()) absl::StrAppend(&out, ":", port);
  return out;
}

// Splits into host and the port text ("" when none).
absl::Status SplitHostPortText(absl::string_view in, std::string* host,
                               absl::string_view* port) {
  *port = absl::string_view();
  if (in.empty()) return absl::InvalidArgumentError("empty host");
  if (in.front() == '[') {
    const size_t close = in.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError("missing ']'");
    }
    *host = std::string(in.substr(1, close - 1));
    absl::string_view rest = in.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return absl::InvalidArgumentError("junk after ']'");
      }
      *port = rest.substr(1);
      if (port->empty()) return absl::InvalidArgumentError("empty port");
    }
  } else {
    const size_t colon = in.find(':');
    if (colon == absl::string_view::npos) {
      *host = std::string(in);
    } else if (in.find(':', colon + 1) != absl::string_view::npos) {
      // A bare IPv6 address, no port; anything else with two colons (an
      // unknown "scheme://...") is not a host.
      in6_addr v6;
      if (inet_pton(AF_INET6, std::string(in).c_str(), &v6) != 1) {
        return absl::InvalidArgumentError(
            "not host[:port] (unknown scheme? IPv6 addresses go in [])");
      }
      *host = std::string(in);
    } else {
      *host = std::string(in.substr(0, colon));
      *port = in.substr(colon + 1);
      if (port->empty()) return absl::InvalidArgumentError("empty port");
    }
  }
  if (host->empty()) return absl::InvalidArgumentError("empty host");
  return absl::OkStatus();
}

// Digits only ("+80", " 80" and "0x50" are not ports), 1..65535.
absl::StatusOr<uint16_t> ParsePort(absl::string_view text) {
  if (text.empty()) return kDefaultPort;
  uint32_t port = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || port > 65535) {
      port = 65536;
      break;
    }
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port == 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bad port \"", text, "\""));
  }
  return static_cast<uint16_t>(port);
}

// Consumes `scheme` (with its ':') from the front of *in, case-insensitively
// (URI schemes are).
bool ConsumeScheme(absl::string_view* in, absl::string_view scheme) {
  if (!absl::StartsWithIgnoreCase(*in, scheme)) return false;
  in->remove_prefix(scheme.size());
  return true;
}

absl::Status ParseAddressList(absl::string_view target, absl::string_view list,
                              int family, Target* out) {
  if (list.empty()) return Bad(target, "no address");
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    std::string host;
    absl::string_view port_text;
    if (absl::Status s = SplitHostPortText(item, &host, &port_text); !s.ok()) {
      return Bad(target, s.message());
    }
    absl::StatusOr<uint16_t> port = ParsePort(port_text);
    if (!port.ok()) return Bad(target, port.status().message());
    absl::StatusOr<transport::SocketAddress> addr =
        transport::SocketAddress::Parse(host, *port);
    if (!addr.ok() || addr->family() != family) {
      return Bad(target,
                 absl::StrCat("\"", item, "\" is not an ",
                              family == AF_INET ? "IPv4" : "IPv6", " address"));
    }
    if (out->addresses.empty()) {
      out->host = host;
      out->port = *port;
      out->authority = JoinHostPort(host, port_text);
    }
    out->addresses.push_back(*addr);
  }
  return absl::OkStatus();
}

absl::Status ParseDns(absl::string_view target, absl::string_view rest,
                      Target* out) {
  out->scheme = Target::Scheme::kDns;
  std::string host;
  absl::string_view port_text;
  if (absl::Status s = SplitHostPortText(rest, &host, &port_text); !s.ok()) {
    return Bad(target, s.message());
  }
  absl::StatusOr<uint16_t> port = ParsePort(port_text);
  if (!port.ok()) return Bad(target, port.status().message());
  std::optional<std::string> decoded = PercentDecodeStrict(host);
  if (!decoded.has_value()) return Bad(target, "bad percent-encoding");
  out->host = *std::move(decoded);
  out->port = *port;
  out->authority = JoinHostPort(out->host, port_text);
  return absl::OkStatus();
}

}  // namespace

absl::Status SplitHostPort(absl::string_view host_port, uint16_t default_port,
                           std::string* host, uint16_t* port) {
  absl::string_view port_text;
  if (absl::Status s = SplitHostPortText(host_port, host, &port_text);
      !s.ok()) {
    return s;
  }
  if (port_text.empty()) {
    *port = default_port;
    return absl::OkStatus();
  }
  absl::StatusOr<uint16_t> p = ParsePort(port_text);
  if (!p.ok()) return p.status();
  *port = *p;
  return absl::OkStatus();
}

absl::StatusOr<Target> ParseTarget(absl::string_view target) {
  Target out;
  absl::string_view rest;
  if (ConsumeScheme(&(rest = target), "dns:")) {
    if (absl::ConsumePrefix(&rest, "//")) {
      const size_t slash = rest.find('/');
      if (slash == absl::string_view::npos) {
        return Bad(target, "want dns://[authority]/host[:port]");
      }
      out.dns_server = std::string(rest.substr(0, slash));
      rest = rest.substr(slash + 1);
    }
    if (absl::Status s = ParseDns(target, rest, &out); !s.ok()) return s;
    return out;
  }
  if (ConsumeScheme(&(rest = target), "ipv4:")) {
    out.scheme = Target::Scheme::kIpv4;
    if (absl::Status s = ParseAddressList(target, rest, AF_INET, &out);
        !s.ok()) {
      return s;
    }
    return out;
  }
  if (ConsumeScheme(&(rest = target), "ipv6:")) {
    out.scheme = Target::Scheme::kIpv6;
    if (absl::Status s = ParseAddressList(target, rest, AF_INET6, &out);
        !s.ok()) {
      return s;
    }
    return out;
  }
  if (ConsumeScheme(&(rest = target), "unix:")) {
    out.scheme = Target::Scheme::kUnix;
    if (absl::ConsumePrefix(&rest, "//")) {
      // unix://absolute_path: the path keeps its leading '/'.
      if (!absl::StartsWith(rest, "/")) {
        return Bad(target, "want unix:///absolute/path");
      }
    }
    if (rest.empty()) return Bad(target, "empty path");
    std::optional<std::string> path =
        PercentDecodeStrict(std::string_view(rest.data(), rest.size()));
    if (!path.has_value()) return Bad(target, "bad percent-encoding");
    absl::StatusOr<transport::SocketAddress> addr =
        transport::SocketAddress::Unix(*path);
    if (!addr.ok()) return Bad(target, addr.status().message());
    out.addresses.push_back(*addr);
    out.unix_path = *std::move(path);
    out.host = "localhost";
    out.authority = "localhost";
    return out;
  }
  if (absl::Status s = ParseDns(target, target, &out); !s.ok()) return s;
  return out;
}

}  // namespace internal
}  // namespace rpc
