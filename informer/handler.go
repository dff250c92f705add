package informer

// Handler receives an informer's notifications, one at a time, in order, on its own
// goroutine. Objects are the cache's and shared: do not change them.
type Handler[T any] interface {
	// OnAdd: an object appeared. initial is true for objects that were in the cache when
	// the handler started receiving (the initial list, or the replay of a late handler).
	OnAdd(obj T, initial bool)
	// OnUpdate: an object changed (or a resync: old and new are then the same object).
	OnUpdate(oldObj, newObj T)
	// OnDelete: an object went away. finalStateUnknown means the deletion was noticed
	// by a relist and obj is the last state the cache knew, not the final one.
	OnDelete(obj T, finalStateUnknown bool)
}

// HandlerFuncs adapts functions to Handler; nil functions are skipped.
type HandlerFuncs[T any] struct {
	AddFunc    func(obj T, initial bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj T, finalStateUnknown bool)
}

// OnAdd calls AddFunc.
func (h HandlerFuncs[T]) OnAdd(obj T, initial bool) {
	if h.AddFunc != nil {
		h.AddFunc(obj, initial)
	}
}

// OnUpdate calls UpdateFunc.
func (h HandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if h.UpdateFunc != nil {
		h.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc.
func (h HandlerFuncs[T]) OnDelete(obj T, finalStateUnknown bool) {
	if h.DeleteFunc != nil {
		h.DeleteFunc(obj, finalStateUnknown)
	}
}
