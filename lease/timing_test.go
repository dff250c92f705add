package lease_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/lease"
)

func TestTimingValidate(t *testing.T) {
	tests := []struct {
		name     string
		timing   lease.Timing
		wantErrs []string // each a part of the error; none for a valid timing
	}{
		{"defaults", lease.Timing{}.WithDefaults(), nil},
		{"kube-controller-manager's", lease.Timing{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}, nil},
		{"short", lease.Timing{LeaseDuration: 1500 * time.Millisecond, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond}, nil},
		{"renew deadline just past a jittered retry", lease.Timing{LeaseDuration: 15 * time.Second, RenewDeadline: 2401 * time.Millisecond, RetryPeriod: 2 * time.Second}, nil},
		{"renew deadline at a jittered retry (client-go's bound)",
			lease.Timing{LeaseDuration: 15 * time.Second, RenewDeadline: 2400 * time.Millisecond, RetryPeriod: 2 * time.Second},
			[]string{"RenewDeadline (2.4s) must be greater than RetryPeriod with its jitter (2.4s)"}},
		{"lease as long as the renew deadline",
			lease.Timing{LeaseDuration: 10 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second},
			[]string{"LeaseDuration (10s) must be greater than RenewDeadline (10s)"}},
		{"lease shorter than the renew deadline",
			lease.Timing{LeaseDuration: 5 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second},
			[]string{"LeaseDuration (5s) must be greater than RenewDeadline (10s)"}},
		{"negative retry period",
			lease.Timing{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: -time.Second},
			[]string{"durations must not be negative"}},
		{"negative renew deadline",
			lease.Timing{LeaseDuration: 15 * time.Second, RenewDeadline: -time.Second, RetryPeriod: 2 * time.Second},
			[]string{"durations must not be negative", "RenewDeadline (-1s) must be greater than RetryPeriod with its jitter (2.4s)"}},
		{"zero without defaults", lease.Timing{},
			[]string{"LeaseDuration (0s) must be greater than RenewDeadline (0s)", "RenewDeadline (0s) must be greater than RetryPeriod with its jitter (0s)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.timing.Validate()
			if len(tt.wantErrs) == 0 {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors %q", tt.wantErrs)
			}
			for _, want := range tt.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate() = %v, want it to say %q", err, want)
				}
			}
			if got := strings.Count(err.Error(), "\n") + 1; got != len(tt.wantErrs) {
				t.Errorf("Validate() says %d things, want %d: %v", got, len(tt.wantErrs), err)
			}
		})
	}
}

func TestTimingWithDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   lease.Timing
		want lease.Timing
	}{
		{"zero", lease.Timing{}, lease.Timing{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}},
		{"some set", lease.Timing{LeaseDuration: time.Minute, RetryPeriod: time.Second},
			lease.Timing{LeaseDuration: time.Minute, RenewDeadline: lease.DefaultRenewDeadline, RetryPeriod: time.Second}},
		{"all set", lease.Timing{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: time.Second},
			lease.Timing{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: time.Second}},
		// Only zero means "the default": a negative duration is left for Validate to refuse.
		{"negative kept", lease.Timing{RetryPeriod: -time.Second},
			lease.Timing{LeaseDuration: lease.DefaultLeaseDuration, RenewDeadline: lease.DefaultRenewDeadline, RetryPeriod: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.in.WithDefaults()); d != "" {
				t.Errorf("WithDefaults() (-want +got):\n%s", d)
			}
		})
	}
}

func TestTimingSecondsAndJitter(t *testing.T) {
	tests := []struct {
		timing      lease.Timing
		wantSeconds int32
		wantJitter  time.Duration
	}{
		{lease.Timing{LeaseDuration: 15 * time.Second, RetryPeriod: 2 * time.Second}, 15, 400 * time.Millisecond},
		// Rounded up: the others waiting a little longer is safe, shorter is not.
		{lease.Timing{LeaseDuration: 1500 * time.Millisecond, RetryPeriod: 200 * time.Millisecond}, 2, 40 * time.Millisecond},
		{lease.Timing{LeaseDuration: time.Nanosecond}, 1, 0},
		{lease.Timing{LeaseDuration: 2*time.Second + time.Nanosecond, RetryPeriod: time.Second}, 3, 200 * time.Millisecond},
		{lease.Timing{}, 0, 0},
	}
	for _, tt := range tests {
		if got := tt.timing.Seconds(); got != tt.wantSeconds {
			t.Errorf("%+v.Seconds() = %d, want %d", tt.timing, got, tt.wantSeconds)
		}
		if got := tt.timing.MaxJitter(); got != tt.wantJitter {
			t.Errorf("%+v.MaxJitter() = %v, want %v", tt.timing, got, tt.wantJitter)
		}
	}
}
