#!/usr/bin/env bash
# Builds the real control plane (kube-apiserver and etcd) from the Go module proxy into a
# cache directory outside the checkout, keyed by version and build recipe, so fresh clones
# reuse the binaries. Idempotent: a binary that is already in the cache is not rebuilt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${KINFORMER_BIN_DIR:-$HOME/.cache/kinformer/bin}
kube_version=$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$here/apiserver/go.mod")
etcd_version=$(awk '$1=="require" && $2=="go.etcd.io/etcd/server/v3" {print $3}' "$here/etcd/go.mod")
# Bump when the way the binaries are built changes, so caches do not serve old builds.
recipe=r2
mkdir -p "$bin"

# Stamp kube-apiserver's version as a release build has it (clients read /version).
minor=$(echo "$kube_version" | cut -d. -f2)
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"

build() { # module-dir package output ldflags
  local out=$3
  if [ -x "$out" ]; then return 0; fi
  echo "building $(basename "$out") (first time only; several minutes)..." >&2
  (cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags="$4" -o "$out.tmp" "$2")
  mv "$out.tmp" "$out"
}

build "$here/etcd" go.etcd.io/etcd/server/v3 "$bin/etcd-$etcd_version" "-s -w"
build "$here/apiserver" k8s.io/kubernetes/cmd/kube-apiserver "$bin/kube-apiserver-$kube_version-$recipe" "$kube_ldflags"
ln -sf "etcd-$etcd_version" "$bin/etcd"
ln -sf "kube-apiserver-$kube_version-$recipe" "$bin/kube-apiserver"
# The tests drive kubectl as a real client. Machines of this kind ship one; where it is
# missing, build the matching version once (the Makefile puts $bin on PATH).
if ! command -v kubectl >/dev/null 2>&1 && [ ! -x "$bin/kubectl" ]; then
  build "$here/apiserver" k8s.io/kubernetes/cmd/kubectl "$bin/kubectl-$kube_version" "$kube_ldflags"
  ln -sf "kubectl-$kube_version" "$bin/kubectl"
fi
echo "$bin"
