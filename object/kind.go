package object

// KindOf is the kind of the objects T holds, for a type of this package that holds one
// kind ("Pod" for *Pod, ...), or "" for one that holds any (*Raw) or a type it does not
// know. informer.For checks it against the resource's kind, so that a cache of Pods is
// never filled with ConfigMaps.
func KindOf[T Object]() string {
	switch any(*new(T)).(type) {
	case *Pod:
		return "Pod"
	case *ReplicaSet:
		return "ReplicaSet"
	case *Deployment:
		return "Deployment"
	case *Lease:
		return "Lease"
	}
	return ""
}
