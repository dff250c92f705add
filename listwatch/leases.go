package listwatch

// LeaseResource is the coordination.k8s.io/v1 leases resource, stable since Kubernetes
// 1.14, so that what holds Leases (leader election, shard groups) needs no discovery
// round trip to find it.
func LeaseResource() ResourceInfo {
	return ResourceInfo{
		GroupVersionResource: GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"},
		Kind:                 "Lease",
		SingularName:         "lease",
		Namespaced:           true,
	}
}
