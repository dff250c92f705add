//go:build tools

// Package tools pins kube-apiserver (and kubectl, built only where the machine lacks it)
// so `go build` in this module builds them.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
