// RpcGenerator: the protoc code generator behind protoc-gen-rpc. For each
// .proto file with services it writes <name>.rpc.pb.h and <name>.rpc.pb.cc
// next to protoc's <name>.pb.h: per service `Foo`, a class `Foo` holding
//   * `Foo::Service`, the base class to implement (one virtual per method,
//     returning UNIMPLEMENTED unless overridden), and
//   * `template <class Base> Foo::WithCallbackMethod_M`, which turns method
//     M of Base into grpc++'s callback form (a reactor-returning virtual,
//     rpc/server_callback.h; its default finishes UNIMPLEMENTED), and
//     `Foo::CallbackService`, every method in that form,
//   * `Foo::Stub` with a blocking method per RPC (unary: Status; server
//     streaming: ClientReader; client streaming: ClientWriter; bidi:
//     ClientReaderWriter), made by `Foo::NewStub(channel)`, and callback
//     forms of the unary methods under `stub->async()`,
// in grpc++'s shapes with the rpc:: runtime (rpc/rpc.h).

#ifndef RPC_CODEGEN_RPC_GENERATOR_H_
#define RPC_CODEGEN_RPC_GENERATOR_H_

#include <string>

#include "google/protobuf/compiler/code_generator.h"

namespace rpc {
namespace codegen {

class RpcGenerator final : public google::protobuf::compiler::CodeGenerator {
 public:
  bool Generate(const google::protobuf::FileDescriptor* file,
                const std::string& parameter,
                google::protobuf::compiler::GeneratorContext* context,
                std::string* error) const override;
};

}  // namespace codegen
}  // namespace rpc

#endif  // RPC_CODEGEN_RPC_GENERATOR_H_
