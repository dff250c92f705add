package leaderelection

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/listwatch"
)

func TestConfigValidation(t *testing.T) {
	client, err := listwatch.New(&listwatch.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	valid := Config{
		Client: client, Namespace: namespace, Name: leaseName, Identity: "a",
		Callbacks: Callbacks{OnStartedLeading: func(context.Context) {}},
	}
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string // "" for a valid config
	}{
		{"defaults", func(*Config) {}, ""},
		{"test timings", func(c *Config) {
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = leaseDuration, renewDeadline, retryPeriod
		}, ""},
		{"no client", func(c *Config) { c.Client = nil }, "Client is required"},
		{"no name", func(c *Config) { c.Name = "" }, "Namespace and Name are required"},
		{"no identity", func(c *Config) { c.Identity = "" }, "Identity is required"},
		{"no work", func(c *Config) { c.Callbacks.OnStartedLeading = nil }, "OnStartedLeading is required"},
		{"lease no longer than the renew deadline", func(c *Config) { c.LeaseDuration = DefaultRenewDeadline }, "LeaseDuration (10s) must be greater than RenewDeadline (10s)"},
		{"renew deadline within a jittered retry", func(c *Config) { c.RenewDeadline = 2400 * time.Millisecond }, "RenewDeadline (2.4s) must be greater than RetryPeriod with its jitter (2.4s)"},
		{"negative", func(c *Config) { c.RetryPeriod = -time.Second }, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid
			tt.change(&cfg)
			_, err := New(cfg)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("New: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("New error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
