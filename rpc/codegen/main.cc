// protoc-gen-rpc: protoc plugin generating rpc:: service stubs (see
// rpc_generator.h).  protoc --plugin=protoc-gen-rpc=... --rpc_out=DIR x.proto

#include "google/protobuf/compiler/plugin.h"
#include "rpc/codegen/rpc_generator.h"

int main(int argc, char* argv[]) {
  rpc::codegen::RpcGenerator generator;
  return google::protobuf::compiler::PluginMain(argc, argv, &generator);
}
