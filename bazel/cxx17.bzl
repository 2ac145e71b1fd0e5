"""cxx17_required: fails the build at analysis when C++ compiles below C++17.

    cxx17_required(name = "cxx17")
    cc_library(name = "rpc", ..., deps = ["//bazel:cxx17", ...])

Bazel 4's default toolchain compiles C++ with `-std=c++0x`, so a workspace without
`--cxxopt=-std=c++17` would otherwise fail in some compile, far from the cause
(`'string_view' in namespace 'std' does not name a type`). The rule reads the C++
compile command line the configured toolchain gives (its own flags, then --copt and
--cxxopt, the order the compiler sees them) and fails, naming the .bazelrc line to
add, when its last `-std=` is older than C++17. No `-std=` at all means the
compiler's default, which this does not judge. Analysed in the exec configuration
(tools such as protoc-gen-rpc) it checks --host_cxxopt. --per_file_copt is not seen
(a rule is given no per-file flags): a -std=c++17 set only there still fails the check,
an older one set there passes it; the message says so.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

_BEFORE_CXX17 = ["98", "03", "0x", "11", "1y", "14"]

def _cxx17_required_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    features = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    variables = cc_common.create_compile_variables(
        feature_configuration = features,
        cc_toolchain = cc_toolchain,
        user_compile_flags = ctx.fragments.cpp.copts + ctx.fragments.cpp.cxxopts,
    )
    flags = cc_common.get_memory_inefficient_command_line(
        feature_configuration = features,
        action_name = "c++-compile",
        variables = variables,
    )
    std = [f for f in flags if f.startswith("-std=")]
    if std and std[-1].rpartition("++")[2] in _BEFORE_CXX17:
        tools = "/host" in ctx.bin_dir.path or "-exec-" in ctx.bin_dir.path
        fail(("h2rpc needs C++17, and C++ %s compiles with %s. Add this line to " +
              "your .bazelrc:\n    build --cxxopt=-std=c++17 --host_cxxopt=-std=c++17\n" +
              "(This check reads the toolchain's flags, --copt and --cxxopt, not " +
              "--per_file_copt: a -std= given there does not count.)") %
             ("for build tools (--host_cxxopt)" if tools else "(--cxxopt)", std[-1]))
    return [CcInfo()]

cxx17_required = rule(
    implementation = _cxx17_required_impl,
    attrs = {
        "_cc_toolchain": attr.label(default = Label("@bazel_tools//tools/cpp:current_cc_toolchain")),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)
