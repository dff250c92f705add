package indexer

// CountByIndex returns how many objects each value of index name holds: what a sharded
// process publishes as its load (objects by namespace, with NamespaceIndex). It reads
// the index's sets' sizes, without listing an object. An unknown index counts nothing.
func (ix *Indexer[T]) CountByIndex(name string) map[string]int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if name == NamespaceIndex && ix.funcs[name] != nil {
		out := make(map[string]int, len(ix.items.byNamespace))
		for ns, names := range ix.items.byNamespace {
			out[ns] = len(names)
		}
		return out
	}
	idx := ix.indices[name]
	out := make(map[string]int, len(idx))
	for v, keys := range idx {
		out[v] = len(keys)
	}
	return out
}
