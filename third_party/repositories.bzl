"""Every repository the project needs, for its own WORKSPACE and for a consumer's.

    load("@h2rpc//third_party:repositories.bzl", "h2rpc_dependencies")
    h2rpc_dependencies()

defines each third-party library over a Debian -dev package, and the local stand-ins
Bazel 4 asks for even in C++-only builds (rules_cc, rules_java, remote_coverage_tools),
all under the names their upstream projects use. A repository the WORKSPACE already
defined under one of those names is kept, so a consumer's own Abseil, protobuf or zlib
wins (it must provide the targets listed here). Replacing a library's call by an
upstream `http_archive` with the same name is the whole migration. Labels mirror
upstream's for the targets the project uses.
"""

load("//third_party:system_library.bzl", "system_library_repository")

def _stand_in_repository_impl(rctx):
    # The stand-in's files, found through a label of this repository, so the path is
    # right wherever the checkout is (a consumer's local_repository, or this
    # workspace itself) and nothing absolute is written down.
    here = rctx.path(rctx.attr._anchor).dirname
    src = here.get_child("bazel").get_child(rctx.attr.directory)
    if not src.exists:
        fail("@%s: %s is missing" % (rctx.attr.name, src))
    for entry in src.readdir():
        rctx.symlink(entry, entry.basename)

_stand_in_repository = repository_rule(
    implementation = _stand_in_repository_impl,
    local = True,
    attrs = {
        "directory": attr.string(mandatory = True, doc = "The folder under third_party/bazel/."),
        "_anchor": attr.label(default = Label("//third_party:repositories.bzl")),
    },
)

def _maybe(rule, name, **kwargs):
    """Defines `name` unless the WORKSPACE already did (the consumer's own wins)."""
    if not native.existing_rule(name):
        rule(name = name, **kwargs)

def _absl(name, modules = None):
    """'absl/x:y' -> pkg-config module 'absl_y' unless given."""
    return modules or ["absl_" + name.rpartition(":")[2]]

_ABSL_TARGETS = [
    "absl/algorithm:container",
    "absl/base:base",
    "absl/base:core_headers",
    "absl/base:endian",
    "absl/base:log_severity",
    "absl/cleanup:cleanup",
    "absl/container:btree",
    "absl/container:fixed_array",
    "absl/container:flat_hash_map",
    "absl/container:flat_hash_set",
    "absl/container:inlined_vector",
    "absl/container:node_hash_map",
    "absl/debugging:failure_signal_handler",
    "absl/debugging:stacktrace",
    "absl/debugging:symbolize",
    "absl/flags:flag",
    "absl/flags:parse",
    "absl/flags:usage",
    "absl/functional:any_invocable",
    "absl/functional:bind_front",
    "absl/functional:function_ref",
    "absl/hash:hash",
    "absl/memory:memory",
    "absl/numeric:bits",
    "absl/numeric:int128",
    "absl/random:bit_gen_ref",
    "absl/status:status",
    "absl/status:statusor",
    "absl/strings:cord",
    "absl/strings:str_format",
    "absl/strings:strings",
    "absl/synchronization:synchronization",
    "absl/time:time",
    "absl/types:any",
    "absl/types:optional",
    "absl/types:span",
    "absl/types:variant",
    "absl/utility:utility",
]

_ABSL_MODULE_OVERRIDES = {
    "absl/algorithm:container": ["absl_algorithm_container"],
    "absl/base:base": ["absl_base"],
    "absl/container:btree": ["absl_btree"],
    "absl/random:bit_gen_ref": ["absl_random_bit_gen_ref"],
    "absl/flags:flag": ["absl_flags"],
    "absl/flags:parse": ["absl_flags_parse"],
    "absl/flags:usage": ["absl_flags_usage"],
}

def h2rpc_dependencies():
    """Defines every repository the project needs, skipping those already defined."""

    # Bazel 4 resolves these even for C++-only builds; without them it would try to
    # download upstream's.
    for stand_in in ["rules_cc", "rules_java", "remote_coverage_tools"]:
        _maybe(_stand_in_repository, stand_in, directory = stand_in)

    absl_targets = {}
    for label in _ABSL_TARGETS:
        absl_targets[label] = _ABSL_MODULE_OVERRIDES.get(label) or _absl(label)

    # `absl/random:random` has its own module name.
    absl_targets["absl/random:random"] = ["absl_random_random"]
    _maybe(
        system_library_repository,
        "com_google_absl",
        debian_package = "libabsl-dev",
        required_headers = ["absl/status/statusor.h"],
        targets = absl_targets,
    )

    _maybe(
        system_library_repository,
        "com_google_protobuf",
        debian_package = "libprotobuf-dev libprotoc-dev protobuf-compiler",
        required_headers = [
            "google/protobuf/message.h",
            "google/protobuf/compiler/plugin.h",
        ],
        targets = {
            ":protobuf": ["protobuf"],
            ":protobuf_lite": ["protobuf-lite"],
            # libprotoc ships no pkg-config file.
            ":protoc_lib": ["-lprotoc", "protobuf"],
        },
        binaries = {":protoc": "/usr/bin/protoc"},
    )

    _maybe(
        system_library_repository,
        "com_github_cares_cares",
        debian_package = "libc-ares-dev",
        required_headers = ["ares.h"],
        targets = {":ares": ["libcares"]},
    )

    _maybe(
        system_library_repository,
        "openssl",
        debian_package = "libssl-dev",
        required_headers = ["openssl/ssl.h"],
        targets = {
            ":crypto": ["libcrypto"],
            ":ssl": ["libssl", "libcrypto"],
        },
        binaries = {":openssl": "/usr/bin/openssl"},
    )

    _maybe(
        system_library_repository,
        "zstd",
        debian_package = "libzstd-dev",
        required_headers = ["zstd.h"],
        targets = {":zstd": ["libzstd"]},
    )

    _maybe(
        system_library_repository,
        "zlib",
        debian_package = "zlib1g-dev",
        required_headers = ["zlib.h"],
        targets = {":zlib": ["zlib"]},
    )

    _maybe(
        system_library_repository,
        "com_google_googletest",
        debian_package = "libgtest-dev libgmock-dev",
        required_headers = ["gtest/gtest.h", "gmock/gmock.h"],
        targets = {
            # Upstream's :gtest carries gmock too.
            ":gtest": ["gmock", "gtest"],
            ":gtest_main": ["gmock", "gtest_main"],
        },
    )

    _maybe(
        system_library_repository,
        "com_google_benchmark",
        debian_package = "libbenchmark-dev",
        required_headers = ["benchmark/benchmark.h"],
        targets = {
            ":benchmark": ["benchmark"],
            # libbenchmark_main ships without a pkg-config file.
            ":benchmark_main": ["-lbenchmark_main", "benchmark"],
        },
    )

    _maybe(
        system_library_repository,
        "nlohmann_json",
        debian_package = "nlohmann-json3-dev",
        required_headers = ["nlohmann/json.hpp"],
        targets = {":json": []},
    )

    # Peers for tests and benchmarks only: testonly, so no library target can link them
    # (benchmark binaries that compare against them are testonly too).
    _maybe(
        system_library_repository,
        "com_github_grpc_grpc",
        debian_package = "libgrpc++-dev protobuf-compiler-grpc",
        required_headers = ["grpcpp/grpcpp.h"],
        targets = {":grpc++": ["grpc++", "protobuf"]},
        test_peer = True,
        binaries = {":grpc_cpp_plugin": "/usr/bin/grpc_cpp_plugin"},
    )

    _maybe(
        system_library_repository,
        "nghttp2",
        debian_package = "libnghttp2-dev",
        required_headers = ["nghttp2/nghttp2.h"],
        targets = {":nghttp2": ["libnghttp2"]},
        test_peer = True,
    )
