#!/bin/sh
# install-deps.sh — install what txguard needs to build and to run its tests,
# from Debian 12's own packages. Run as root (or through sudo).
set -eu

if [ "$(id -u)" -ne 0 ]; then
	exec sudo "$0" "$@"
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	meson ninja-build pkg-config gcc clang libc6-dev \
	libseccomp-dev libyaml-dev libzstd-dev libarchive-dev libcriterion-dev \
	zstd tar git make sed perl python3 python3-jsonschema python3-pip curl openssl \
	attr util-linux procps busybox man-db groff-base zsh diffutils \
	iproute2 e2fsprogs bsdutils valgrind acl libcap2-bin \
	dpkg-dev debhelper fakeroot \
	>/dev/null
echo "install-deps: done"
