package listwatch

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// InClusterOptions locates what a pod's service account provides; zero values pick the
// standard environment and /var/run/secrets/kubernetes.io/serviceaccount.
type InClusterOptions struct {
	Getenv func(string) string
	Dir    string
}

// InClusterConfig builds the Config of a process running in a pod: the apiserver from
// KUBERNETES_SERVICE_HOST/PORT, the CA and namespace from the service-account directory,
// and the token from its file, re-read as it rotates.
func InClusterConfig(opts InClusterOptions) (*Config, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir := opts.Dir
	if dir == "" {
		dir = "/var/run/secrets/kubernetes.io/serviceaccount"
	}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, fmt.Errorf("not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
	}
	tokenFile := filepath.Join(dir, "token")
	if _, err := os.Stat(tokenFile); err != nil {
		return nil, fmt.Errorf("in-cluster service-account token: %w", err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("in-cluster CA: %w", err)
	}
	cfg := &Config{Host: "https://" + net.JoinHostPort(host, port), BearerTokenFile: tokenFile}
	cfg.TLS.CAData = ca
	if ns, err := os.ReadFile(filepath.Join(dir, "namespace")); err == nil {
		cfg.Namespace = strings.TrimSpace(string(ns))
	}
	return cfg, nil
}
