// Package notify keeps the callbacks that want to hear of a value's changes: the
// OnStatus subscribers of a reflector and of an informer.
//
// It serves the data path from beside it rather than on it. No event goes through here:
// events reach handlers through each handler's buffer in package informer. What goes
// through here is the sync status, at its transitions: the reflector's state (listing,
// watching, backing off, the error that made it relist), and the informer's on top of it
// (synced, an object left out of the cache, a handler stopped, a mutation found). Notify
// calls the callbacks on the goroutine that made the change, outside the list's lock, so
// that a callback may add or remove callbacks; the reflector and the informer call it
// outside their own locks, so that a callback may call back into them.
package notify
