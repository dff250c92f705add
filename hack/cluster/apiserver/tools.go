//go:build tools

// Package tools pins kube-apiserver so `go build` in this module builds it.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
