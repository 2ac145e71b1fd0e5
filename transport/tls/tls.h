// TLS for HTTP/2 through OpenSSL: TlsContext (configuration, shared) and
// TlsSession (one connection's TLS state, sans-IO).
//
// Policy, the same for both roles (RFC 9113 section 9.2):
//   * TLS 1.2 minimum, 1.3 preferred; TLS 1.2 only with ephemeral key
//     exchange and AEAD ciphers (ECDHE + AES-GCM or ChaCha20-Poly1305);
//     compression and renegotiation off.
//   * ALPN offers and selects only "h2". A server refuses a client that
//     offers ALPN without "h2" (fatal no_application_protocol alert); a
//     session whose handshake ends without "h2" negotiated fails the
//     handshake with kFailedPrecondition, whichever side lacked it.
//   * A client verifies the server's chain and its name (DNS name or IP
//     literal) by default; `server_name_override` checks (and sends as SNI) a
//     different name than the one dialled, like gRPC's
//     ssl_target_name_override. A server can require client certificates.
//   * Session resumption (RFC 8446 section 2.2, RFC 5077): a server issues
//     stateless tickets (one per handshake, sealed with AES-256-CBC +
//     HMAC-SHA256 keys that live in its TlsContext and rotate:
//     ticket_key_rotation, session_lifetime; no server-side cache). A client
//     TlsContext keeps a bounded LRU cache of sessions, one per server name (+
//     address when the caller gives it), so the next connection made with the
//     same context resumes: an abbreviated handshake without certificates. TLS
//     1.3 tickets are used once (taken from the cache; the resumed
//     connection brings a fresh one), TLS 1.2 sessions are kept. The peer
//     certificate and its verification result come from the resumed session.
//
// TlsSession is sans-IO: no sockets, no loop. Ciphertext from the network
// goes in (InputSpace/CommitInput or FeedCiphertext), ciphertext for the
// network comes out (PendingOutput/ConsumeOutput), plaintext moves through
// Read/Write. Both directions are fixed-size buffers inside a BIO pair, so a
// session's memory is bounded and the socket layer can read into and write
// from them without a copy. tls_endpoint.h drives a session over an
// Endpoint; tests drive two sessions against each other in memory.
//
// Threading: a TlsContext is immutable after creation (but for a client's
// session cache, which locks) and may be shared by sessions on every thread.
// A TlsSession belongs to one thread (its loop's).
//
// Errors (absl::Status): kUnauthenticated for certificate problems (chain
// not trusted, name mismatch, missing client certificate, a peer's
// certificate alert); kFailedPrecondition when ALPN h2 was not agreed;
// kInvalidArgument for bad configuration (PEM that does not parse, a key that
// does not match); kUnavailable for every other handshake or record failure.
// The message carries OpenSSL's reasons. After an error a session is dead
// (every call returns it), but PendingOutput may still hold an alert to send.

#ifndef TRANSPORT_TLS_TLS_H_
#define TRANSPORT_TLS_TLS_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "transport/io/endpoint.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;
typedef struct bio_st BIO;
typedef struct x509_st X509;
typedef struct ssl_session_st SSL_SESSION;

namespace transport {

enum class TlsVersion { kTls12, kTls13 };

struct TlsServerOptions {
  // PEM: the leaf certificate first, then intermediates.
  std::string certificate_chain_pem;
  std::string private_key_pem;
  // Non-empty: ask clients for a certificate and verify it against these
  // roots (PEM, one or more certificates).
  std::string client_ca_pem;
  // With client_ca_pem: refuse clients without a certificate (mTLS).
  bool require_client_certificate = false;
  TlsVersion min_version = TlsVersion::kTls12;
  TlsVersion max_version = TlsVersion::kTls13;
  // Issue session tickets so that clients can resume (stateless: the server
  // keeps nothing per client).
  bool session_tickets = true;
  // Tickets are sealed with a key that is replaced this often (a fresh
  // random AES-256 + HMAC-SHA256 key); a key still opens tickets for
  // session_lifetime after it stopped sealing them (rotation after it was
  // made, whether or not a handshake came since), then it is erased. So
  // a key taken from memory exposes at most rotation + lifetime of
  // resumable sessions, not the server's whole life.
  absl::Duration ticket_key_rotation = absl::Hours(12);
  // How long a session can be resumed (the ticket lifetime hint).
  absl::Duration session_lifetime = absl::Hours(2);
  // Testing seam: the clock that ticket keys are created, retired and erased
  // by (null: absl::Now()), so a test crosses a rotation without waiting for
  // it. Called from handshakes, on any thread. OpenSSL still ages sessions by
  // the real clock.
  std::function<absl::Time()> ticket_key_clock;
};

struct TlsClientOptions {
  // Trusted roots (PEM). Empty: the system's default trust store.
  std::string root_certificates_pem;
  // false: accept any server certificate and name. For tests and debugging
  // only; ALPN h2 is still required.
  bool verify_peer = true;
  // Verify the server as this name (and send it as SNI) instead of the name
  // given to TlsSession::CreateClient.
  std::string server_name_override;
  // Optional client certificate for mTLS (PEM chain and key).
  std::string certificate_chain_pem;
  std::string private_key_pem;
  TlsVersion min_version = TlsVersion::kTls12;
  TlsVersion max_version = TlsVersion::kTls13;
  // At most this many sessions kept for resumption (least recently used
  // dropped first); 0 turns resumption off.
  size_t session_cache_size = 64;
};

// Reads a whole (PEM) file. Errors: the errno of open/read, with the path.
absl::StatusOr<std::string> ReadPemFile(const std::string& path);

class TlsContext {
 public:
  static absl::StatusOr<std::shared_ptr<const TlsContext>> CreateServer(
      const TlsServerOptions& options);
  static absl::StatusOr<std::shared_ptr<const TlsContext>> CreateClient(
      const TlsClientOptions& options);
  ~TlsContext();

  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  bool is_server() const { return is_server_; }
  bool verify_peer() const { return verify_peer_; }
  const std::string& server_name_override() const {
    return server_name_override_;
  }
  // The OpenSSL context, for inspection; changing it voids the policy.
  SSL_CTX* native_handle() const { return ctx_; }
  // Client: sessions cached for resumption now (any thread).
  size_t cached_sessions() const;

 private:
  friend class TlsSession;
  // The client's resumption cache (tls.cc): thread-safe, bounded.
  class SessionCache;
  // The server's rotating ticket keys (tls.cc): thread-safe, bounded.
  class TicketKeys;

  TlsContext(SSL_CTX* ctx, bool is_server);

  SSL_CTX* const ctx_;
  const bool is_server_;
  bool verify_peer_ = true;
  std::string server_name_override_;
  // Client with resumption on; null otherwise. The only mutable state of a
  // context, internally synchronized.
  std::unique_ptr<SessionCache> session_cache_;
  // Server issuing tickets; null otherwise. Internally synchronized.
  std::unique_ptr<TicketKeys> ticket_keys_;
};

class TlsSession {
 public:
  // Ciphertext buffered inside the session (the BIO pair), per direction:
  // bounded memory, and room for several records per write to the socket.
  static constexpr size_t kInputBufferSize = 32 * 1024;
  static constexpr size_t kOutputBufferSize = 64 * 1024;

  static absl::StatusOr<std::unique_ptr<TlsSession>> CreateServer(
      std::shared_ptr<const TlsContext> context);
  // `server_name`: the DNS name or IP literal to verify (and, for a DNS name,
  // to send as SNI); the context's server_name_override wins. Errors:
  // kInvalidArgument when verification is on and there is no name.
  // Resumption: the session is offered a cached session of the context
  // stored under the same (verified name, `cache_scope`), and stores the
  // session it gets under it; `cache_scope` is normally the server's address
  // ("127.0.0.1:443"), so that two servers sharing a name do not share
  // tickets.
  static absl::StatusOr<std::unique_ptr<TlsSession>> CreateClient(
      std::shared_ptr<const TlsContext> context, std::string_view server_name,
      std::string_view cache_scope = {});
  ~TlsSession();

  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // ---- Ciphertext from the peer ----
  // Where the next received bytes go (contiguous; empty when the input
  // buffer is full: run Read/Handshake first). Then CommitInput(n).
  absl::Span<char> InputSpace();
  void CommitInput(size_t n);
  // Copies as much of `data` as fits; returns the count.
  size_t FeedCiphertext(std::string_view data);

  // ---- Ciphertext for the peer ----
  // After every call below, send this: handshake messages, records, alerts.
  // A contiguous prefix of what is pending (call again after consuming).
  std::string_view PendingOutput();
  void ConsumeOutput(size_t n);
  size_t pending_output_size() const;
  // Moves everything pending to `out` (tests, simple drivers).
  void DrainOutput(std::string* out);

  // ---- Handshake and records ----
  // Advances the handshake: kOk when it is complete and "h2" was agreed;
  // kWouldBlock when it needs more input (or room in the output buffer:
  // send PendingOutput first); kError.
  IoResult Handshake();
  // Decrypts into `buffer`: kOk; kWouldBlock (needs input); kEof (the peer
  // sent close_notify); kError. Runs the handshake first if needed.
  IoResult Read(absl::Span<char> buffer);
  // Encrypts as much of `data` as the output buffer takes; kOk with the
  // count (fewer than offered: send PendingOutput, then call again). Small
  // buffers are gathered into full records. Before the handshake completes:
  // kOk with 0 after driving it, or its error.
  IoResult Write(absl::Span<const std::string_view> data);
  // Queues close_notify (send PendingOutput after). Later writes fail.
  void Shutdown();

  // ---- After the handshake ----
  bool handshake_complete() const { return handshake_complete_; }
  bool is_server() const { return is_server_; }
  // "h2", or empty before the handshake.
  std::string_view alpn_protocol() const;
  // "TLSv1.3", "TLSv1.2".
  std::string version_name() const;
  // TLS1_2_VERSION / TLS1_3_VERSION (0x0303 / 0x0304).
  int version() const;
  std::string cipher_name() const;
  // The peer certificate (borrowed; null when the peer sent none). Verified
  // only when peer_verified().
  X509* peer_certificate() const;
  // The peer sent a certificate and it was verified (against the roots, and
  // for a client the server's name). False with verify_peer = false.
  bool peer_verified() const;
  // PEM of the peer certificate, empty when none.
  std::string PeerCertificatePem() const;
  // The peer certificate's subject, e.g. "CN=localhost"; empty when none.
  std::string PeerSubject() const;
  // The peer certificate's subject alternative names, in certificate order:
  // DNS names, URIs, e-mail addresses and IP addresses ("127.0.0.1", "::1");
  // other kinds are skipped. Empty when none.
  std::vector<std::string> PeerSubjectAltNames() const;
  // The (first, as gRPC reads it) CN of the peer certificate's subject;
  // empty when none.
  std::string PeerCommonName() const;
  // True when the handshake resumed an earlier session (no certificates
  // exchanged; the peer certificate is the one of that session).
  bool session_reused() const;

  SSL* native_handle() const { return ssl_; }

 private:
  friend class TlsContext;  // installs OnNewSession
  TlsSession(std::shared_ptr<const TlsContext> context, SSL* ssl,
             BIO* network_bio, bool is_server);
  // OpenSSL's new-session callback (client contexts with a cache): stores
  // a copy of the session under the SSL's cache key. Returns 0 (OpenSSL
  // keeps its reference).
  static int OnNewSession(SSL* ssl, SSL_SESSION* session);
  // Maps the result of an SSL_* call; sets the sticky error on failure.
  IoResult MapResult(int ret, std::string_view what);
  IoResult Fail(absl::Status status);
  // Retries a record OpenSSL could not finish (SSL_ERROR_WANT_WRITE).
  IoResult FinishRetryWrite();

  std::shared_ptr<const TlsContext> context_;
  SSL* ssl_;
  BIO* network_bio_;  // our half of the pair; SSL owns the other
  const bool is_server_;
  bool handshake_complete_ = false;
  bool shutdown_sent_ = false;
  absl::Status error_;
  // A record SSL_write started but could not finish for lack of output room:
  // OpenSSL wants the same bytes again.
  std::string retry_write_;
  // Gathers small plaintext buffers into one record.
  std::string stage_;
  // Client: where its session is cached (empty: not cached).
  std::string cache_key_;
};

}  // namespace transport

#endif  // TRANSPORT_TLS_TLS_H_
