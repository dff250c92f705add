package controllers

import (
	"io"
	"log/slog"
	"time"

	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/workqueue"
)

// Options configure a controller of this module. Zero values pick the defaults.
type Options struct {
	// Recorder receives the controller's events; nil records none.
	Recorder *events.Recorder
	// QueueMetrics exports the work queue as workqueue_*{name=<controller>}.
	QueueMetrics *workqueue.Metrics
	// Metrics records syncs.
	Metrics *Metrics
	// Logger reports sync errors and dropped keys; nil is silent.
	Logger *slog.Logger
	// Namespace limits the controller to one namespace ("": all).
	Namespace string
	// ResyncPeriod, when set, looks at every object again that often even without a
	// change: a key dropped after its retries (or a write whose event was lost) is not
	// forgotten. kube-controller-manager's informers resync every 12 to 24 hours.
	ResyncPeriod time.Duration
	// Now is the clock for availability, conditions and deadlines (nil: time.Now).
	Now func() time.Time
	// CrashOnPanic makes a panic in a sync kill the process (after it is logged and
	// counted) instead of costing that one sync: see WorkerPool.CrashOnPanic.
	CrashOnPanic bool
	// Gate, when set, lets the controller sync only in the namespaces its process owns
	// (a sharded controller manager); nil syncs everywhere.
	Gate *Gate
}

// WithDefaults fills in the clock and a silent logger.
func (o Options) WithDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}
