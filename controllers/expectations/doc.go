// Package expectations remembers the writes a controller has issued but its informer has
// not shown yet, so that a sync never acts twice on a stale cache.
//
// A controller that creates three pods cannot see them in its cache until the watch
// delivers them. If it synced again before that, it would count too few pods and create
// three more. So before issuing writes it records them (ExpectCreations, ExpectDeletions);
// its event handlers lower the record as the informer observes each pod (Observed...),
// and the controller also lowers it at once for calls that failed, which the informer
// will never show. While a record is unmet, Satisfied is false and a sync only updates
// status. A record older than the TTL (5 minutes, as kube-controller-manager's) counts as
// met, so a lost event cannot wedge a controller forever.
//
// Deletions are tracked by pod key, not only counted: a deletion observed for a pod this
// controller did not delete (a user's kubectl delete) must not lower the count.
//
// A sharded controller manager that hands namespaces to another process drops their
// records (ForgetNamespaces): this process will not observe what the other one does
// there, and an old record would hold back a sync if a namespace came back.
package expectations
