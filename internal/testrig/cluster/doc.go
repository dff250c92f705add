// Package cluster starts a real kube-apiserver backed by a real etcd on loopback, from
// binaries built by hack/cluster/build.sh, and tears them down: certificates, a static
// admin token, RBAC and a kubeconfig, so that a client reaches it as it would a cluster.
//
// The end-to-end tests and the chaos run use it to check the engine against the server
// it was written for, since the simulator (package apisim) is never a compatibility
// claim; the benchmark harness uses it for its real-apiserver plan, and make cluster
// starts one by hand. It is a test rig, not part of the engine.
package cluster
