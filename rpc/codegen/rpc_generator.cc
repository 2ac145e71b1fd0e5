#include "rpc/codegen/rpc_generator.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/printer.h"
#include "google/protobuf/io/zero_copy_stream.h"

namespace rpc {
namespace codegen {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FileDescriptor;
using google::protobuf::MethodDescriptor;
using google::protobuf::ServiceDescriptor;
using google::protobuf::io::Printer;
using Vars = std::map<std::string, std::string>;

std::string StripProto(const std::string& name) {
  const std::string ext = ".proto";
  if (name.size() >= ext.size() &&
      name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
    return name.substr(0, name.size() - ext.size());
  }
  return name;
}

std::string Replace(std::string s, const std::string& from,
                    const std::string& to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

// "a.b" -> "::a::b" (empty package: "").
std::string PackageNamespace(const std::string& package) {
  return package.empty() ? "" : "::" + Replace(package, ".", "::");
}

// The C++ name protoc gives a message: nested types joined with '_'.
std::string ClassName(const Descriptor* d) {
  const std::string& package = d->file()->package();
  std::string rel = d->full_name();
  if (!package.empty()) rel = rel.substr(package.size() + 1);
  return PackageNamespace(d->file()->package()) + "::" + Replace(rel, ".", "_");
}

std::string HeaderGuard(const std::string& base) {
  std::string guard;
  for (char c : base + "_RPC_PB_H_") {
    guard +=
        std::isalnum(static_cast<unsigned char>(c))
            ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
            : '_';
  }
  return guard;
}

Vars MethodVars(const ServiceDescriptor* service,
                const MethodDescriptor* method) {
  return {
      {"Method", method->name()},
      {"Request", ClassName(method->input_type())},
      {"Response", ClassName(method->output_type())},
      {"path", "/" + service->full_name() + "/" + method->name()},
      {"Service", service->name()},
  };
}

void OpenNamespaces(Printer* p, const std::string& package) {
  if (package.empty()) return;
  size_t start = 0;
  while (true) {
    size_t dot = package.find('.', start);
    p->Print("namespace $ns$ {\n", "ns",
             package.substr(start, dot == std::string::npos ? std::string::npos
                                                            : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  p->Print("\n");
}

void CloseNamespaces(Printer* p, const std::string& package) {
  if (package.empty()) return;
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = package.find('.', start);
    parts.push_back(package.substr(
        start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  p->Print("\n");
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    p->Print("}  // namespace $ns$\n", "ns", *it);
  }
}

// The synchronous method's signature (after the return type), with `ctx`
// the context parameter's text.
std::string SyncParams(const MethodDescriptor* m) {
  if (!m->client_streaming() && !m->server_streaming()) {
    return "(::rpc::ServerContext*, const $Request$*, $Response$*)";
  }
  if (!m->client_streaming()) {
    return "(::rpc::ServerContext*, const $Request$*,\n"
           "    ::rpc::ServerWriter<$Response$>*)";
  }
  if (!m->server_streaming()) {
    return "(::rpc::ServerContext*, ::rpc::ServerReader<$Request$>*,\n"
           "    $Response$*)";
  }
  return "(::rpc::ServerContext*,\n"
         "    ::rpc::ServerReaderWriter<$Response$, $Request$>*)";
}

// template <class BaseClass> class WithCallbackMethod_M: registers M's
// callback handler over the base's and declares the reactor virtual, whose
// default answers UNIMPLEMENTED; the base's blocking M is disabled (final).
void PrintCallbackMixin(Printer* p, Vars v, const MethodDescriptor* m) {
  const bool cs = m->client_streaming(), ss = m->server_streaming();
  // clang-format off
  struct Kind {
    const char *kind, *run, *reactor, *params, *args, *lambda_params;
  };
  static const Kind kKinds[] = {  // by client_streaming * 2 + server_streaming
      {"kUnary", "RunCallbackUnary", "::rpc::ServerUnaryReactor",
       "const $Request$* /*request*/, $Response$* /*response*/",
       "c, req, resp", ", const $Request$* req, $Response$* resp"},
      {"kServerStreaming", "RunCallbackServerStreaming",
       "::rpc::ServerWriteReactor<$Response$>",
       "const $Request$* /*request*/", "c, req", ", const $Request$* req"},
      {"kClientStreaming", "RunCallbackClientStreaming",
       "::rpc::ServerReadReactor<$Request$>",
       "$Response$* /*response*/", "c, resp", ", $Response$* resp"},
      {"kBidiStreaming", "RunCallbackBidiStreaming",
       "::rpc::ServerBidiReactor<$Request$, $Response$>", "", "c", ""},
  };
  // clang-format on
  const Kind& k = kKinds[(cs ? 2 : 0) + (ss ? 1 : 0)];
  v["kind"] = k.kind;
  v["run"] = k.run;
  v["reactor"] = k.reactor;
  v["params"] = k.params;
  v["args"] = k.args;
  v["lambda_params"] = k.lambda_params;
  // Expand the nested variables first.
  for (const char* key : {"reactor", "params", "lambda_params"}) {
    std::string text = v[key];
    for (const char* name : {"Request", "Response"}) {
      const std::string var = std::string("$") + name + "$";
      for (size_t pos; (pos = text.find(var)) != std::string::npos;) {
        text.replace(pos, var.size(), v[name]);
      }
    }
    v[key] = text;
  }
  v["sep"] = v["params"].empty() ? "" : ",\n    ";
  p->Print(v,
           "\ntemplate <class BaseClass>\n"
           "class WithCallbackMethod_$Method$ : public BaseClass {\n"
           " public:\n"
           "  WithCallbackMethod_$Method$() {\n"
           "    this->AddCallbackMethod(\n"
           "        \"$path$\", ::rpc::RpcType::$kind$,\n"
           "        [this](std::shared_ptr<::rpc::internal::ServerCall> call) "
           "{\n"
           "          ::rpc::internal::$run$<$Request$, $Response$>(\n"
           "              std::move(call),\n"
           "              [this](::rpc::CallbackServerContext* c"
           "$lambda_params$) {\n"
           "                return this->$Method$($args$);\n"
           "              });\n"
           "        });\n"
           "  }\n"
           "  ~WithCallbackMethod_$Method$() override = default;\n"
           "  // Disabled: this method is served by the reactor form below.\n");
  p->Print(v, ("  ::rpc::Status $Method$" + SyncParams(m) +
               " final {\n"
               "    return ::rpc::Status(::rpc::StatusCode::UNIMPLEMENTED, "
               "\"\");\n"
               "  }\n")
                  .c_str());
  p->Print(v,
           "  virtual $reactor$* $Method$(\n"
           "      ::rpc::CallbackServerContext* context$sep$$params$) {\n");
  if (!cs && !ss) {
    p->Print(
        "    ::rpc::ServerUnaryReactor* r = context->DefaultReactor();\n"
        "    r->Finish(::rpc::Status(::rpc::StatusCode::UNIMPLEMENTED, "
        "\"\"));\n"
        "    return r;\n");
  } else {
    p->Print(
        v,
        "    (void)context;\n"
        "    return new ::rpc::internal::FinishOnlyReactor<$reactor$>(\n"
        "        ::rpc::Status(::rpc::StatusCode::UNIMPLEMENTED, \"\"));\n");
  }
  p->Print("  }\n};\n");
}

void PrintHeaderService(Printer* p, const ServiceDescriptor* service) {
  p->Print("class $Service$ final {\n public:\n", "Service", service->name());
  p->Indent();
  p->Print("static constexpr char service_full_name[] = \"$name$\";\n\n",
           "name", service->full_name());

  // Stub.
  p->Print(
      "class Stub {\n"
      " public:\n"
      "  explicit Stub(std::shared_ptr<::rpc::ChannelInterface> channel)\n"
      "      : channel_(std::move(channel)) {}\n");
  p->Indent();
  for (int i = 0; i < service->method_count(); ++i) {
    const MethodDescriptor* m = service->method(i);
    Vars v = MethodVars(service, m);
    if (!m->client_streaming() && !m->server_streaming()) {
      p->Print(v,
               "::rpc::Status $Method$(::rpc::ClientContext* context,\n"
               "    const $Request$& request, $Response$* response);\n");
    } else if (!m->client_streaming()) {
      p->Print(v,
               "std::unique_ptr<::rpc::ClientReader<$Response$>> $Method$(\n"
               "    ::rpc::ClientContext* context, const $Request$& "
               "request);\n");
    } else if (!m->server_streaming()) {
      p->Print(v,
               "std::unique_ptr<::rpc::ClientWriter<$Request$>> $Method$(\n"
               "    ::rpc::ClientContext* context, $Response$* response);\n");
    } else {
      p->Print(v,
               "std::unique_ptr<::rpc::ClientReaderWriter<$Request$, "
               "$Response$>>\n"
               "$Method$(::rpc::ClientContext* context);\n");
    }
  }
  // Callback forms of every method (grpc++'s stub->async()).
  p->Print(
      "\n// Callback forms (rpc/client_callback.h): return at once; the\n"
      "// reactions (and `done`) run on the channel's loop thread and must\n"
      "// not block.\n"
      "class Async {\n"
      " public:\n"
      "  explicit Async(Stub* stub) : stub_(stub) {}\n");
  p->Indent();
  for (int i = 0; i < service->method_count(); ++i) {
    const MethodDescriptor* m = service->method(i);
    Vars v = MethodVars(service, m);
    if (!m->client_streaming() && !m->server_streaming()) {
      p->Print(v,
               "void $Method$(::rpc::ClientContext* context,\n"
               "    const $Request$* request, $Response$* response,\n"
               "    std::function<void(::rpc::Status)> done);\n"
               "void $Method$(::rpc::ClientContext* context,\n"
               "    const $Request$* request, $Response$* response,\n"
               "    ::rpc::ClientUnaryReactor* reactor);\n");
    } else if (!m->client_streaming()) {
      p->Print(v,
               "void $Method$(::rpc::ClientContext* context,\n"
               "    const $Request$* request,\n"
               "    ::rpc::ClientReadReactor<$Response$>* reactor);\n");
    } else if (!m->server_streaming()) {
      p->Print(v,
               "void $Method$(::rpc::ClientContext* context,\n"
               "    $Response$* response,\n"
               "    ::rpc::ClientWriteReactor<$Request$>* reactor);\n");
    } else {
      p->Print(v,
               "void $Method$(::rpc::ClientContext* context,\n"
               "    ::rpc::ClientBidiReactor<$Request$, $Response$>* "
               "reactor);\n");
    }
  }
  p->Outdent();
  p->Print(
      "\n private:\n"
      "  Stub* const stub_;\n"
      "};\n"
      "Async* async() { return &async_; }\n");
  p->Outdent();
  p->Print(
      "\n private:\n"
      "  std::shared_ptr<::rpc::ChannelInterface> channel_;\n"
      "  Async async_{this};\n"
      "};\n\n"
      "static std::unique_ptr<Stub> NewStub(\n"
      "    std::shared_ptr<::rpc::ChannelInterface> channel) {\n"
      "  return std::make_unique<Stub>(std::move(channel));\n"
      "}\n\n");

  // Service.
  p->Print(
      "class Service : public ::rpc::Service {\n"
      " public:\n"
      "  Service();\n"
      "  ~Service() override;\n\n");
  p->Indent();
  for (int i = 0; i < service->method_count(); ++i) {
    const MethodDescriptor* m = service->method(i);
    Vars v = MethodVars(service, m);
    if (!m->client_streaming() && !m->server_streaming()) {
      p->Print(v,
               "virtual ::rpc::Status $Method$(::rpc::ServerContext* "
               "context,\n"
               "    const $Request$* request, $Response$* response);\n");
    } else if (!m->client_streaming()) {
      p->Print(v,
               "virtual ::rpc::Status $Method$(::rpc::ServerContext* "
               "context,\n"
               "    const $Request$* request,\n"
               "    ::rpc::ServerWriter<$Response$>* writer);\n");
    } else if (!m->server_streaming()) {
      p->Print(v,
               "virtual ::rpc::Status $Method$(::rpc::ServerContext* "
               "context,\n"
               "    ::rpc::ServerReader<$Request$>* reader, $Response$* "
               "response);\n");
    } else {
      p->Print(v,
               "virtual ::rpc::Status $Method$(::rpc::ServerContext* "
               "context,\n"
               "    ::rpc::ServerReaderWriter<$Response$, $Request$>* "
               "stream);\n");
    }
  }
  p->Outdent();
  p->Print("};\n");

  // The callback form (rpc/server_callback.h): WithCallbackMethod_M turns
  // one method of its base into a reactor-returning virtual (grpc++'s
  // mixins); CallbackService has every method in that form.
  for (int i = 0; i < service->method_count(); ++i) {
    PrintCallbackMixin(p, MethodVars(service, service->method(i)),
                       service->method(i));
  }
  std::string callback_service = "Service";
  for (int i = service->method_count() - 1; i >= 0; --i) {
    callback_service = "WithCallbackMethod_" + service->method(i)->name() +
                       "<" + callback_service + ">";
  }
  p->Print(
      "\n// Every method in callback form: override the ones you serve; the "
      "others\n// answer UNIMPLEMENTED.\n"
      "using CallbackService = $base$;\n",
      "base", callback_service);
  p->Outdent();
  p->Print("};\n\n");
}

void PrintSourceService(Printer* p, const ServiceDescriptor* service) {
  Vars sv = {{"Service", service->name()}};
  // Stub methods.
  for (int i = 0; i < service->method_count(); ++i) {
    const MethodDescriptor* m = service->method(i);
    Vars v = MethodVars(service, m);
    if (!m->client_streaming() && !m->server_streaming()) {
      p->Print(v,
               "::rpc::Status $Service$::Stub::$Method$(\n"
               "    ::rpc::ClientContext* context, const $Request$& request,\n"
               "    $Response$* response) {\n"
               "  return ::rpc::BlockingUnaryCall(channel_, \"$path$\", "
               "context,\n"
               "                                  request, response);\n"
               "}\n\n"
               "void $Service$::Stub::Async::$Method$(\n"
               "    ::rpc::ClientContext* context, const $Request$* request,\n"
               "    $Response$* response, std::function<void(::rpc::Status)> "
               "done) {\n"
               "  ::rpc::internal::CallbackUnaryCall(stub_->channel_, "
               "\"$path$\", context,\n"
               "      request, response, std::move(done));\n"
               "}\n\n"
               "void $Service$::Stub::Async::$Method$(\n"
               "    ::rpc::ClientContext* context, const $Request$* request,\n"
               "    $Response$* response, ::rpc::ClientUnaryReactor* reactor) "
               "{\n"
               "  ::rpc::internal::BindClientReactor(stub_->channel_, "
               "\"$path$\", context,\n"
               "      ::rpc::internal::ClientReactorKind::kUnary, request, "
               "response, reactor);\n"
               "}\n\n");
    } else if (!m->client_streaming()) {
      p->Print(v,
               "std::unique_ptr<::rpc::ClientReader<$Response$>>\n"
               "$Service$::Stub::$Method$(::rpc::ClientContext* context,\n"
               "    const $Request$& request) {\n"
               "  return std::make_unique<::rpc::ClientReader<$Response$>>(\n"
               "      channel_, \"$path$\", context, request);\n"
               "}\n\n"
               "void $Service$::Stub::Async::$Method$(\n"
               "    ::rpc::ClientContext* context, const $Request$* request,\n"
               "    ::rpc::ClientReadReactor<$Response$>* reactor) {\n"
               "  ::rpc::internal::BindClientReactor(stub_->channel_, "
               "\"$path$\", context,\n"
               "      ::rpc::internal::ClientReactorKind::kServerStreaming, "
               "request, nullptr,\n"
               "      reactor);\n"
               "}\n\n");
    } else if (!m->server_streaming()) {
      p->Print(v,
               "std::unique_ptr<::rpc::ClientWriter<$Request$>>\n"
               "$Service$::Stub::$Method$(::rpc::ClientContext* context,\n"
               "    $Response$* response) {\n"
               "  return std::make_unique<::rpc::ClientWriter<$Request$>>(\n"
               "      channel_, \"$path$\", context, response);\n"
               "}\n\n"
               "void $Service$::Stub::Async::$Method$(\n"
               "    ::rpc::ClientContext* context, $Response$* response,\n"
               "    ::rpc::ClientWriteReactor<$Request$>* reactor) {\n"
               "  ::rpc::internal::BindClientReactor(stub_->channel_, "
               "\"$path$\", context,\n"
               "      ::rpc::internal::ClientReactorKind::kClientStreaming, "
               "nullptr, response,\n"
               "      reactor);\n"
               "}\n\n");
    } else {
      p->Print(v,
               "std::unique_ptr<::rpc::ClientReaderWriter<$Request$, "
               "$Response$>>\n"
               "$Service$::Stub::$Method$(::rpc::ClientContext* context) {\n"
               "  return std::make_unique<\n"
               "      ::rpc::ClientReaderWriter<$Request$, $Response$>>(\n"
               "      channel_, \"$path$\", context);\n"
               "}\n\n"
               "void $Service$::Stub::Async::$Method$(\n"
               "    ::rpc::ClientContext* context,\n"
               "    ::rpc::ClientBidiReactor<$Request$, $Response$>* reactor) "
               "{\n"
               "  ::rpc::internal::BindClientReactor(stub_->channel_, "
               "\"$path$\", context,\n"
               "      ::rpc::internal::ClientReactorKind::kBidi, nullptr, "
               "nullptr, reactor);\n"
               "}\n\n");
    }
  }
  // Service constructor: one AddMethod per RPC.
  p->Print(sv, "$Service$::Service::Service() {\n");
  p->Indent();
  for (int i = 0; i < service->method_count(); ++i) {
    const MethodDescriptor* m = service->method(i);
    Vars v = MethodVars(service, m);
    if (!m->client_streaming() && !m->server_streaming()) {
      p->Print(v,
               "AddMethod(\"$path$\", ::rpc::RpcType::kUnary,\n"
               "          [this](::rpc::ServerContext* ctx) {\n"
               "            return ::rpc::internal::RunUnary<$Request$, "
               "$Response$>(\n"
               "                ctx, [this](::rpc::ServerContext* c, const "
               "$Request$* req,\n"
               "                            $Response$* resp) {\n"
               "                  return $Method$(c, req, resp);\n"
               "                });\n"
               "          });\n");
    } else if (!m->client_streaming()) {
      p->Print(v,
               "AddMethod(\"$path$\", ::rpc::RpcType::kServerStreaming,\n"
               "          [this](::rpc::ServerContext* ctx) {\n"
               "            return ::rpc::internal::RunServerStreaming<"
               "$Request$,\n"
               "                                                      "
               "$Response$>(\n"
               "                ctx, [this](::rpc::ServerContext* c, const "
               "$Request$* req,\n"
               "                            ::rpc::ServerWriter<$Response$>* "
               "w) {\n"
               "                  return $Method$(c, req, w);\n"
               "                });\n"
               "          });\n");
    } else if (!m->server_streaming()) {
      p->Print(v,
               "AddMethod(\"$path$\", ::rpc::RpcType::kClientStreaming,\n"
               "          [this](::rpc::ServerContext* ctx) {\n"
               "            return ::rpc::internal::RunClientStreaming<"
               "$Request$,\n"
               "                                                      "
               "$Response$>(\n"
               "                ctx, [this](::rpc::ServerContext* c,\n"
               "                            ::rpc::ServerReader<$Request$>* "
               "r,\n"
               "                            $Response$* resp) {\n"
               "                  return $Method$(c, r, resp);\n"
               "                });\n"
               "          });\n");
    } else {
      p->Print(v,
               "AddMethod(\"$path$\", ::rpc::RpcType::kBidiStreaming,\n"
               "          [this](::rpc::ServerContext* ctx) {\n"
               "            return ::rpc::internal::RunBidiStreaming<"
               "$Request$,\n"
               "                                                    "
               "$Response$>(\n"
               "                ctx,\n"
               "                [this](::rpc::ServerContext* c,\n"
               "                       ::rpc::ServerReaderWriter<$Response$,"
               " $Request$>* s) {\n"
               "                  return $Method$(c, s);\n"
               "                });\n"
               "          });\n");
    }
  }
  p->Outdent();
  p->Print(sv, "}\n\n$Service$::Service::~Service() = default;\n\n");
  // Default handlers.
  for (int i = 0; i < service->method_count(); ++i) {
    const MethodDescriptor* m = service->method(i);
    Vars v = MethodVars(service, m);
    if (!m->client_streaming() && !m->server_streaming()) {
      p->Print(v,
               "::rpc::Status $Service$::Service::$Method$(\n"
               "    ::rpc::ServerContext*, const $Request$*, $Response$*) {\n");
    } else if (!m->client_streaming()) {
      p->Print(v,
               "::rpc::Status $Service$::Service::$Method$(\n"
               "    ::rpc::ServerContext*, const $Request$*,\n"
               "    ::rpc::ServerWriter<$Response$>*) {\n");
    } else if (!m->server_streaming()) {
      p->Print(v,
               "::rpc::Status $Service$::Service::$Method$(\n"
               "    ::rpc::ServerContext*, ::rpc::ServerReader<$Request$>*,\n"
               "    $Response$*) {\n");
    } else {
      p->Print(v,
               "::rpc::Status $Service$::Service::$Method$(\n"
               "    ::rpc::ServerContext*,\n"
               "    ::rpc::ServerReaderWriter<$Response$, $Request$>*) {\n");
    }
    p->Print(
        "  return ::rpc::Status(::rpc::StatusCode::UNIMPLEMENTED, \"\");\n"
        "}\n\n");
  }
}

}  // namespace

bool RpcGenerator::Generate(
    const FileDescriptor* file, const std::string& /*parameter*/,
    google::protobuf::compiler::GeneratorContext* context,
    std::string* /*error*/) const {
  const std::string base = StripProto(file->name());
  const std::string package = file->package();
  {
    std::unique_ptr<google::protobuf::io::ZeroCopyOutputStream> out(
        context->Open(base + ".rpc.pb.h"));
    Printer p(out.get(), '$');
    p.Print(
        "// Generated by protoc-gen-rpc from $file$. DO NOT EDIT.\n\n"
        "#ifndef $guard$\n#define $guard$\n\n"
        "#include <functional>\n#include <memory>\n#include <utility>\n\n"
        "#include \"$base$.pb.h\"\n#include \"rpc/rpc.h\"\n\n",
        "file", file->name(), "guard", HeaderGuard(base), "base", base);
    OpenNamespaces(&p, package);
    for (int i = 0; i < file->service_count(); ++i) {
      PrintHeaderService(&p, file->service(i));
    }
    CloseNamespaces(&p, package);
    p.Print("\n#endif  // $guard$\n", "guard", HeaderGuard(base));
  }
  {
    std::unique_ptr<google::protobuf::io::ZeroCopyOutputStream> out(
        context->Open(base + ".rpc.pb.cc"));
    Printer p(out.get(), '$');
    p.Print(
        "// Generated by protoc-gen-rpc from $file$. DO NOT EDIT.\n\n"
        "#include \"$base$.rpc.pb.h\"\n\n",
        "file", file->name(), "base", base);
    OpenNamespaces(&p, package);
    for (int i = 0; i < file->service_count(); ++i) {
      PrintSourceService(&p, file->service(i));
    }
    CloseNamespaces(&p, package);
  }
  return true;
}

}  // namespace codegen
}  // namespace rpc
