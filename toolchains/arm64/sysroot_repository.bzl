"""The arm64 sysroot's absolute path, for //toolchains/arm64.

deploy/arm64/sysroot.sh builds the sysroot outside the repository (Debian's
arm64 packages, unpacked): $TRACEHEALTH_ARM64_SYSROOT, or by default
$HOME/.cache/tracehealth-arm64/sysroot. This rule writes that path into
@arm64_sysroot//:path.bzl as SYSROOT. Only the arm64 toolchain loads it, so
x86-64 builds never evaluate it.
"""

def _impl(rctx):
    path = rctx.os.environ.get("TRACEHEALTH_ARM64_SYSROOT", "")
    if not path:
        path = rctx.os.environ.get("HOME", "/root") + "/.cache/tracehealth-arm64/sysroot"
    rctx.file("BUILD.bazel", "exports_files([\"path.bzl\"])\n")
    rctx.file("path.bzl", "SYSROOT = %r\n" % path)

arm64_sysroot_repository = repository_rule(
    implementation = _impl,
    environ = ["TRACEHEALTH_ARM64_SYSROOT", "HOME"],
    local = True,
)
