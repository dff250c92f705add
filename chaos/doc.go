// Package chaos is the reliability harness: it puts kinformer between a real
// kube-apiserver and a fault-injecting proxy, churns objects, injects faults from a
// seeded script, and checks at every quiet point that each cache and each handler's view
// equals what the apiserver holds.
//
// Proxy is the fault injector: an HTTPS proxy (its own certificate, HTTP/1.1 and HTTP/2)
// in front of the apiserver that, on command, resets every open connection mid-stream
// (TCP RST), blackholes connections (bytes vanish, no FIN: only an idle deadline or an
// HTTP/2 ping can notice), delays and fragments the bytes it sends, and answers requests
// with 429 (Retry-After) or 500. The test in this package adds what needs the control
// plane itself: kube-apiserver restarts (killed and started again on the same port) and
// etcd compaction (410 on watches, expired continue tokens), a slow handler, and, with
// the controllers running through the proxy too, Deployments that must reach their
// desired state without any ReplicaSet ever having more active pods than its spec.
//
// `make chaos` runs it for up to 15 minutes (at least 500 faults) and prints a report;
// `make test` runs a short version (at least 50 faults). TestLeak runs the engine twice
// in one process, through faults, and checks that a stopped engine leaves nothing
// behind: no goroutine, none of its parts, no heap the first run did not leave.
package chaos
