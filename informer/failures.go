package informer

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// failures is what went wrong past the reflector, for the status: objects the cache
// could not take, handlers a panic stopped, and cached objects found changed in place.
// Each is also logged and counted where it happens; this keeps the state a status reads.
type failures struct {
	leftOutN atomic.Int32 // len(leftOut), read without the lock on every event

	mu           sync.Mutex
	leftOut      map[string]failure // key → why it is not in the cache in its newest state
	lastStore    error
	handlers     []*HandlerPanic
	mutations    int
	lastMutation *Mutation
}

func (f *failures) fill(s *SyncStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.LeftOut = len(f.leftOut)
	if s.LeftOut > 0 {
		s.StoreError = f.lastStore
	}
	s.StoppedHandlers = slices.Clone(f.handlers)
	s.Mutations, s.LastMutation = f.mutations, f.lastMutation
}

// failure is an object the cache could not take, and why.
type failure struct {
	err error
	obj any // the informer's T: the state left out
}

// storeFailed records that the cache could not take key's newest state, and reports
// whether the status changed. It is logged once per key and error, not at every event.
func (inf *Informer[T]) storeFailed(key string, obj T, err error) bool {
	if inf.metrics != nil {
		inf.metrics.storeError()
	}
	f := &inf.failures
	f.mu.Lock()
	defer f.mu.Unlock()
	if prev, ok := f.leftOut[key]; ok && prev.err.Error() == err.Error() {
		prev.obj = obj
		f.leftOut[key] = prev
		return false
	}
	if f.leftOut == nil {
		f.leftOut = map[string]failure{}
	}
	f.leftOut[key], f.lastStore = failure{err: err, obj: obj}, err
	f.leftOutN.Store(int32(len(f.leftOut)))
	inf.log.Warn("object left out of the cache: an index function failed on it; the cache keeps its previous state",
		"key", key, "err", err)
	return true
}

// storeRecovered notes that key's newest state is in the cache (or that it is gone), and
// reports whether the status changed.
func (inf *Informer[T]) storeRecovered(key string) bool {
	f := &inf.failures
	if f.leftOutN.Load() == 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.leftOut[key]; !ok {
		return false
	}
	delete(f.leftOut, key)
	f.leftOutN.Store(int32(len(f.leftOut)))
	inf.log.Info("object back in the cache in its newest state", "key", key)
	return true
}

// replaceFailures sets what a relist left out: exactly failed, as a relist is the whole
// state; within scope, for the relist of a part (failures outside it stand). It reports
// whether the status changed.
func (inf *Informer[T]) replaceFailures(failed map[string]failure, scope func(T) bool) bool {
	f := &inf.failures
	if len(failed) == 0 && f.leftOutN.Load() == 0 {
		return false
	}
	changed := false
	for key, fl := range failed {
		changed = inf.storeFailed(key, fl.obj.(T), fl.err) || changed
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for key, fl := range f.leftOut {
		if _, still := failed[key]; still {
			continue
		}
		if obj, ok := fl.obj.(T); scope == nil || ok && scope(obj) {
			delete(f.leftOut, key)
			changed = true
		}
	}
	f.leftOutN.Store(int32(len(f.leftOut)))
	return changed
}

// HandlerPanic is a panic raised by a handler. The informer stops delivering to that
// handler (its Registration's Stopped is closed and Err returns this) and to no other.
type HandlerPanic struct {
	// Handler is the handler's HandlerOptions.Name ("" when it has none).
	Handler string
	Value   any
	Stack   []byte
}

func (p *HandlerPanic) Error() string {
	return fmt.Sprintf("handler %q panicked and was stopped: %v", p.Handler, p.Value)
}

// handlerFailed takes a handler stopped by a panic out of the fan-out and reports it.
// It runs on the handler's goroutine, which holds no lock here.
func (inf *Informer[T]) handlerFailed(l *listener[T], p *HandlerPanic) {
	if inf.metrics != nil {
		inf.metrics.handlerPanic(p.Handler)
	}
	inf.mu.Lock()
	inf.listeners = slices.DeleteFunc(inf.listeners, func(x *listener[T]) bool { return x == l })
	inf.mu.Unlock()
	f := &inf.failures
	f.mu.Lock()
	f.handlers = append(f.handlers, p)
	f.mu.Unlock()
	inf.statusFns.Notify(inf.Status())
}

// mutationFound records a cached object found changed in place (see mutation.go).
func (inf *Informer[T]) mutationFound(m Mutation) {
	f := &inf.failures
	f.mu.Lock()
	f.mutations++
	f.lastMutation = &m
	f.mu.Unlock()
	inf.maps.Forget() // what was written may be shared with what decodes next
	inf.statusFns.Notify(inf.Status())
}
