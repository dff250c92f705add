package main

import (
	"strings"
	"testing"

	"github.com/kinformer/kinformer/listwatch"
)

// TestLoadConfigFallsBackToTheServiceAccount: with no kubeconfig anywhere, a process in a
// pod uses its ServiceAccount; outside a pod it says how to give it a kubeconfig.
func TestLoadConfigFallsBackToTheServiceAccount(t *testing.T) {
	for _, tc := range []struct {
		name, serviceHost, want string
	}{
		{"outside a pod", "", "no kubeconfig"},
		// The ServiceAccount's files are absent here: the error shows the in-cluster path was taken.
		{"in a pod", "10.0.0.1", "in-cluster service-account token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", t.TempDir())
			t.Setenv("KUBECONFIG", "")
			t.Setenv("KUBERNETES_SERVICE_HOST", tc.serviceHost)
			t.Setenv("KUBERNETES_SERVICE_PORT", "443")
			_, err := loadConfig("", "", listwatch.EncodingJSON)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("loadConfig: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
