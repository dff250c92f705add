package informer

import (
	"context"
	"errors"
	"fmt"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/reflector"
)

// HasSynced reports whether the initial list has been processed into the cache.
func (inf *Informer[T]) HasSynced() bool {
	select {
	case <-inf.synced:
		return true
	default:
		return false
	}
}

// Synced is closed once HasSynced is true.
func (inf *Informer[T]) Synced() <-chan struct{} { return inf.synced }

// SyncStatus says whether the informer is synced and, if not, why not (its reflector's
// Status: LastError is the reason it is not synced yet, a 403 on list, an unknown
// resource...), and what went wrong past the reflector: objects the cache could not
// take, handlers stopped by a panic, cached objects changed in place.
type SyncStatus struct {
	Synced bool
	reflector.Status
	// Encoding is what the informer's lists and watches ask the apiserver for
	// (listwatch.Resource.Encoding): listwatch.EncodingProtobuf or EncodingJSON. The
	// server may still answer JSON to protobuf (a custom resource does). "" when its
	// ListerWatcher does not say (see encoder).
	Encoding listwatch.Encoding
	// StoreError is the newest failure to store an object (an *indexer.IndexError, which
	// names the key and the index), kept while LeftOut > 0: the objects that an index
	// function failed on. Each such key keeps its previous state in the cache (or stays
	// absent) until a later event for it can be stored.
	StoreError error
	LeftOut    int
	// StoppedHandlers are the handlers a panic has stopped, with the panic; the others
	// go on.
	StoppedHandlers []*HandlerPanic
	// Mutations counts the cached objects found changed in place (see
	// MutationDetector); LastMutation is the newest.
	Mutations    int
	LastMutation *Mutation
}

// Status returns the informer's sync status.
func (inf *Informer[T]) Status() SyncStatus { return inf.status(inf.reflector.Status()) }

// status is the informer's sync status with rs as its reflector's.
func (inf *Informer[T]) status(rs reflector.Status) SyncStatus {
	s := SyncStatus{Synced: inf.HasSynced(), Status: rs, Encoding: inf.encoding}
	inf.failures.fill(&s)
	return s
}

// encoder is implemented by a ListerWatcher that says what its reads ask the apiserver
// for, as listwatch.Resource does; the informer's Status carries it. Optional, so that
// fakes and wrappers need not implement it.
type encoder interface{ Encoding() listwatch.Encoding }

// OnStatus calls f on every transition of the informer's status: its reflector's (see
// reflector.Reflector.OnStatus: relists, backoffs, fallbacks, errors; not each event),
// the moment it has synced, an object left out of the cache or back in it, a handler
// stopped, a mutation found. f runs on the informer's goroutines (or on the caller of
// SetShard, for the ShardFiltering it resets) and must be quick.
// The returned function unregisters f.
func (inf *Informer[T]) OnStatus(f func(SyncStatus)) (remove func()) { return inf.statusFns.Add(f) }

func (inf *Informer[T]) forgetMetrics() {
	if inf.metrics != nil {
		inf.metrics.forget()
	}
}

// LastStoreSyncResourceVersion is the resourceVersion of the newest state the cache
// holds (see indexer.Indexer.LastStoreSyncResourceVersion): the last event applied, the
// last relist, or a bookmark, which moves it even when nothing changed. A controller that
// wrote an object at resourceVersion R reads a cache that has seen its write once this is
// at least R (object.CompareResourceVersion). "" before the first list.
func (inf *Informer[T]) LastStoreSyncResourceVersion() string {
	return inf.cache.LastStoreSyncResourceVersion()
}

// Syncer is anything WaitForSync can wait for: informers and handler registrations.
type Syncer interface {
	Synced() <-chan struct{}
}

// statuser is implemented by informers, to explain a timeout.
type statuser interface{ Status() SyncStatus }

// stopper is implemented by handler registrations: a handler stopped by a panic will
// never sync, and WaitForSync says so at once.
type stopper interface {
	Stopped() <-chan struct{}
	Err() error
}

// WaitForSync blocks until every syncer has synced, or ctx ends, or a handler among them
// is stopped by a panic before it synced. On ctx's end the error says which informers are
// not synced and why (their last error), instead of just "timed out". It waits on
// channels, without polling.
func WaitForSync(ctx context.Context, syncers ...Syncer) error {
	for _, s := range syncers {
		var stopped <-chan struct{}
		if st, ok := s.(stopper); ok {
			stopped = st.Stopped()
		}
		select {
		case <-s.Synced():
		case <-stopped:
			select {
			case <-s.Synced(): // it had synced before it stopped
			default:
				return fmt.Errorf("waiting for caches to sync: %w", s.(stopper).Err())
			}
		case <-ctx.Done():
			return notSynced(ctx, syncers)
		}
	}
	return nil
}

// notSynced explains, once ctx has ended, what is not synced and why.
func notSynced(ctx context.Context, syncers []Syncer) error {
	var errs []error
	for _, s := range syncers {
		select {
		case <-s.Synced():
			continue
		default:
		}
		name := "an informer"
		if n, ok := s.(interface{ Name() string }); ok && n.Name() != "" {
			name = n.Name()
		}
		if st, ok := s.(statuser); ok {
			status := st.Status()
			if status.LastError != nil {
				errs = append(errs, fmt.Errorf("%s not synced (%s): %w", name, status.State, status.LastError))
				continue
			}
			errs = append(errs, fmt.Errorf("%s not synced (%s)", name, status.State))
			continue
		}
		errs = append(errs, errors.New("a handler has not synced"))
	}
	return fmt.Errorf("waiting for caches to sync: %w: %w", ctx.Err(), errors.Join(errs...))
}
