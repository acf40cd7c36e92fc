#!/usr/bin/env bash
# Install, with apt-get, the tools nttgen's tests use when they are missing: gcc, clang-19 (with
# lld-19), clang-format-19, make, cmake and pkg-config (the generated build files), valgrind
# (with its headers), the AArch64 and RISC-V 64 cross
# compilers with their C libraries, and QEMU's user-mode emulators (NEON and RVV kernels run
# under qemu-aarch64 / qemu-riscv64). Without root (and no sudo) it only warns:
# the tests that need a missing tool then skip and print why (under CI=true they fail instead).
set -euo pipefail

need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v clang-19 >/dev/null 2>&1 || need+=(clang-19 lld-19)
command -v clang-format-19 >/dev/null 2>&1 || need+=(clang-format-19)
{ command -v valgrind >/dev/null 2>&1 && [ -f /usr/include/valgrind/memcheck.h ]; } || need+=(valgrind)
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v riscv64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-riscv64-linux-gnu libc6-dev-riscv64-cross)
{ command -v qemu-aarch64 >/dev/null 2>&1 && command -v qemu-riscv64 >/dev/null 2>&1; } || need+=(qemu-user)
command -v ld.lld-19 >/dev/null 2>&1 || need+=(lld-19)
command -v make >/dev/null 2>&1 || need+=(make)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)

if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo="sudo -n"
    else
        echo "install-toolchain: not root: please install ${need[*]} (tests needing them will skip)" >&2
        exit 0
    fi
fi
echo "install-toolchain: apt-get install ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
