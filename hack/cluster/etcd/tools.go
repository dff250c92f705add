//go:build tools

// Package tools pins etcd so `go build` in this module builds it.
package tools

import _ "go.etcd.io/etcd/server/v3"
