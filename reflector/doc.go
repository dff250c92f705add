// Package reflector keeps a store in step with the apiserver: it lists, then watches from
// the list's resourceVersion, and recovers from everything a watch meets.
//
// It is an explicit state machine (see State): Listing (or StreamingList) → Watching;
// a stream the server ends on time → Watching again from the last resourceVersion,
// without a relist; 410 Gone, "too large resource version", or an event over
// MaxFrameSize (lost, so resuming would meet it again) → Listing (a relist, at the newest
// state if the last one is compacted); a stream that worked for a second or more and then
// broke (a reset, a dead peer) → Watching again at once, from the last resourceVersion;
// any other failure (429, 5xx, refused connection, malformed frame, a watch closed within
// a second with no event) → BackingOff (exponential 800 ms → 30 s with jitter, reset
// after 2 minutes without failures or after a healthy stream, or the server's
// Retry-After when that is longer) → back where it failed. Every watch carries a random
// timeoutSeconds and an idle deadline, so a silently dead connection is noticed even
// over HTTP/1.1.
//
// Status says where it is and why it is not synced (the last error), so a cache that
// stays empty because of a 403 says so.
package reflector
