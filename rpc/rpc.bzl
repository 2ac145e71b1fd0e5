"""rpc_cc_proto_library: messages and rpc:: service stubs from .proto files.

    load("//rpc:rpc.bzl", "rpc_cc_proto_library")

    rpc_cc_proto_library(
        name = "helloworld_rpc",
        srcs = ["helloworld.proto"],
    )

yields a cc_library `helloworld_rpc` with helloworld.pb.h (messages, protoc's C++
generator) and helloworld.rpc.pb.h (services, //rpc/codegen:protoc-gen-rpc),
depending on //rpc. `deps` are other rpc_cc_proto_library targets whose .proto
files these import, in any label form a BUILD file may write (":x", "//pkg:x",
"//pkg", "@repo//pkg:x", a Label: bazel/proto.bzl's with_suffix). The messages alone
are the cc_library `<name>_pb`.
"""

load("//bazel:proto.bzl", "proto_cc_library", "proto_plugin_cc_library", "with_suffix")

def rpc_cc_proto_library(name, srcs, deps = [], visibility = None, testonly = None):
    proto_cc_library(
        name = name + "_pb",
        srcs = srcs,
        deps = [with_suffix(d, "_pb") for d in deps],
        visibility = visibility,
        testonly = testonly,
    )
    proto_plugin_cc_library(
        name = name,
        proto = ":" + name + "_pb",
        plugin = Label("//rpc/codegen:protoc-gen-rpc"),
        plugin_name = "rpc",
        suffix = ".rpc.pb",
        deps = [Label("//rpc")] + deps,
        visibility = visibility,
        testonly = testonly,
    )
