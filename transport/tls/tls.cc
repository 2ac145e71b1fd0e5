#include "transport/tls/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "transport/io/absl_view.h"
#include "transport/io/socket.h"

namespace transport {
namespace {

// One TLS record carries at most 16 KiB of plaintext.
constexpr size_t kMaxRecordPlaintext = 16384;
// Header, nonce, tag and content type of one record, with slack for a
// KeyUpdate OpenSSL may put before it. A record is only started when this
// much more than its plaintext fits in the output buffer.
constexpr size_t kRecordOverhead = 256;
// Plaintext pieces at least this large go to SSL_write directly; smaller ones
// are gathered into one record.
constexpr size_t kGatherBelow = 4096;

// Tickets a server issues per TLS 1.3 handshake (OpenSSL's default is two;
// our clients keep only the newest). They stay valid for OpenSSL's default
// session timeout (two hours); the ticket key lives as long as the context.
constexpr size_t kTls13TicketsPerHandshake = 1;
// The session ID context servers set: OpenSSL refuses to resume a session
// with a verified client certificate without one. Tickets are sealed per
// SSL_CTX anyway, so a constant is enough.
constexpr unsigned char kSessionIdContext[] = "rpc-tls";

// RFC 9113 9.2.2: TLS 1.2 only with ephemeral key exchange and AEAD.
constexpr char kTls12Ciphers[] = "ECDHE+AESGCM:ECDHE+CHACHA20";
constexpr unsigned char kAlpnH2[] = {2, 'h', '2'};

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

int ProtoVersion(TlsVersion v) {
  return v == TlsVersion::kTls12 ? TLS1_2_VERSION : TLS1_3_VERSION;
}

BioPtr MemBio(std::string_view data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

// OpenSSL's queued errors, oldest first, and the reason code of the first.
std::string DrainErrors(int* first_reason) {
  std::vector<std::string> parts;
  *first_reason = 0;
  while (unsigned long e = ERR_get_error()) {
    if (*first_reason == 0) *first_reason = ERR_GET_REASON(e);
    const char* reason = ERR_reason_error_string(e);
    parts.push_back(reason != nullptr ? reason : absl::StrCat("error ", e));
  }
  return absl::StrJoin(parts, "; ");
}

// Every PEM certificate in `pem`. Errors: kInvalidArgument naming `what`.
absl::StatusOr<std::vector<X509Ptr>> ParseCertificates(std::string_view pem,
                                                       std::string_view what) {
  std::vector<X509Ptr> certs;
  BioPtr bio = MemBio(pem);
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(x);
  }
  ERR_clear_error();  // the read that ends the loop queues "no start line"
  if (certs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), ": no PEM certificate found"));
  }
  return certs;
}

absl::Status UseCertificateAndKey(SSL_CTX* ctx, std::string_view chain_pem,
                                  std::string_view key_pem) {
  auto certs = ParseCertificates(chain_pem, "certificate_chain_pem");
  if (!certs.ok()) return certs.status();
  if (SSL_CTX_use_certificate(ctx, (*certs)[0].get()) != 1) {
    int reason;
    return absl::InvalidArgumentError(absl::StrCat(
        "certificate_chain_pem: leaf rejected: ", DrainErrors(&reason)));
  }
  for (size_t i = 1; i < certs->size(); ++i) {
    // add0 takes ownership on success.
    if (SSL_CTX_add0_chain_cert(ctx, (*certs)[i].get()) != 1) {
      int reason;
      return absl::InvalidArgumentError(
          absl::StrCat("certificate_chain_pem: intermediate rejected: ",
                       DrainErrors(&reason)));
    }
    (void)(*certs)[i].release();
  }
  BioPtr bio = MemBio(key_pem);
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    ERR_clear_error();
    return absl::InvalidArgumentError("private_key_pem: no PEM private key");
  }
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    int reason;
    return absl::InvalidArgumentError(absl::StrCat(
        "private key does not match the certificate: ", DrainErrors(&reason)));
  }
  return absl::OkStatus();
}

absl::Status TrustRoots(SSL_CTX* ctx, std::string_view pem,
                        std::string_view what, bool also_client_ca_list) {
  auto certs = ParseCertificates(pem, what);
  if (!certs.ok()) return certs.status();
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  for (const X509Ptr& x : *certs) {
    if (X509_STORE_add_cert(store, x.get()) != 1) {
      int reason;
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(what), ": ", DrainErrors(&reason)));
    }
    // Names sent in CertificateRequest, so a client can pick its cert.
    if (also_client_ca_list) SSL_CTX_add_client_CA(ctx, x.get());
  }
  return absl::OkStatus();
}

// The server's ALPN choice: "h2" or a fatal no_application_protocol alert.
int SelectH2(SSL*, const unsigned char** out, unsigned char* outlen,
             const unsigned char* in, unsigned int inlen, void*) {
  for (unsigned int i = 0; i < inlen;) {
    const unsigned int len = in[i];
    if (i + 1 + len > inlen) break;
    if (len == 2 && in[i + 1] == 'h' && in[i + 2] == '2') {
      *out = in + i + 1;
      *outlen = 2;
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + len;
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

// OpenSSL frees its global state in an at-exit handler unless its first
// initialization says not to; loop threads are never stopped (rpc's
// process-wide group) and may be in a handshake or a write while exit()
// runs, and would then use freed locks (a SEGV in the interop client,
// rpc/tls_exit_test). So the first initialization is ours, when this file
// loads (before main, unless another library's static initializer used
// OpenSSL first), and again before any context (a no-op by then). The
// state then lives until the process ends, as the loops do.
//
// libcrypto's only, without OPENSSL_INIT_LOAD_CONFIG (which
// OPENSSL_init_ssl adds): the configuration file is read by the first
// SSL_CTX_new, after main has begun, so an application's OPENSSL_CONF or
// its own initialization settings still count (tls_config_test).
bool InitOpenSsl() {
  return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1;
}
const bool g_openssl_initialized = InitOpenSsl();

// Settings common to both roles.
absl::StatusOr<SSL_CTX*> NewContext(bool server, TlsVersion min_version,
                                    TlsVersion max_version) {
  if (ProtoVersion(min_version) > ProtoVersion(max_version)) {
    return absl::InvalidArgumentError("min_version is above max_version");
  }
  if (!g_openssl_initialized && !InitOpenSsl()) {
    return absl::InternalError("OPENSSL_init_crypto failed");
  }
  SSL_CTX* ctx =
      SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) {
    int reason;
    return absl::InternalError(
        absl::StrCat("SSL_CTX_new: ", DrainErrors(&reason)));
  }
  SSL_CTX_set_min_proto_version(ctx, ProtoVersion(min_version));
  SSL_CTX_set_max_proto_version(ctx, ProtoVersion(max_version));
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1) {
    SSL_CTX_free(ctx);
    int reason;
    return absl::InternalError(
        absl::StrCat("cipher list: ", DrainErrors(&reason)));
  }
  return ctx;
}

bool IsIpLiteral(std::string_view name) {
  auto a = SocketAddress::Parse(name, 0);
  return a.ok() && name != "localhost";
}

std::string StripBrackets(std::string_view name) {
  if (name.size() >= 2 && name.front() == '[' && name.back() == ']') {
    name = name.substr(1, name.size() - 2);
  }
  return std::string(name);
}

bool IsCertificateReason(int reason) {
  switch (reason) {
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
      return true;
    default:
      return false;
  }
}

bool IsAlpnReason(int reason) {
  return reason == SSL_R_NO_APPLICATION_PROTOCOL ||
         reason == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL;
}

}  // namespace

// ---- TlsContext::TicketKeys ----

// The keys that seal (encrypt and MAC) session tickets: each seals for
// `rotation` after it was made (the next seal after that makes a new one),
// then still opens tickets for `lifetime`, then it is erased.
// Key material is random, never leaves the process and is wiped when
// dropped.
class TlsContext::TicketKeys {
 public:
  struct Key {
    unsigned char name[16];
    unsigned char aes[32];
    unsigned char hmac[32];
    absl::Time created;
  };

  TicketKeys(absl::Duration rotation, absl::Duration lifetime,
             std::function<absl::Time()> clock)
      : rotation_(rotation), lifetime_(lifetime), clock_(std::move(clock)) {}

  // OpenSSL's ticket key callback (SSL_CTX_set_tlsext_ticket_key_evp_cb;
  // the SSL_CTX's app data is the TicketKeys): seal (enc = 1: 1, or -1 on
  // error) or open (enc = 0: 0 unknown or expired key, a full handshake; 1;
  // 2 open and issue a new ticket) with AES-256-CBC and HMAC-SHA256.
  static int Callback(SSL* ssl, unsigned char key_name[16],
                      unsigned char iv[EVP_MAX_IV_LENGTH],
                      EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac, int enc) {
    auto* self =
        static_cast<TicketKeys*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
    if (self == nullptr) return -1;
    Key key;
    bool renew = false;
    if (enc == 1) {
      if (!self->Current(&key)) return -1;
      memcpy(key_name, key.name, sizeof(key.name));
      const int iv_len = EVP_CIPHER_get_iv_length(EVP_aes_256_cbc());
      if (RAND_bytes(iv, iv_len) != 1 ||
          EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key.aes, iv) !=
              1 ||
          !SetMacKey(mac, &key)) {
        OPENSSL_cleanse(&key, sizeof(key));
        return -1;
      }
      OPENSSL_cleanse(&key, sizeof(key));
      return 1;
    }
    if (!self->Find(key_name, &key, &renew)) return 0;
    const bool ok = EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr,
                                       key.aes, iv) == 1 &&
                    SetMacKey(mac, &key);
    OPENSSL_cleanse(&key, sizeof(key));
    if (!ok) return -1;
    // TLS 1.3 tickets are used once: always ask for a fresh one (OpenSSL
    // sends a ticket after a resumption only when asked). TLS 1.2: a new
    // ticket only when the key that sealed this one is retired.
    return renew || SSL_version(ssl) == TLS1_3_VERSION ? 2 : 1;
  }
  ~TicketKeys() {
    for (Key& k : keys_) OPENSSL_cleanse(&k, sizeof(k));
  }

  // The key to seal a new ticket with, replacing the current one first when
  // it is due. False when no random key could be made.
  bool Current(Key* out) {
    absl::MutexLock lock(&mu_);
    const absl::Time now = Now();
    Prune(now);
    if (keys_.empty() || now - keys_.back().created >= rotation_) {
      Key k;
      if (RAND_bytes(k.name, sizeof(k.name)) != 1 ||
          RAND_bytes(k.aes, sizeof(k.aes)) != 1 ||
          RAND_bytes(k.hmac, sizeof(k.hmac)) != 1) {
        OPENSSL_cleanse(&k, sizeof(k));
        return false;
      }
      k.created = now;
      keys_.push_back(k);
      OPENSSL_cleanse(&k, sizeof(k));
    }
    *out = keys_.back();
    return true;
  }

  // The key named `name` while it is kept; *renew when it no longer seals
  // (the client should get a ticket sealed with the current key).
  bool Find(const unsigned char* name, Key* out, bool* renew) {
    absl::MutexLock lock(&mu_);
    const absl::Time now = Now();
    Prune(now);
    for (const Key& k : keys_) {
      if (CRYPTO_memcmp(k.name, name, sizeof(k.name)) != 0) continue;
      *out = k;
      *renew = RetiredAt(k) <= now;
      return true;
    }
    return false;
  }

 private:
  absl::Time Now() const { return clock_ ? clock_() : absl::Now(); }

  // When `k` stops sealing: `rotation` after it was made, whether or not a
  // newer key has been made yet (that happens at the next seal), so an idle
  // server also erases its keys on time.
  absl::Time RetiredAt(const Key& k) const { return k.created + rotation_; }

  void Prune(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (!keys_.empty() && RetiredAt(keys_.front()) + lifetime_ <= now) {
      OPENSSL_cleanse(&keys_.front(), sizeof(Key));
      keys_.erase(keys_.begin());
    }
  }

  static bool SetMacKey(EVP_MAC_CTX* mac, Key* key) {
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key->hmac,
                                          sizeof(key->hmac)),
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end()};
    return EVP_MAC_CTX_set_params(mac, params) == 1;
  }

  const absl::Duration rotation_;
  const absl::Duration lifetime_;
  const std::function<absl::Time()> clock_;
  absl::Mutex mu_;
  std::vector<Key> keys_ ABSL_GUARDED_BY(mu_);  // oldest first
};

// ---- TlsContext::SessionCache ----

// LRU map from a cache key to one session (the newest stored). Sessions are
// owned references, freed on eviction, replacement and destruction.
class TlsContext::SessionCache {
 public:
  explicit SessionCache(size_t capacity) : capacity_(capacity) {}
  ~SessionCache() {
    for (Entry& e : lru_) SSL_SESSION_free(e.session);
  }
  SessionCache(const SessionCache&) = delete;
  SessionCache& operator=(const SessionCache&) = delete;

  // Takes over the reference to `session`, which must be the cache's own
  // object: OpenSSL marks the session of a connection freed without
  // close_notify as not resumable (an SSL_SESSION is shared, not copied), so
  // the cache never shares its sessions with a live connection.
  void Put(const std::string& key, SSL_SESSION* session) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      SSL_SESSION_free(it->second->session);
      lru_.erase(it->second);
      index_.erase(it);
    }
    lru_.push_front(Entry{key, session});
    index_[key] = lru_.begin();
    while (lru_.size() > capacity_) {
      index_.erase(lru_.back().key);
      SSL_SESSION_free(lru_.back().session);
      lru_.pop_back();
    }
  }

  // A session (the caller frees it) to offer for `key`, or null. A TLS 1.3
  // session leaves the cache (its ticket is for one use, RFC 8446 appendix
  // C.4); a TLS 1.2 one stays and the caller gets a copy. Expired sessions
  // are dropped.
  SSL_SESSION* Get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    auto entry = it->second;
    SSL_SESSION* session = entry->session;
    const long now = static_cast<long>(::time(nullptr));
    const bool expired =
        SSL_SESSION_get_time(session) + SSL_SESSION_get_timeout(session) <= now;
    const bool usable = !expired && SSL_SESSION_is_resumable(session) == 1;
    if (!usable ||
        SSL_SESSION_get_protocol_version(session) >= TLS1_3_VERSION) {
      lru_.erase(entry);
      index_.erase(it);
      if (!usable) {
        SSL_SESSION_free(session);
        return nullptr;
      }
      return session;  // the cache's reference moves to the caller
    }
    lru_.splice(lru_.begin(), lru_, entry);
    return SSL_SESSION_dup(session);
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lru_.size();
  }

 private:
  struct Entry {
    std::string key;
    SSL_SESSION* session;
  };
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

absl::StatusOr<std::string> ReadPemFile(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("read ", path));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// ---- TlsContext ----

absl::StatusOr<std::shared_ptr<const TlsContext>> TlsContext::CreateServer(
    const TlsServerOptions& options) {
  auto raw = NewContext(true, options.min_version, options.max_version);
  if (!raw.ok()) return raw.status();
  std::shared_ptr<TlsContext> context(new TlsContext(*raw, true));
  SSL_CTX* ctx = context->ctx_;
  absl::Status s = UseCertificateAndKey(ctx, options.certificate_chain_pem,
                                        options.private_key_pem);
  if (!s.ok()) return s;
  SSL_CTX_set_alpn_select_cb(ctx, SelectH2, nullptr);
  // Stateless tickets only: no server-side session cache, so memory does not
  // grow with the number of clients.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_session_id_context(ctx, kSessionIdContext,
                                 sizeof(kSessionIdContext) - 1);
  if (options.session_tickets) {
    SSL_CTX_set_num_tickets(ctx, kTls13TicketsPerHandshake);
    if (options.ticket_key_rotation <= absl::ZeroDuration() ||
        options.session_lifetime < absl::Seconds(1)) {
      return absl::InvalidArgumentError(
          "ticket_key_rotation must be positive and session_lifetime at "
          "least 1 s");
    }
    SSL_CTX_set_timeout(
        ctx, static_cast<long>(absl::ToInt64Seconds(options.session_lifetime)));
    context->ticket_keys_ = std::make_unique<TicketKeys>(
        options.ticket_key_rotation, options.session_lifetime,
        options.ticket_key_clock);
    SSL_CTX_set_app_data(ctx, context->ticket_keys_.get());
    SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, &TicketKeys::Callback);
  } else {
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  }
  if (!options.client_ca_pem.empty()) {
    s = TrustRoots(ctx, options.client_ca_pem, "client_ca_pem", true);
    if (!s.ok()) return s;
    SSL_CTX_set_verify(ctx,
                       SSL_VERIFY_PEER | (options.require_client_certificate
                                              ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                                              : 0),
                       nullptr);
  } else if (options.require_client_certificate) {
    return absl::InvalidArgumentError(
        "require_client_certificate needs client_ca_pem");
  }
  return std::shared_ptr<const TlsContext>(std::move(context));
}

absl::StatusOr<std::shared_ptr<const TlsContext>> TlsContext::CreateClient(
    const TlsClientOptions& options) {
  auto raw = NewContext(false, options.min_version, options.max_version);
  if (!raw.ok()) return raw.status();
  std::shared_ptr<TlsContext> context(new TlsContext(*raw, false));
  SSL_CTX* ctx = context->ctx_;
  context->verify_peer_ = options.verify_peer;
  context->server_name_override_ = options.server_name_override;
  // Note the inverted convention: 0 is success here.
  if (SSL_CTX_set_alpn_protos(ctx, kAlpnH2, sizeof(kAlpnH2)) != 0) {
    return absl::InternalError("SSL_CTX_set_alpn_protos failed");
  }
  if (options.verify_peer) {
    if (options.root_certificates_pem.empty()) {
      if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        int reason;
        return absl::InternalError(
            absl::StrCat("default trust store: ", DrainErrors(&reason)));
      }
    } else {
      absl::Status s = TrustRoots(ctx, options.root_certificates_pem,
                                  "root_certificates_pem", false);
      if (!s.ok()) return s;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }
  if (!options.certificate_chain_pem.empty() ||
      !options.private_key_pem.empty()) {
    absl::Status s = UseCertificateAndKey(ctx, options.certificate_chain_pem,
                                          options.private_key_pem);
    if (!s.ok()) return s;
  }
  if (options.session_cache_size > 0) {
    context->session_cache_ =
        std::make_unique<SessionCache>(options.session_cache_size);
    // Sessions go to our cache only (the callback), never OpenSSL's.
    SSL_CTX_set_session_cache_mode(
        ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, &TlsSession::OnNewSession);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  }
  return std::shared_ptr<const TlsContext>(std::move(context));
}

TlsContext::TlsContext(SSL_CTX* ctx, bool is_server)
    : ctx_(ctx), is_server_(is_server) {}

TlsContext::~TlsContext() {
  session_cache_.reset();
  SSL_CTX_free(ctx_);
  ticket_keys_.reset();  // after the SSL_CTX that points at it
}

size_t TlsContext::cached_sessions() const {
  return session_cache_ == nullptr ? 0 : session_cache_->size();
}

// ---- TlsSession ----

namespace {

absl::StatusOr<std::pair<SSL*, BIO*>> NewSsl(SSL_CTX* ctx) {
  SSL* ssl = SSL_new(ctx);
  if (ssl == nullptr) {
    int reason;
    return absl::InternalError(absl::StrCat("SSL_new: ", DrainErrors(&reason)));
  }
  BIO* internal = nullptr;
  BIO* network = nullptr;
  // `internal` buffers what SSL writes (the output direction); `network`
  // buffers what we feed in.
  if (BIO_new_bio_pair(&internal, TlsSession::kOutputBufferSize, &network,
                       TlsSession::kInputBufferSize) != 1) {
    SSL_free(ssl);
    int reason;
    return absl::InternalError(
        absl::StrCat("BIO_new_bio_pair: ", DrainErrors(&reason)));
  }
  SSL_set_bio(ssl, internal, internal);  // one reference, owned by `ssl`
  return std::make_pair(ssl, network);
}

}  // namespace

absl::StatusOr<std::unique_ptr<TlsSession>> TlsSession::CreateServer(
    std::shared_ptr<const TlsContext> context) {
  if (context == nullptr || !context->is_server()) {
    return absl::InvalidArgumentError("CreateServer needs a server context");
  }
  auto ssl = NewSsl(context->native_handle());
  if (!ssl.ok()) return ssl.status();
  SSL_set_accept_state(ssl->first);
  return std::unique_ptr<TlsSession>(
      new TlsSession(std::move(context), ssl->first, ssl->second, true));
}

absl::StatusOr<std::unique_ptr<TlsSession>> TlsSession::CreateClient(
    std::shared_ptr<const TlsContext> context, std::string_view server_name,
    std::string_view cache_scope) {
  if (context == nullptr || context->is_server()) {
    return absl::InvalidArgumentError("CreateClient needs a client context");
  }
  const std::string name = StripBrackets(context->server_name_override().empty()
                                             ? server_name
                                             : context->server_name_override());
  if (context->verify_peer() && name.empty()) {
    return absl::InvalidArgumentError(
        "a verifying TLS client needs a server name");
  }
  auto ssl = NewSsl(context->native_handle());
  if (!ssl.ok()) return ssl.status();
  std::unique_ptr<TlsSession> session(
      new TlsSession(std::move(context), ssl->first, ssl->second, false));
  SSL* s = session->ssl_;
  SSL_set_connect_state(s);
  if (!name.empty()) {
    const bool ip = IsIpLiteral(name);
    // SNI carries DNS names only (RFC 6066 section 3).
    if (!ip && SSL_set_tlsext_host_name(s, name.c_str()) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad server name '", name, "'"));
    }
    if (session->context_->verify_peer()) {
      X509_VERIFY_PARAM* param = SSL_get0_param(s);
      X509_VERIFY_PARAM_set_hostflags(param,
                                      X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      const int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                        : X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
      if (ok != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad server name '", name, "'"));
      }
    }
  }
  if (TlsContext::SessionCache* cache =
          session->context_->session_cache_.get()) {
    session->cache_key_ = absl::StrCat(name, "|", ToAbsl(cache_scope));
    SSL_set_app_data(s, session.get());
    if (SSL_SESSION* cached = cache->Get(session->cache_key_)) {
      SSL_set_session(s, cached);  // takes its own reference
      SSL_SESSION_free(cached);
    }
  }
  return session;
}

int TlsSession::OnNewSession(SSL* ssl, SSL_SESSION* session) {
  auto* self = static_cast<TlsSession*>(SSL_get_app_data(ssl));
  if (self == nullptr || self->cache_key_.empty() ||
      SSL_SESSION_is_resumable(session) != 1) {
    return 0;
  }
  // A copy: `session` stays the connection's (see SessionCache::Put).
  SSL_SESSION* copy = SSL_SESSION_dup(session);
  if (copy == nullptr) {
    ERR_clear_error();
    return 0;
  }
  self->context_->session_cache_->Put(self->cache_key_, copy);
  return 0;
}

TlsSession::TlsSession(std::shared_ptr<const TlsContext> context, SSL* ssl,
                       BIO* network_bio, bool is_server)
    : context_(std::move(context)),
      ssl_(ssl),
      network_bio_(network_bio),
      is_server_(is_server) {}

TlsSession::~TlsSession() {
  SSL_free(ssl_);
  BIO_free(network_bio_);
}

absl::Span<char> TlsSession::InputSpace() {
  char* p = nullptr;
  const int n = BIO_nwrite0(network_bio_, &p);
  if (n <= 0) {
    ERR_clear_error();
    return {};
  }
  return absl::Span<char>(p, static_cast<size_t>(n));
}

void TlsSession::CommitInput(size_t n) {
  if (n == 0) return;
  char* p = nullptr;
  BIO_nwrite(network_bio_, &p, static_cast<int>(n));
}

size_t TlsSession::FeedCiphertext(std::string_view data) {
  size_t fed = 0;
  while (fed < data.size()) {
    absl::Span<char> space = InputSpace();
    if (space.empty()) break;
    const size_t n = std::min(space.size(), data.size() - fed);
    memcpy(space.data(), data.data() + fed, n);
    CommitInput(n);
    fed += n;
  }
  return fed;
}

std::string_view TlsSession::PendingOutput() {
  char* p = nullptr;
  const int n = BIO_nread0(network_bio_, &p);
  if (n <= 0) {
    ERR_clear_error();
    return {};
  }
  return std::string_view(p, static_cast<size_t>(n));
}

void TlsSession::ConsumeOutput(size_t n) {
  if (n == 0) return;
  char* p = nullptr;
  BIO_nread(network_bio_, &p, static_cast<int>(n));
}

size_t TlsSession::pending_output_size() const {
  return BIO_ctrl_pending(network_bio_);
}

void TlsSession::DrainOutput(std::string* out) {
  for (std::string_view v = PendingOutput(); !v.empty(); v = PendingOutput()) {
    out->append(v.data(), v.size());
    ConsumeOutput(v.size());
  }
}

IoResult TlsSession::Fail(absl::Status status) {
  if (error_.ok()) error_ = std::move(status);
  return IoResult::Error(error_);
}

IoResult TlsSession::MapResult(int ret, std::string_view what) {
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      return IoResult::WouldBlock();
    case SSL_ERROR_ZERO_RETURN:
      return IoResult::Eof();
    default:
      break;
  }
  int reason = 0;
  std::string detail = DrainErrors(&reason);
  const long verify = SSL_get_verify_result(ssl_);
  absl::StatusCode code = absl::StatusCode::kUnavailable;
  if (verify != X509_V_OK) {
    absl::StrAppend(&detail, detail.empty() ? "" : ": ",
                    X509_verify_cert_error_string(verify));
    code = absl::StatusCode::kUnauthenticated;
  } else if (IsCertificateReason(reason)) {
    code = absl::StatusCode::kUnauthenticated;
  } else if (IsAlpnReason(reason)) {
    code = absl::StatusCode::kFailedPrecondition;
    absl::StrAppend(&detail, " (ALPN: the peer does not offer h2)");
  }
  if (detail.empty()) detail = "connection failed";
  return Fail(
      absl::Status(code, absl::StrCat(ToAbsl(what), " failed: ", detail)));
}

IoResult TlsSession::Handshake() {
  if (!error_.ok()) return IoResult::Error(error_);
  if (handshake_complete_) return IoResult::Ok(0);
  ERR_clear_error();
  const int ret = SSL_do_handshake(ssl_);
  if (ret != 1) return MapResult(ret, "TLS handshake");
  const unsigned char* alpn = nullptr;
  unsigned int alpn_len = 0;
  SSL_get0_alpn_selected(ssl_, &alpn, &alpn_len);
  if (alpn_len != 2 || memcmp(alpn, "h2", 2) != 0) {
    return Fail(absl::FailedPreconditionError(absl::StrCat(
        "TLS handshake failed: ALPN \"h2\" was not negotiated (",
        alpn_len == 0
            ? std::string("no ALPN")
            : absl::StrCat("got \"",
                           absl::string_view(
                               reinterpret_cast<const char*>(alpn), alpn_len),
                           "\""),
        "); HTTP/2 over TLS requires it")));
  }
  handshake_complete_ = true;
  return IoResult::Ok(0);
}

IoResult TlsSession::Read(absl::Span<char> buffer) {
  if (!error_.ok()) return IoResult::Error(error_);
  if (!handshake_complete_) {
    IoResult h = Handshake();
    if (!h.ok()) return h;
  }
  if (buffer.empty()) return IoResult::Ok(0);
  ERR_clear_error();
  size_t n = 0;
  const int ret = SSL_read_ex(ssl_, buffer.data(), buffer.size(), &n);
  if (ret == 1) return IoResult::Ok(n);
  return MapResult(ret, "TLS read");
}

IoResult TlsSession::FinishRetryWrite() {
  ERR_clear_error();
  size_t n = 0;
  const int ret =
      SSL_write_ex(ssl_, retry_write_.data(), retry_write_.size(), &n);
  if (ret == 1) {
    retry_write_.clear();
    return IoResult::Ok(0);
  }
  return MapResult(ret, "TLS write");
}

IoResult TlsSession::Write(absl::Span<const std::string_view> data) {
  if (!error_.ok()) return IoResult::Error(error_);
  if (shutdown_sent_) {
    return IoResult::Error(
        absl::FailedPreconditionError("TLS write after Shutdown"));
  }
  if (!handshake_complete_) {
    IoResult h = Handshake();
    if (h.outcome == IoOutcome::kError) return h;
    if (!handshake_complete_) return IoResult::Ok(0);
  }
  if (!retry_write_.empty()) {
    IoResult r = FinishRetryWrite();
    if (r.outcome == IoOutcome::kError) return r;
    if (!retry_write_.empty()) return IoResult::Ok(0);
  }
  BIO* internal = SSL_get_wbio(ssl_);
  size_t accepted = 0;
  size_t index = 0;   // current piece
  size_t offset = 0;  // consumed bytes of data[index]
  auto skip_empty = [&] {
    while (index < data.size() && offset == data[index].size()) {
      ++index;
      offset = 0;
    }
  };
  skip_empty();
  while (index < data.size()) {
    const size_t room = BIO_ctrl_get_write_guarantee(internal);
    if (room < kRecordOverhead + 1) break;
    const size_t limit = std::min(kMaxRecordPlaintext, room - kRecordOverhead);
    const char* record;
    size_t record_len;
    const size_t rest = data[index].size() - offset;
    if (rest >= kGatherBelow || rest >= limit) {
      // Large piece: encrypt straight from the caller's buffer.
      record = data[index].data() + offset;
      record_len = std::min(rest, limit);
      offset += record_len;
    } else {
      // Gather small pieces (frame headers, small frames) into one record.
      stage_.clear();
      while (index < data.size() && stage_.size() < limit) {
        const size_t r = data[index].size() - offset;
        if (r >= kGatherBelow && !stage_.empty()) break;
        const size_t take = std::min(r, limit - stage_.size());
        stage_.append(data[index].data() + offset, take);
        offset += take;
        skip_empty();
      }
      record = stage_.data();
      record_len = stage_.size();
    }
    skip_empty();
    ERR_clear_error();
    size_t n = 0;
    const int ret = SSL_write_ex(ssl_, record, record_len, &n);
    if (ret != 1) {
      IoResult r = MapResult(ret, "TLS write");
      if (r.outcome == IoOutcome::kError) return r;
      // Out of room mid-record after all: OpenSSL wants these same bytes
      // again. They count as taken; the next Write (or an empty one) retries.
      retry_write_.assign(record, record_len);
      accepted += record_len;
      break;
    }
    accepted += record_len;
  }
  return IoResult::Ok(accepted);
}

void TlsSession::Shutdown() {
  if (shutdown_sent_) return;
  shutdown_sent_ = true;
  if (!error_.ok() || !handshake_complete_) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // queues close_notify; we never wait for the peer's
  ERR_clear_error();
}

std::string_view TlsSession::alpn_protocol() const {
  const unsigned char* alpn = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(ssl_, &alpn, &len);
  return std::string_view(reinterpret_cast<const char*>(alpn), len);
}

std::string TlsSession::version_name() const { return SSL_get_version(ssl_); }

int TlsSession::version() const { return SSL_version(ssl_); }

std::string TlsSession::cipher_name() const {
  const SSL_CIPHER* c = SSL_get_current_cipher(ssl_);
  return c == nullptr ? std::string() : SSL_CIPHER_get_name(c);
}

X509* TlsSession::peer_certificate() const {
  return SSL_get0_peer_certificate(ssl_);
}

bool TlsSession::peer_verified() const {
  return peer_certificate() != nullptr &&
         (SSL_get_verify_mode(ssl_) & SSL_VERIFY_PEER) != 0 &&
         SSL_get_verify_result(ssl_) == X509_V_OK;
}

std::string TlsSession::PeerCertificatePem() const {
  X509* cert = peer_certificate();
  if (cert == nullptr) return std::string();
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

std::vector<std::string> TlsSession::PeerSubjectAltNames() const {
  std::vector<std::string> out;
  X509* cert = peer_certificate();
  if (cert == nullptr) return out;
  GENERAL_NAMES* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    switch (name->type) {
      case GEN_DNS:
      case GEN_URI:
      case GEN_EMAIL: {
        const ASN1_IA5STRING* v = name->d.ia5;
        out.emplace_back(
            reinterpret_cast<const char*>(ASN1_STRING_get0_data(v)),
            static_cast<size_t>(ASN1_STRING_length(v)));
        break;
      }
      case GEN_IPADD: {
        const ASN1_OCTET_STRING* v = name->d.iPAddress;
        const int len = ASN1_STRING_length(v);
        char text[INET6_ADDRSTRLEN] = {};
        if ((len == 4 || len == 16) &&
            inet_ntop(len == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(v),
                      text, sizeof(text)) != nullptr) {
          out.emplace_back(text);
        }
        break;
      }
      default:
        break;
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

std::string TlsSession::PeerCommonName() const {
  X509* cert = peer_certificate();
  if (cert == nullptr) return std::string();
  X509_NAME* subject = X509_get_subject_name(cert);
  const int first = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (first < 0) return std::string();
  const ASN1_STRING* data =
      X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, first));
  unsigned char* utf8 = nullptr;
  const int len = ASN1_STRING_to_UTF8(&utf8, data);
  if (len < 0) {
    ERR_clear_error();
    return std::string();
  }
  std::string cn(reinterpret_cast<const char*>(utf8), static_cast<size_t>(len));
  OPENSSL_free(utf8);
  return cn;
}

bool TlsSession::session_reused() const {
  return SSL_session_reused(ssl_) == 1;
}

std::string TlsSession::PeerSubject() const {
  X509* cert = peer_certificate();
  if (cert == nullptr) return std::string();
  BioPtr bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), X509_get_subject_name(cert), 0,
                     XN_FLAG_RFC2253);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

}  // namespace transport
