// content-type and user-agent of gRPC requests (gRPC PROTOCOL-HTTP2.md,
// "Requests").
//
// Content-Type -> "content-type" "application/grpc" [("+proto" / "+json" /
// {custom})], and media-type parameters (";charset=...") may follow. Media
// types compare case-insensitively (RFC 9110 section 8.3.1), so
// "Application/GRPC" is accepted too. A server that receives a content-type
// not beginning with application/grpc SHOULD answer HTTP 415 (Unsupported
// Media Type) so that a non-gRPC client does not read a gRPC error (sent with
// :status 200) as success; kUnsupportedMediaType below, with grpc-status
// INTERNAL in the same Trailers-Only response, as gRPC servers do.
//
// The user-agent names this library: "h2rpc-c++/0.1", after an optional
// application-supplied prefix, in the structure the spec recommends
// (Language "/" Version [" (" properties ")"]).

#ifndef RPC_WIRE_CONTENT_TYPE_H_
#define RPC_WIRE_CONTENT_TYPE_H_

#include <string>
#include <string_view>

namespace rpc {

// What we send.
inline constexpr std::string_view kGrpcContentType = "application/grpc";
// The :status a server answers a non-gRPC content-type with.
inline constexpr int kUnsupportedMediaType = 415;

// The message format a content-type names.
enum class ContentTypeKind {
  kNotGrpc,  // not application/grpc...: answer 415
  kProto,    // "application/grpc" or "application/grpc+proto"
  kOther,    // "application/grpc+json" or another "+custom" subtype
};

// Classifies a received content-type value. "application/grpc" followed by
// nothing, "+subtype" and/or ";params" (optional whitespace before ';')
// counts as gRPC; anything else (including "application/grpcx" or
// "application/grpc-web") is kNotGrpc.
ContentTypeKind ClassifyContentType(std::string_view value);
// Shorthand: ClassifyContentType(value) != kNotGrpc.
inline bool IsGrpcContentType(std::string_view value) {
  return ClassifyContentType(value) != ContentTypeKind::kNotGrpc;
}

// Library name and version in the user-agent.
inline constexpr std::string_view kUserAgentProduct = "h2rpc-c++/0.1";

// "h2rpc-c++/0.1", or "<prefix> h2rpc-c++/0.1" when the application gave a
// prefix (as grpc++'s primary user agent channel argument does). Build it once
// per channel, not per call.
std::string BuildUserAgent(std::string_view prefix = {});

}  // namespace rpc

#endif  // RPC_WIRE_CONTENT_TYPE_H_
