"""with_suffix_test: proto.bzl's with_suffix over every label form a BUILD file writes.

The cases are evaluated when the package loads; the sh_test fails listing each wrong
answer (its arguments), and passes with none.
"""

load("//bazel:proto.bzl", "with_suffix")

_CASES = [
    (":x", ":x_pb"),
    ("x", "x_pb"),
    ("//pkg:x", "//pkg:x_pb"),
    ("//a/pkg", "//a/pkg:pkg_pb"),
    ("//:x", "//:x_pb"),
    ("@repo//pkg:x", "@repo//pkg:x_pb"),
    ("@repo//a/pkg", "@repo//a/pkg:pkg_pb"),
    ("@repo", "@repo//:repo_pb"),
    ("@repo//", "@repo//:repo_pb"),
]

def with_suffix_test(name, script):
    wrong = []
    for dep, want in _CASES:
        got = with_suffix(dep, "_pb")
        if got != want:
            wrong.append("with_suffix(%r) = %r, want %r" % (dep, got, want))

    # A Label stays a Label in its own repository and package.
    for dep, want in [("//pkg:x", "//pkg:x_pb"), ("@repo//a/pkg", "@repo//a/pkg:pkg_pb")]:
        got = with_suffix(Label(dep), "_pb")
        if type(got) != "Label" or got != Label(want):
            wrong.append("with_suffix(Label(%r)) = %r, want Label(%r)" % (dep, got, want))
    native.sh_test(
        name = name,
        size = "small",
        srcs = [script],
        args = ["'%s'" % w for w in wrong],
    )
